//! The herd: N waiters (1–64) queued on one
//! exclusive lock on one master, polling vs wake-all vs wake-one (the
//! default: a release wakes the first waiter of the queue), and what each
//! hand-over costs the server. Part of the `handover` bench. The three
//! policies are one binary: the hidden flags `--wakeups off` (polling) and
//! `--wakeups all` (no queue: every release wakes every waiter, each after
//! a random 0–5 ms).
//!
//! One round: a holder whose command waits for a file `go`; N waiters
//! `yaraus --ttl 60s lock NAME -- sh -c 'date > begun-i; date > ended-i'`
//! started at once; once every one of them has been refused at least once
//! (seen in the server's count of scripts run) and 300 ms more have passed
//! (so that polls start at random phases), `go` is created. The lock then
//! passes through all N in turn; each hand-over is the next waiter's
//! `begun` minus the previous holder's `ended` (the holder's, then each
//! waiter's in the order they ran). The figure is the median over every
//! hand-over of every round.
//!
//! Failed attempts per hand-over come from `INFO commandstats`
//! (`cmdstat_evalsha` calls from `go` to the last waiter's exit): an
//! uncontended lock costs `c` scripts (acquire, release) and a refused
//! attempt `r` (its acquire, and the undo of what it might have
//! taken), both measured first, so a round of N waiters ran
//! `(calls − 1 − N c) / r` refused attempts (the 1: the holder's release),
//! spread over its N hand-overs. The fallback polls of the waiters (50–250
//! ms) count too: they are part of what waiting costs.
//!
//! Writes `docs/figures/handover_waiters.csv` (`series,x,y`: series
//! `polling`, `wake-all` or `wake-one`, x the waiters, y the median
//! hand-over in ms) and `docs/figures/herd_refusals.csv` (y the failed
//! attempts per hand-over), and prints a Markdown table of both.

use crate::common::RedisServer;
use crate::common::lock::scripts_run;
use crate::figures::percentile;
use crate::{exits, nanos, wait_for};
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

const NAME: &str = "bench-herd";
const WAITERS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

/// How the waiters of a round are woken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Policy {
    Polling,
    WakeAll,
    WakeOne,
}

impl Policy {
    const ALL: [Policy; 3] = [Policy::Polling, Policy::WakeAll, Policy::WakeOne];

    fn name(self) -> &'static str {
        match self {
            Policy::Polling => "polling",
            Policy::WakeAll => "wake-all",
            Policy::WakeOne => "wake-one",
        }
    }

    /// The hidden flag that sets it (wake-one is the default).
    fn flags(self) -> &'static [&'static str] {
        match self {
            Policy::Polling => &["--wakeups", "off"],
            Policy::WakeAll => &["--wakeups", "all"],
            Policy::WakeOne => &[],
        }
    }
}

fn lock(yaraus: &str, url: &str, policy: Policy, extra: &[&str], script: &str) -> Child {
    let mut c = Command::new(yaraus);
    c.args(["--quiet", "--redis", url, "lock", "--ttl", "60s", NAME])
        .args(extra)
        .args(policy.flags())
        .args(["--", "sh", "-c", script]);
    crate::spawn_quiet(c, "lock")
}

fn finished(mut child: Child) -> i32 {
    exits(&mut child, "a lock to exit");
    child.wait().unwrap().code().unwrap_or(-1)
}

/// `(c, r)`: scripts of an uncontended lock, and of one refused attempt.
fn calibrate(yaraus: &str, server: &RedisServer, dir: &Path) -> (u64, u64) {
    // Once first, so that the scripts are loaded.
    finished(lock(yaraus, &server.url(), Policy::WakeOne, &[], "true"));
    let before = scripts_run(server);
    finished(lock(yaraus, &server.url(), Policy::WakeOne, &[], "true"));
    let c = scripts_run(server) - before;
    let (started, go) = (dir.join("started"), dir.join("go"));
    let holder = lock(
        yaraus,
        &server.url(),
        Policy::WakeOne,
        &[],
        &crate::common::process::holds_until_go(&started, &go),
    );
    wait_for("the holder's command", || started.exists());
    let before = scripts_run(server);
    assert_eq!(
        finished(lock(
            yaraus,
            &server.url(),
            Policy::WakeOne,
            &["--wait", "0"],
            "true"
        )),
        75
    );
    let r = scripts_run(server) - before;
    std::fs::write(&go, "").unwrap();
    finished(holder);
    (c, r)
}

