//! A holder's yaraus is frozen (SIGSTOP) for longer than `--expire`, then
//! continued. Only the yaraus process is stopped — not its child's group,
//! which a job-control stop would reach too — so the child keeps running
//! and nothing that yaraus itself does can stop it.
//!
//! How the child is nevertheless dead by the deadline (design point 5):
//! yaraus forks a watchdog process before anything else, in a process group
//! of its own, and the watchdog, not yaraus, starts the child. After each
//! successful renewal yaraus tells the watchdog the new deadline; the
//! watchdog arms its own timer on the boot clock and, when the deadline
//! minus `--kill-after` passes, sends SIGTERM to the child's group, then
//! SIGKILL at the deadline — by itself. Freezing yaraus freezes the news of
//! renewals, never the timer. So the test requires the child gone while
//! yaraus is still frozen, its last line before the fault + `--expire`
//! (no renewal can have been sent after the fault), then another client
//! holding the id or lock, still while yaraus is frozen; on SIGCONT, yaraus
//! finds its claim lost and exits 124.

use super::child::now_ns;
use super::common::RedisServer;
use super::common::process::proc_stat;
use super::figures::{Budget, Report, assert_no_overlap};
use super::harness::serial;
use super::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// How long the yaraus stays frozen beyond `--expire`, at least.
const BEYOND: Duration = Duration::from_millis(300);

#[test]
fn a_frozen_client_loses_its_child_to_the_watchdog_by_the_deadline() {
    let _serial = serial();
    let master = RedisServer::start();
    let mut fleet = fleet_on(&master);

    let budget = Budget::new(2);
    let mut report = Report::new("client-sigstop");
    while budget.more(report.trials) {
        let holders = fleet.wait_all_held();
        // One id holder and one lock holder, a different one each trial.
        let pick = |prefix: &str| {
            let all: Vec<_> = holders
                .values()
                .filter(|l| l.res.starts_with(prefix))
                .collect();
            all[report.trials % all.len()].clone()
        };
        let victims = [pick("id:"), pick("lock:")];
        let frozen: Vec<(usize, i32, usize)> = victims
            .iter()
            .map(|l| {
                let k = l.client;
                let pid = fleet.client_pid(k).expect("a holder's yaraus runs");
                (k, pid, fleet.exits(k).len())
            })
            .collect();
        let victim_pids: Vec<i32> = victims.iter().map(|l| l.pid).collect();
        let fault = now_ns();
        for &(_, pid, _) in &frozen {
            kill(Pid::from_raw(pid), Signal::SIGSTOP).expect("SIGSTOP yaraus");
            report.faults += 1;
        }
        for &(_, pid, _) in &frozen {
            super::harness::await_event("yaraus to stop", || {
                proc_stat(pid).is_some_and(|(s, _)| s == 'T')
            });
        }
        let (limit, _) =
            expect_dead_an_expiry_after(&mut fleet, "client frozen", &victim_pids, fault);
        // Others take the id and the lock while yaraus is still frozen.
        report
            .recoveries
            .push(fleet.wait_recovered(fault, &victim_pids));
        for &(k, pid, _) in &frozen {
            assert_eq!(
                proc_stat(pid).map(|(s, _)| s),
                Some('T'),
                "client {k}'s yaraus is no longer frozen"
            );
        }
        let resume = limit + BEYOND.as_nanos() as u64;
        std::thread::sleep(Duration::from_nanos(resume.saturating_sub(now_ns())));
        for &(_, pid, _) in &frozen {
            kill(Pid::from_raw(pid), Signal::SIGCONT).expect("SIGCONT yaraus");
        }
        for &(k, _, before) in &frozen {
            let code = fleet.wait_exit(k, before);
            assert_eq!(
                code, 124,
                "client {k}'s yaraus, continued after its deadline"
            );
        }
        report.trials += 1;
    }
    let outcome = fleet.finish();
    report.print(&outcome);
    assert_no_overlap("client frozen", &outcome);
}
