//! The hand-over of a busy lock, from outside: how long
//! from the moment the holder's command ends to the moment the waiter's
//! command starts, on one master and on three masters with `appendfsync
//! always`, with wake-ups (a release publishes, the waiter is subscribed)
//! and with polls only (the waiter pauses 50–250 ms between attempts, as
//! before wake-ups; the hidden flag `--wakeups off` turns the subscription
//! off, so both run the same binary in the same run).
//!
//! One round, for each setting in turn (so that a machine whose speed
//! drifts slows them alike): a holder `yaraus lock NAME -- sh -c '…'`
//! whose command waits for a file `go`; a waiter `yaraus lock NAME -- sh
//! -c 'date +%s%N > begun'` started once the holder's command runs, and
//! given time to be refused and to wait (its subscription seen on every
//! master with wake-ups, and 300 ms in any case, longer than the longest
//! poll pause, so that polls start at random phases); then `go` is
//! created, the holder's command writes `date +%s%N > ended` and exits,
//! and the figure is `begun − ended`. Both timestamps come from the same
//! `date` on the same clock, so each includes one fork of `date`.
//!
//! The herd: the same with five waiters at once, every one woken by each
//! release (wake-all, each with a random 0–5 ms spread). Its figures are
//! the first waiter's hand-over and the fifth's, i.e. the lock passing
//! through all five in turn.
//!
//! Figures go to stdout as a Markdown table (median and p90 over the
//! rounds). Nothing is asserted: speed is reported, never tested.
//!
//! Two more parts, each in its own file: `run` on a full pool, one server
//! and a Cluster of three masters (pool_handover.rs, `--rounds` too), and
//! the herd of 1–64 waiters on one lock, polling vs wake-all, with the
//! failed attempts per hand-over, which also writes
//! docs/figures/handover_waiters.csv (herd.rs, `--herd-rounds`, default 5).
//!
//! `cargo bench --bench handover -- --rounds N [--herd-rounds M] [--only
//! lock|run|herd]` (default 30 rounds, everything).

#[path = "../tests/common/mod.rs"]
mod common;
mod figures;
mod herd;
mod pool_handover;

use common::RedisServer;
use figures::{option, percentile, start_redis};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a waiter is given to be refused and settle into its wait
/// before the holder lets go: more than the longest poll pause (250 ms).
const SETTLE: Duration = Duration::from_millis(300);

/// Waiters behind one holder in the herd settings.
const HERD: usize = 5;

/// Bound on any one event of a round (a file appearing, a process ending).
const EVENT: Duration = Duration::from_secs(30);

/// One setting: the masters, and whether the waiter subscribes.
struct Setting {
    name: String,
    urls: Vec<String>,
    servers: usize,
    wakeups: bool,
    /// Waiters started at once behind the holder.
    waiters: usize,
}

fn lock(yaraus: &str, urls: &[String], wakeups: bool, script: String) -> Child {
    let mut c = Command::new(yaraus);
    c.arg("--quiet");
    for u in urls {
        c.args(["--redis", u]);
    }
    c.args(["lock", "bench-handover"])
        .args(wakeups_unless(wakeups))
        .args(["--", "sh", "-c", &script]);
    spawn_quiet(c, "lock")
}

/// The hidden flag that turns a waiter's wake-ups off (it only polls, as
/// before wake-ups existed) unless `wakeups`: the same binary either way.
fn wakeups_unless(wakeups: bool) -> &'static [&'static str] {
    if wakeups { &[] } else { &["--wakeups", "off"] }
}