/// One round: every hand-over, and the scripts the server ran.
fn round(
    yaraus: &str,
    server: &RedisServer,
    n: usize,
    policy: Policy,
    (_, r): (u64, u64),
    dir: &Path,
) -> (Vec<Duration>, u64) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let [started, go, ended] = ["started", "go", "ended"].map(|f| dir.join(f));
    let url = server.url();
    let start = scripts_run(server);
    let holder = lock(
        yaraus,
        &url,
        policy,
        &[],
        &format!(
            "{}; date +%s%N > {}",
            crate::common::process::holds_until_go(&started, &go),
            ended.display()
        ),
    );
    wait_for("the holder's command", || started.exists());
    let files: Vec<_> = (0..n)
        .map(|i| (dir.join(format!("b{i}")), dir.join(format!("e{i}"))))
        .collect();
    let waiters: Vec<Child> = files
        .iter()
        .map(|(b, e)| {
            let script = format!("date +%s%N > {}; date +%s%N > {}", b.display(), e.display());
            lock(yaraus, &url, policy, &[], &script)
        })
        .collect();
    // Every waiter refused once (the holder's acquire is one script).
    wait_for("every waiter to be refused", || {
        scripts_run(server) - start > n as u64 * r
    });
    std::thread::sleep(Duration::from_millis(300));
    // Counted from here: the hand-overs' own costs.
    let before = scripts_run(server);
    std::fs::write(&go, "").unwrap();
    assert_eq!(finished(holder), 0);
    for w in waiters {
        assert_eq!(finished(w), 0);
    }
    let calls = scripts_run(server) - before;
    let mut runs: Vec<(i128, i128)> = files.iter().map(|(b, e)| (nanos(b), nanos(e))).collect();
    runs.sort();
    let mut previous = nanos(&ended);
    let gaps = runs
        .iter()
        .map(|&(begun, end)| {
            let gap = Duration::from_nanos((begun - previous).max(0) as u64);
            previous = end;
            gap
        })
        .collect();
    (gaps, calls)
}

/// The sweep: `rounds` rounds of each setting, taking turns.
pub fn sweep(yaraus: &str, rounds: usize) {
    let server = crate::figures::start_redis(false);
    let dir = std::env::temp_dir().join(format!("yaraus-herd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cr = calibrate(yaraus, &server, &dir);
    let settings: Vec<(usize, Policy)> = WAITERS
        .iter()
        .flat_map(|&n| Policy::ALL.map(|p| (n, p)))
        .collect();
    let mut gaps: Vec<Vec<Duration>> = settings.iter().map(|_| Vec::new()).collect();
    let mut calls = vec![0u64; settings.len()];
    let started = Instant::now();
    for _ in 0..rounds {
        for (i, &(n, policy)) in settings.iter().enumerate() {
            let (g, c) = round(yaraus, &server, n, policy, cr, &dir);
            gaps[i].extend(g);
            calls[i] += c;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let (c, r) = cr;
    println!(
        "\n### The herd: N waiters on one lock, 1 master ({rounds} rounds, {:.0} s; an \
         uncontended lock ran {c} scripts, a refused attempt {r})\n",
        started.elapsed().as_secs_f64()
    );
    let header: String = Policy::ALL
        .iter()
        .map(|p| {
            format!(
                " {0}: median | p90 | failed attempts per hand-over |",
                p.name()
            )
        })
        .collect();
    println!("| waiters |{header}");
    println!("| --- |{}", " --- | --- | --- |".repeat(Policy::ALL.len()));
    let mut medians = vec![String::new(); Policy::ALL.len()];
    let mut refusals = medians.clone();
    for (row_i, chunk) in settings.chunks(Policy::ALL.len()).enumerate() {
        let n = chunk[0].0;
        let mut row = format!("| {n} |");
        for (k, &(_, policy)) in chunk.iter().enumerate() {
            let i = row_i * Policy::ALL.len() + k;
            let mut g = gaps[i].clone();
            g.sort();
            let median = percentile(&g, 0.5).as_secs_f64() * 1e3;
            // From `go` on: the holder's release (one script), each
            // waiter's acquire and release, and the refusals.
            let spent = ((n as u64 * c + 1) * rounds as u64) as f64;
            let failed = (calls[i] as f64 - spent) / r as f64 / (n * rounds) as f64;
            row += &format!(
                " {median:.1} ms | {:.1} ms | {failed:.1} |",
                percentile(&g, 0.9).as_secs_f64() * 1e3
            );
            let series = policy.name();
            medians[k] += &format!("{series},{n},{median:.2}\n");
            refusals[k] += &format!("{series},{n},{failed:.2}\n");
        }
        println!("{row}");
    }
    let figures = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/figures");
    std::fs::create_dir_all(&figures).unwrap();
    for (file, rows) in [
        ("handover_waiters.csv", medians),
        ("herd_refusals.csv", refusals),
    ] {
        let path = figures.join(file);
        std::fs::write(&path, format!("series,x,y\n{}", rows.concat())).unwrap();
        println!("\n(written to {})", path.display());
    }
}
