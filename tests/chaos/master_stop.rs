//! The master is frozen (SIGSTOP) for longer than `--expire`: nobody can
//! renew, nobody can take anything. Every holder's child must be killed by
//! its *local* deadline (design point 4: the instant before its last
//! successful renewal was sent, plus the lease, minus a drift margin), which
//! comes before the master's own expiry — so before anyone else can take the
//! id or lock once the master resumes. The test checks both: every holder's
//! child is gone, its last line before the fault + `--expire`, while the
//! master is still frozen; then the master resumes (SIGCONT) and the fleet
//! takes everything again.
//!
//! The master keeps its clock running while frozen: on SIGCONT the leases
//! have expired by its own `TIME`, and the requests that waited in its
//! sockets run late (a stale renewal extends a lease nobody uses; it only
//! delays that id's recovery).

use super::child::now_ns;
use super::common::RedisServer;
use super::figures::{Budget, Report, assert_no_overlap};
use super::harness::serial;
use super::*;

/// How long the master stays frozen beyond `--expire`.
const BEYOND: Duration = Duration::from_millis(300);

#[test]
fn a_master_frozen_longer_than_expire_gets_every_child_killed_by_its_deadline() {
    let _serial = serial();
    let master = RedisServer::start();
    let mut fleet = fleet_on(&master);

    let budget = Budget::new(2);
    let mut report = Report::new("master-sigstop");
    while budget.more(report.trials) {
        let holders = fleet.wait_all_held();
        let victims: Vec<i32> = holders.values().map(|l| l.pid).collect();
        let killed_before = fleet.killed();
        let fault = now_ns();
        master.sigstop();
        report.faults += 1;
        let (limit, dead) =
            expect_dead_an_expiry_after(&mut fleet, "master frozen", &victims, fault);
        assert!(
            dead < limit + BEYOND.as_nanos() as u64,
            "the children outlived the lease by more than {BEYOND:?}"
        );
        // Frozen for longer than the lease, whatever the children did.
        let resume = limit + BEYOND.as_nanos() as u64;
        std::thread::sleep(Duration::from_nanos(resume.saturating_sub(now_ns())));
        master.sigcont();
        report
            .recoveries
            .push(fleet.wait_recovered(fault, &victims));
        // Every holder's yaraus said so: exit 124.
        fleet.wait("every holder's yaraus to exit 124", common::EVENT, |f| {
            f.killed() >= killed_before + victims.len()
        });
        report.trials += 1;
    }
    let outcome = fleet.finish();
    report.print(&outcome);
    assert_no_overlap("master frozen", &outcome);
}