/// Starts `c` with no standard streams. For every setting of this bench.
fn spawn_quiet(mut c: Command, what: &str) -> Child {
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn yaraus {what}: {e}"))
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + EVENT;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn exits(child: &mut Child, what: &str) {
    wait_for(what, || child.try_wait().unwrap().is_some());
}

fn nanos(path: &Path) -> i128 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn subscribed(server: &RedisServer, waiters: usize) -> bool {
    let (_, n): (String, i64) = server.query(&["PUBSUB", "NUMSUB", "yaraus:wake:bench-handover"]);
    n >= waiters as i64
}

/// One round under `s`: `begun − ended` for each waiter, in the order they
/// got the lock.
fn one_round(yaraus: &str, s: &Setting, servers: &[&RedisServer], dir: &Path) -> Vec<Duration> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let [started, go, ended] = ["started", "go", "ended"].map(|f| dir.join(f));
    let mut holder = lock(
        yaraus,
        &s.urls,
        true,
        format!(
            "{}; date +%s%N > {}",
            common::process::holds_until_go(&started, &go),
            ended.display()
        ),
    );
    wait_for("the holder's command", || started.exists());
    let begun: Vec<_> = (0..s.waiters)
        .map(|i| dir.join(format!("begun-{i}")))
        .collect();
    let mut waiters: Vec<Child> = begun
        .iter()
        .map(|b| {
            lock(
                yaraus,
                &s.urls,
                s.wakeups,
                format!("date +%s%N > {}", b.display()),
            )
        })
        .collect();
    let settled = Instant::now();
    if s.wakeups {
        wait_for("the waiters' subscriptions", || {
            servers.iter().all(|server| subscribed(server, s.waiters))
        });
    }
    std::thread::sleep(SETTLE.saturating_sub(settled.elapsed()));
    std::fs::write(&go, "").unwrap();
    exits(&mut holder, "the holder to exit");
    assert!(holder.wait().unwrap().success());
    for waiter in &mut waiters {
        exits(waiter, "a waiter to exit");
        assert!(waiter.wait().unwrap().success());
    }
    let end = nanos(&ended);
    let mut gaps: Vec<Duration> = begun
        .iter()
        .map(|b| Duration::from_nanos((nanos(b) - end).max(0) as u64))
        .collect();
    gaps.sort();
    gaps
}

/// A Markdown row `| label | median | p90 | max |` of hand-overs, in ms.
fn spread_row(label: &str, mut gaps: Vec<Duration>) -> String {
    gaps.sort();
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
    format!(
        "| {label} | {} | {} | {} |",
        ms(percentile(&gaps, 0.5)),
        ms(percentile(&gaps, 0.9)),
        ms(*gaps.last().unwrap())
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = option(&args, "--rounds").unwrap_or(30);
    let yaraus = env!("CARGO_BIN_EXE_yaraus");
    let only: Option<String> = option(&args, "--only");
    let wants = |what: &str| only.as_deref().is_none_or(|o| o == what);
    if wants("lock") {
        lock_handover(yaraus, rounds);
    }
    if wants("run") {
        pool_handover::measure(yaraus, rounds);
    }
    if wants("herd") {
        herd::sweep(yaraus, option(&args, "--herd-rounds").unwrap_or(5));
    }
}

/// The lock's hand-over, one waiter and the herd of five, 1 and 3 masters.
fn lock_handover(yaraus: &str, rounds: usize) {
    let one = start_redis(false);
    let three: Vec<RedisServer> = (0..3).map(|_| start_redis(true)).collect();
    let dir = std::env::temp_dir().join(format!("yaraus-handover-{}", std::process::id()));

    let mut settings = Vec::new();
    for waiters in [1, HERD] {
        for (wakeups, how) in [(false, "polls only (before)"), (true, "wake-ups")] {
            let herd = match waiters {
                1 => String::new(),
                n => format!(", {n} waiters"),
            };
            settings.push(Setting {
                name: format!("1 master, {how}{herd}"),
                urls: vec![one.url()],
                servers: 1,
                wakeups,
                waiters,
            });
            settings.push(Setting {
                name: format!("3 masters (appendfsync always), {how}{herd}"),
                urls: three.iter().map(RedisServer::url).collect(),
                servers: 3,
                wakeups,
                waiters,
            });
        }
    }
    let mut gaps: Vec<Vec<Vec<Duration>>> = settings.iter().map(|_| Vec::new()).collect();
    for _ in 0..rounds {
        for (s, gaps) in settings.iter().zip(&mut gaps) {
            let servers: Vec<&RedisServer> = if s.servers == 1 {
                vec![&one]
            } else {
                three.iter().collect()
            };
            gaps.push(one_round(yaraus, s, &servers, &dir));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);

    println!(
        "\n### Lock hand-over: holder's command ends → waiter's command starts ({rounds} rounds)\n"
    );
    println!("| setting | median | p90 | max |\n| --- | --- | --- | --- |");
    for (s, rounds) in settings.iter().zip(gaps) {
        // The first waiter's hand-over, and with a herd the last's.
        let mut which = vec![(0, String::new())];
        if s.waiters > 1 {
            which = vec![
                (0, ": the first".to_string()),
                (s.waiters - 1, format!(": the {}th", s.waiters)),
            ];
        }
        for (i, label) in which {
            let figures: Vec<Duration> = rounds.iter().map(|r| r[i]).collect();
            println!("{}", spread_row(&format!("{}{label}", s.name), figures));
        }
    }
}
