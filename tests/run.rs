//! Integration tests of `yaraus run` against real redis-server processes and
//! real child processes.
//!
//! Nothing here sleeps and hopes: every test awaits an observable event (a
//! file the child writes, a key in Redis, a line in yaraus's log, a process
//! that disappears) with `wait_until`, whose timeout is only reached when the
//! test is going to fail anyway. The children are small `sh` scripts written
//! into a scratch directory; yaraus passes them `$D`, the path of that
//! directory, through its own environment.
//!
//! The only deliberate wait is in `sigkilled_yaraus_takes_its_child_with_it`,
//! which must outlive tokio's blocking-pool idle timeout to prove something.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::pool::{
    CLIENTS, IDS, NS, dec, enc, init_pool, owner, score, server_now, stat, wall_now,
};
use common::process::{
    Run, alive, live_members, proc_stat, read_pid, run_cmd, run_to_end, timings, with,
    yaraus_ancestor,
};
use common::pty::{on_a_pty, pty_available, shell_words};
use common::scratch::Scratch;
use common::{EVENT, RedisServer, ServerOptions, wait_until};
use nix::sys::signal::Signal;
use nix::unistd::Pid;

/// Short timings, safeguards off: the child starts at once.
const FAST: &[&str] = &timings("1s", "300ms");

// ----- the pool in Redis ---------------------------------------------------

/// The ids whose lease runs after the server's `TIME`, in score order.
fn leased_ids(server: &RedisServer) -> Vec<u64> {
    let now = server_now(server);
    let members: Vec<String> = server.query(&["ZRANGEBYSCORE", IDS, &format!("({now}"), "+inf"]);
    members.iter().map(|m| dec(m)).collect()
}

fn assert_leased_to(server: &RedisServer, id: u64, client: &str) {
    let now = server_now(server);
    let score = score(server, id).unwrap_or_else(|| panic!("id {id} is not in {IDS}"));
    assert!(
        score > now,
        "id {id} should be leased: score {score} <= TIME {now}"
    );
    assert_eq!(
        owner(server, id).as_deref(),
        Some(client),
        "owner of id {id}"
    );
}

/// Released: free now (score ≤ the server's `TIME`), owner left as it was.
fn assert_released(server: &RedisServer, id: u64, client: &str) {
    let now = server_now(server);
    let score = score(server, id).unwrap_or_else(|| panic!("id {id} is not in {IDS}"));
    assert!(
        score <= now,
        "id {id} should be released: score {score} > TIME {now}"
    );
    assert_eq!(
        owner(server, id).as_deref(),
        Some(client),
        "owner of id {id}"
    );
}

/// Leases `id` to `client` by hand, for `secs` seconds from the server's now.
fn hold_by_hand(server: &RedisServer, id: u64, client: &str, secs: f64) {
    let until = server_now(server) + secs;
    server.cmd(&["ZADD", IDS, &until.to_string(), &enc(id)]);
    server.cmd(&["HSET", CLIENTS, &enc(id), client]);
}

/// The keys `ns:ids` and `ns:clients`, dumped.
fn pool_keys(server: &RedisServer) -> BTreeMap<String, String> {
    let mut snap = server.snapshot();
    snap.retain(|k, _| k == IDS || k == CLIENTS);
    snap
}

// ===========================================================================
// Leasing: distinct ids, exhaustion, order, release.
// ===========================================================================

#[test]
fn fifty_concurrent_runs_hold_pairwise_distinct_ids() {
    const N: usize = 50;
    let server = RedisServer::start();
    init_pool(&server, 1, 1023);
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    // Each child records what it holds, then waits (holding it) for the barrier.
    let worker = scratch.script(
        "worker.sh",
        r#"echo "$YARAUS_WORKER_ID $YARAUS_CLIENT_ID" > "$D/held.$$.tmp"
mv "$D/held.$$.tmp" "$D/held.$$"
while [ ! -e "$D/barrier" ]; do sleep 0.2; done
"#,
    );
    // Long expiry: the property is distinctness, not renewal under load.
    let opts = [
        "--interval",
        "500ms",
        "--expire",
        "30s",
        "--kill-after",
        "1s",
        "--delay",
        "0",
        "--no-safeguards",
    ];
    let mut runs: Vec<Run> = (0..N)
        .map(|_| Run::start(&url, &scratch, &opts, &["sh", &worker]))
        .collect();

    let held_files = || -> Vec<String> {
        fs::read_dir(scratch.dir())
            .expect("read scratch")
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.starts_with("held.") && !n.ends_with(".tmp"))
            .collect()
    };
    wait_until(
        "all 50 children to record their id",
        Duration::from_secs(60),
        || {
            if let Some(r) = runs.iter_mut().find_map(|r| r.exited().then_some(r)) {
                panic!("{} exited early:\n{}", r.name, r.log());
            }
            held_files().len() >= N
        },
    );

    // All 50 children are alive now, each holding what it recorded.
    let mut held: BTreeMap<u64, String> = BTreeMap::new();
    let mut clients = BTreeSet::new();
    for file in held_files() {
        let line = scratch.wait_line(&file);
        let (id, client) = line.split_once(' ').expect("'id client'");
        let id: u64 = id.parse().expect("numeric id");
        assert!(
            held.insert(id, client.to_string()).is_none(),
            "id {id} is held by two children at once"
        );
        assert!(
            clients.insert(client.to_string()),
            "client id {client} given twice"
        );
    }
    assert!(runs.iter_mut().all(|r| !r.exited()), "a run ended early");
    // A fresh pool has every score at 0: the 50 smallest ids go first.
    assert_eq!(
        held.keys().copied().collect::<Vec<_>>(),
        (1..=N as u64).collect::<Vec<_>>()
    );
    for (&id, client) in &held {
        assert_leased_to(&server, id, client);
    }

    scratch.touch("barrier");
    for run in &mut runs {
        assert_eq!(run.wait(), 0, "{}", run.log());
    }
    for (&id, client) in &held {
        assert_released(&server, id, client);
    }
    assert!(leased_ids(&server).is_empty());
}

#[test]
fn exhausted_pool_with_wait_exits_75_and_leaves_the_pool_alone() {
    let server = RedisServer::start();
    init_pool(&server, 1, 2);
    hold_by_hand(&server, 1, "other-1", 3600.0);
    hold_by_hand(&server, 2, "other-2", 3600.0);
    let before = pool_keys(&server);
    let scratch = Scratch::new();

    let (code, run) = run_to_end(
        &server.url_ns(NS),
        &scratch,
        &with(FAST, &["--wait", "300ms"]),
        &["touch", &scratch.arg("ran")],
    );
    assert_eq!(code, 75, "{}", run.log());
    assert!(
        run.last_line().starts_with("yaraus: no id is free"),
        "{}",
        run.log()
    );
    // It waited and retried before giving up.
    assert!(run.log().contains("retrying in"), "{}", run.log());
    assert!(stat(&server, "get_id_no_available_id") >= 2);
    assert!(!scratch.exists("ran"), "the command ran without an id");
    assert_eq!(pool_keys(&server), before);
}

#[test]
fn a_waiting_run_gets_the_id_a_holder_releases() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    let holder_sh = scratch.script(
        "holder.sh",
        r#"echo "$YARAUS_WORKER_ID" > "$D/holder"
while [ ! -e "$D/go" ]; do sleep 0.05; done
"#,
    );
    let mut holder = Run::start(&url, &scratch, FAST, &["sh", &holder_sh]);
    assert_eq!(scratch.wait_line("holder"), "1");

    let mut waiter = Run::start(
        &url,
        &scratch,
        &with(FAST, &["--wait", "20s"]),
        &["sh", "-c", r#"echo "$YARAUS_WORKER_ID" > "$D/waiter""#],
    );
    waiter.wait_log("retrying in");
    assert!(!scratch.exists("waiter"));

    scratch.touch("go");
    assert_eq!(holder.wait(), 0);
    assert_eq!(waiter.wait(), 0, "{}", waiter.log());
    assert_eq!(scratch.wait_line("waiter"), "1");
}

#[test]
fn expired_ids_are_reused_oldest_free_first_smallest_on_ties() {
    let server = RedisServer::start();
    init_pool(&server, 1, 12);
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    // Everything leased to ghosts for an hour, except four expired leases:
    // B11 expired first; A9 and B10 at the same moment (the tie goes to 9,
    // the smaller id, although "A9" and "B10" differ in length); A2 last.
    for id in 1..=12 {
        hold_by_hand(&server, id, &format!("ghost-{id}"), 3600.0);
    }
    let now = server_now(&server);
    for (id, ago) in [(11, 200.0), (9, 100.0), (10, 100.0), (2, 50.0)] {
        server.cmd(&["ZADD", IDS, &(now - ago).to_string(), &enc(id)]);
    }

    let mut got = Vec::new();
    for round in 0..5 {
        let (code, run) = run_to_end(&url, &scratch, FAST, &["sh", "-c", "echo <> > got"]);
        assert_eq!(code, 0, "{}", run.log());
        let (client, id) = run.lease().expect("lease line");
        assert_eq!(scratch.wait_line("got"), id.to_string());
        if round == 0 {
            // The expired lease of ghost-11 now belongs to us.
            assert_released(&server, 11, &client);
        }
        got.push(id);
        fs::remove_file(scratch.path("got")).unwrap();
    }
    // A release makes an id the most recently freed: 11 comes back last.
    assert_eq!(got, [11, 9, 10, 2, 11]);
    assert_eq!(
        leased_ids(&server).into_iter().collect::<BTreeSet<_>>(),
        BTreeSet::from([1, 3, 4, 5, 6, 7, 8, 12]),
        "the ghosts' live leases were left alone"
    );
}

#[test]
fn id_is_released_at_exit_and_the_exit_code_is_passed_through() {
    let server = RedisServer::start();
    init_pool(&server, 1, 3);
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    let child = scratch.script(
        "child.sh",
        r#"echo "$YARAUS_WORKER_ID $YARAUS_CLIENT_ID" > "$D/who"
while [ ! -e "$D/go" ]; do sleep 0.05; done
exit 42
"#,
    );
    let mut run = Run::start(&url, &scratch, FAST, &["sh", &child]);
    let who = scratch.wait_line("who");
    let (id, client) = who.split_once(' ').unwrap();
    let id: u64 = id.parse().unwrap();
    assert_eq!(run.lease(), Some((client.to_string(), id)));
    assert_leased_to(&server, id, client);

    scratch.touch("go");
    assert_eq!(run.wait(), 42);
    assert_released(&server, id, client);
    assert!(
        run.last_line().ends_with(&format!("releasing id {id}...")),
        "{}",
        run.log()
    );

    for code in [0, 1, 3, 99, 123] {
        let (got, run) = run_to_end(&url, &scratch, FAST, &["sh", "-c", &format!("exit {code}")]);
        assert_eq!(got, code, "{}", run.log());
        let (client, id) = run.lease().unwrap();
        assert_released(&server, id, &client);
    }
    assert!(leased_ids(&server).is_empty());
}

#[test]
fn exec_failures_exit_127_and_126_and_release_the_id() {
    let server = RedisServer::start();
    init_pool(&server, 1, 2);
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    fs::write(scratch.path("not-executable"), "#!/bin/sh\necho hi\n").unwrap();
    fs::create_dir(scratch.path("a-directory")).unwrap();

    for (command, want) in [
        ("yaraus-test-no-such-command".to_string(), 127),
        (scratch.arg("missing-file"), 127),
        (scratch.arg("not-executable"), 126),
        (scratch.arg("a-directory"), 126),
    ] {
        let (code, run) = run_to_end(&url, &scratch, FAST, &[&command, "<>"]);
        assert_eq!(code, want, "{command}: {}", run.log());
        let last = run.last_line();
        assert!(
            last.starts_with(&format!("yaraus: cannot run '{command}'")),
            "{last}"
        );
        if want == 127 {
            assert!(last.contains("not found"), "{last}");
        }
        let (client, id) = run.lease().expect("the id was leased first");
        assert_released(&server, id, &client);
        assert!(
            leased_ids(&server).is_empty(),
            "{command}: an id stayed leased"
        );
    }
}

// ===========================================================================
// Signals and exit statuses.
// ===========================================================================

#[test]
fn child_killed_by_a_signal_exits_128_plus_n() {
    let server = RedisServer::start();
    init_pool(&server, 1, 2);
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    for (sig, n) in [("TERM", 15), ("KILL", 9), ("USR1", 10), ("SEGV", 11)] {
        let (code, run) = run_to_end(
            &url,
            &scratch,
            FAST,
            &["sh", "-c", &format!("kill -{sig} $$; sleep 5")],
        );
        assert_eq!(code, 128 + n, "SIG{sig}: {}", run.log());
        let (client, id) = run.lease().unwrap();
        assert_released(&server, id, &client);
    }
}

#[test]
fn forwarded_signals_reach_the_child_once_and_it_decides_the_exit_status() {
    let server = RedisServer::start();
    init_pool(&server, 1, 2);
    let scratch = Scratch::new();
    let child = scratch.script(
        "child.sh",
        r#"for s in INT TERM HUP QUIT USR1 USR2; do
  trap "echo $s >> \"\$D/got\"" $s
done
echo $$ > "$D/pid"
while [ ! -e "$D/stop" ]; do sleep 0.05; done
exit 7
"#,
    );
    let mut run = Run::start(&server.url_ns(NS), &scratch, FAST, &["sh", &child]);
    read_pid(&scratch, "pid");
    let sigs = [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
        Signal::SIGUSR1,
        Signal::SIGUSR2,
    ];
    for (i, sig) in sigs.iter().enumerate() {
        run.signal(*sig);
        scratch.wait_lines("got", i + 1);
    }
    scratch.touch("stop");
    assert_eq!(run.wait(), 7, "{}", run.log());
    // Each one arrived once, in order, and none stopped yaraus.
    assert_eq!(
        scratch.lines("got"),
        ["INT", "TERM", "HUP", "QUIT", "USR1", "USR2"]
    );
    let (client, id) = run.lease().unwrap();
    assert_released(&server, id, &client);
}

#[test]
fn forwarded_signals_that_kill_the_child_give_128_plus_n() {
    let server = RedisServer::start();
    init_pool(&server, 1, 2);
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    let child = scratch.script("child.sh", "echo $$ > \"$D/pid.$1\"\nexec sleep 1000\n");
    for sig in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
        Signal::SIGUSR1,
        Signal::SIGUSR2,
    ] {
        let name = sig.as_str();
        let mut run = Run::start(&url, &scratch, FAST, &["sh", &child, name]);
        let pid = read_pid(&scratch, &format!("pid.{name}"));
        run.signal(sig);
        assert_eq!(run.wait(), 128 + sig as i32, "{name}: {}", run.log());
        assert!(!alive(pid));
        let (client, id) = run.lease().unwrap();
        assert_released(&server, id, &client);
    }
}

#[test]
fn signal_while_waiting_for_an_id_exits_128_plus_n_and_leaves_ids_unchanged() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    hold_by_hand(&server, 1, "other", 3600.0);
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    for sig in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        let before = pool_keys(&server);
        let mut run = Run::start(&url, &scratch, FAST, &["touch", &scratch.arg("ran")]);
        run.wait_log("retrying in");
        run.signal(sig);
        assert_eq!(run.wait(), 128 + sig as i32, "{}", run.log());
        assert_eq!(pool_keys(&server), before);
        assert!(!scratch.exists("ran"));
        assert!(run.lease().is_none());
    }
}

#[test]
fn signal_during_the_delay_releases_the_id_and_never_starts_the_child() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let mut run = Run::start(
        &server.url_ns(NS),
        &scratch,
        &[
            "--interval",
            "100ms",
            "--expire",
            "1s",
            "--kill-after",
            "300ms",
            "--delay",
            "1m",
        ],
        &["touch", &scratch.arg("ran")],
    );
    run.wait_log("sleep 1m");
    let (client, id) = run.lease().unwrap();
    assert_leased_to(&server, id, &client);
    run.signal(Signal::SIGTERM);
    assert_eq!(run.wait(), 143, "{}", run.log());
    assert_released(&server, id, &client);
    assert!(!scratch.exists("ran"));
}

// ===========================================================================
// The child's command line, environment and log.
// ===========================================================================

#[test]
fn placeholder_is_replaced_in_every_argument_and_ids_are_in_the_env() {
    let server = RedisServer::start();
    init_pool(&server, 100, 200);
    let scratch = Scratch::new();
    let print = r#"printf '%s\n' "$0" "$@" > "$D/args"; env | grep '^YARAUS_' | sort > "$D/env""#;
    let (code, run) = run_to_end(
        &server.url_ns(NS),
        &scratch,
        FAST,
        &[
            "sh",
            "-c",
            print,
            "x<>",
            "a<>b",
            "<>",
            "<><>",
            "plain",
            "<",
            "-worker-id=<>",
        ],
    );
    assert_eq!(code, 0, "{}", run.log());
    let (client, id) = run.lease().unwrap();
    assert_eq!(id, 100);
    assert_eq!(
        scratch.lines("args"),
        [
            "x100",
            "a100b",
            "100",
            "100100",
            "plain",
            "<",
            "-worker-id=100"
        ]
    );
    assert_eq!(
        scratch.lines("env"),
        [
            format!("YARAUS_CLIENT_ID={client}"),
            "YARAUS_WORKER_ID=100".to_string()
        ]
    );
    assert_released(&server, 100, &client);
}

#[test]
fn a_custom_replacement_leaves_the_default_placeholder_alone() {
    let server = RedisServer::start();
    init_pool(&server, 7, 7);
    let scratch = Scratch::new();
    let (code, run) = run_to_end(
        &server.url_ns(NS),
        &scratch,
        &with(FAST, &["--replacement", "@ID@"]),
        &[
            "sh",
            "-c",
            r#"printf '%s\n' "$@" > "$D/args""#,
            "sh",
            "<>",
            "n=@ID@",
            "@ID@@ID@",
            "@ID",
        ],
    );
    assert_eq!(code, 0, "{}", run.log());
    assert_eq!(scratch.lines("args"), ["<>", "n=7", "77", "@ID"]);
}

#[test]
fn logs_one_timestamped_line_per_event_and_quiet_silences_them() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    // Values that pass the safeguards: no warning.
    let opts = [
        "--interval",
        "100ms",
        "--expire",
        "1s",
        "--kill-after",
        "300ms",
        "--delay",
        "500ms",
    ];
    let (code, run) = run_to_end(&url, &scratch, &opts, &["true"]);
    assert_eq!(code, 0);
    let log = run.log();
    let events: Vec<&str> = log
        .lines()
        .map(|l| {
            // 2026-01-02T03:04:05.678Z message
            let (stamp, msg) = l.split_once(' ').unwrap_or_else(|| panic!("{l}"));
            assert!(
                stamp.len() == 24 && stamp.as_bytes()[10] == b'T' && stamp.ends_with('Z'),
                "no timestamp: {l}"
            );
            msg
        })
        .collect();
    let (client, id) = run.lease().unwrap();
    assert_eq!(
        events,
        [
            "getting new id...".to_string(),
            format!("client id: {client}, id: {id}"),
            "sleep 500ms for making sure that the previous holder has stopped".to_string(),
            "starting...".to_string(),
            format!("releasing id {id}..."),
        ]
    );

    let (code, run) = run_to_end(&url, &scratch, &with(&opts, &["--quiet"]), &["true"]);
    assert_eq!(code, 0);
    assert_eq!(run.log(), "");
}

#[test]
fn unsafe_timings_are_raised_with_a_warning_unless_safeguards_are_off() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    let opts = [
        "--interval",
        "2s",
        "--expire",
        "500ms",
        "--kill-after",
        "100ms",
        "--delay",
        "0",
    ];
    let (code, run) = run_to_end(&url, &scratch, &opts, &["true"]);
    assert_eq!(code, 0, "{}", run.log());
    let log = run.log();
    assert_eq!(log.matches("WARNING").count(), 3, "{log}");
    // expire 1s, interval 500ms, so delay ≥ 2 × 500ms + 100ms.
    assert!(log.contains("sleep 1s 100ms for making sure"), "{log}");

    let (code, run) = run_to_end(
        &url,
        &scratch,
        &with(&opts, &["--no-safeguards"]),
        &["true"],
    );
    assert_eq!(code, 0, "{}", run.log());
    let log = run.log();
    assert!(!log.contains("WARNING"), "{log}");
    assert!(log.contains("safeguards are off"), "{log}");
    assert!(!log.contains("sleep "), "--delay 0 kept: {log}");
}

// ===========================================================================
// Losing the id: the child's group is killed, exit 124.
// ===========================================================================

#[test]
fn stolen_ownership_kills_the_group_within_interval_plus_kill_after() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let interval = Duration::from_millis(200);
    let kill_after = Duration::from_millis(500);
    // Scheduling slack on top of interval + kill-after; the expiry (30 s) is
    // far beyond it, so only the ownership check can explain a kill in time.
    let slack = Duration::from_secs(1);
    // The child ignores SIGTERM (so do the sleeps it starts): SIGKILL is needed.
    let child = scratch.script(
        "child.sh",
        r#"trap '' TERM
echo $$ > "$D/pid"
while :; do sleep 0.05; done
"#,
    );
    let mut run = Run::start(
        &server.url_ns(NS),
        &scratch,
        &[
            "--interval",
            "200ms",
            "--expire",
            "30s",
            "--kill-after",
            "500ms",
            "--delay",
            "0",
            "--no-safeguards",
        ],
        &["sh", &child],
    );
    let pid = read_pid(&scratch, "pid");
    let (_, id) = run.wait_lease();

    server.cmd(&["HSET", CLIENTS, &enc(id), "thief"]);
    let stolen = Instant::now();
    wait_until("the child's group to die", EVENT, || {
        !alive(pid) && live_members(pid).is_empty()
    });
    let gone = stolen.elapsed();
    assert!(
        gone >= kill_after,
        "killed after {gone:?}, before --kill-after {kill_after:?} had passed since SIGTERM"
    );
    assert!(
        gone <= interval + kill_after + slack,
        "killed only after {gone:?}"
    );
    assert_eq!(run.wait(), 124, "{}", run.log());
    let log = run.log();
    assert!(log.contains("now belongs to thief"), "{log}");
    assert!(log.contains("sending SIGKILL"), "{log}");
    // The thief's record is not touched by a release.
    assert_eq!(owner(&server, id).as_deref(), Some("thief"));
}

#[test]
fn ownership_lost_during_the_delay_never_starts_the_child() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let mut run = Run::start(
        &server.url_ns(NS),
        &scratch,
        &[
            "--interval",
            "100ms",
            "--expire",
            "30s",
            "--kill-after",
            "300ms",
            "--delay",
            "1m",
        ],
        &["touch", &scratch.arg("ran")],
    );
    run.wait_log("sleep 1m");
    let (_, id) = run.lease().unwrap();
    server.cmd(&["HSET", CLIENTS, &enc(id), "thief"]);
    assert_eq!(run.wait(), 124, "{}", run.log());
    assert!(
        run.last_line().contains("lost before the command started"),
        "{}",
        run.log()
    );
    assert!(!scratch.exists("ran"));
    assert_eq!(owner(&server, id).as_deref(), Some("thief"));
}

#[test]
fn a_grandchild_under_sh_dies_with_the_group_on_loss() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    // sh starts a grandchild that ignores SIGTERM, then waits for it.
    let child = scratch.script(
        "child.sh",
        r#"sh -c 'trap "" TERM; echo $$ > "$D/grandchild"; exec sleep 1000' &
echo $$ > "$D/pid"
wait
"#,
    );
    let mut run = Run::start(
        &server.url_ns(NS),
        &scratch,
        &timings("30s", "300ms"),
        &["sh", &child],
    );
    let pid = read_pid(&scratch, "pid");
    let grandchild = read_pid(&scratch, "grandchild");
    assert_eq!(proc_stat(grandchild).map(|(_, g)| g), Some(pid));
    let (_, id) = run.wait_lease();

    server.cmd(&["HSET", CLIENTS, &enc(id), "thief"]);
    assert_eq!(run.wait(), 124, "{}", run.log());
    wait_until("the grandchild to die", EVENT, || !alive(grandchild));
    assert!(!alive(pid));
    assert!(live_members(pid).is_empty());
}

#[test]
fn the_whole_group_gets_sigkill_kill_after_after_sigterm_even_if_the_leader_exits_first() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let kill_after = 1.0;
    // The leader takes most of --kill-after to shut down gracefully; its
    // grandchild ignores SIGTERM. The grandchild must get SIGKILL when
    // --kill-after has passed since the SIGTERM, not a --kill-after later.
    let child = scratch.script(
        "child.sh",
        r#"trap 'date +%s.%N > "$D/term"; sleep 0.8; exit 0' TERM
sh -c 'trap "" TERM; echo $$ > "$D/grandchild"; exec sleep 1000' &
echo $$ > "$D/pid"
while :; do sleep 0.05; done
"#,
    );
    let mut run = Run::start(
        &server.url_ns(NS),
        &scratch,
        &timings("30s", "1s"),
        &["sh", &child],
    );
    let pid = read_pid(&scratch, "pid");
    let grandchild = read_pid(&scratch, "grandchild");
    let (_, id) = run.wait_lease();

    server.cmd(&["HSET", CLIENTS, &enc(id), "thief"]);
    wait_until("the grandchild to die", EVENT, || !alive(grandchild));
    let dead = wall_now();
    assert_eq!(run.wait(), 124, "{}", run.log());
    let term: f64 = scratch.wait_line("term").parse().unwrap();
    // Scheduling slack: 0.5 s, less than the 0.8 s the leader took.
    assert!(
        dead - term < kill_after + 0.5,
        "the grandchild outlived the SIGTERM by {:.3}s (--kill-after {kill_after}s)",
        dead - term
    );
    assert!(!alive(pid));
    assert!(live_members(pid).is_empty());
}

#[test]
fn a_stopped_child_is_continued_so_that_it_can_handle_sigterm_on_loss() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let child = scratch.script(
        "child.sh",
        r#"trap 'echo TERM > "$D/term"; exit 0' TERM
echo $$ > "$D/pid"
while :; do sleep 0.05; done
"#,
    );
    let mut run = Run::start(
        &server.url_ns(NS),
        &scratch,
        &timings("30s", "5s"),
        &["sh", &child],
    );
    let pid = read_pid(&scratch, "pid");
    let (_, id) = run.wait_lease();
    nix::sys::signal::killpg(Pid::from_raw(pid), Signal::SIGSTOP).unwrap();
    wait_until("the child to stop", EVENT, || {
        proc_stat(pid).is_some_and(|(s, _)| s == 'T')
    });

    server.cmd(&["HSET", CLIENTS, &enc(id), "thief"]);
    assert_eq!(run.wait(), 124, "{}", run.log());
    // It handled the SIGTERM itself (a SIGKILL would have left no trace).
    assert_eq!(scratch.wait_line("term"), "TERM");
    assert!(!run.log().contains("sending SIGKILL"), "{}", run.log());
}

#[test]
fn the_child_starts_with_no_blocked_signals_and_default_dispositions() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    // grep is the child itself (no shell in between): it reports its own state.
    let (code, run) = run_to_end(
        &server.url_ns(NS),
        &scratch,
        FAST,
        &["grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"],
    );
    assert_eq!(code, 0, "{}", run.log());
    let out = run.output();
    let mask = |name: &str| -> u64 {
        let line = out
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in {out}"));
        u64::from_str_radix(line[name.len()..].trim(), 16).unwrap()
    };
    assert_eq!(mask("SigBlk:"), 0, "the child starts with signals blocked");
    // yaraus catches these (and Rust ignores SIGPIPE): the child must get
    // them with their default action. Others may be ignored by whoever
    // started the test, and are inherited as a shell would inherit them.
    let ignored = mask("SigIgn:");
    for sig in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
        Signal::SIGUSR1,
        Signal::SIGUSR2,
        Signal::SIGPIPE,
    ] {
        assert_eq!(ignored & (1 << (sig as u64 - 1)), 0, "{sig} is ignored");
    }
}

#[test]
fn processes_left_behind_by_the_child_are_stopped_before_the_release() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    // The child exits at once, leaving a SIGTERM-proof process in its group.
    let child = scratch.script(
        "child.sh",
        r#"sh -c 'trap "" TERM; echo $$ > "$D/grandchild"; exec sleep 1000' &
while [ ! -s "$D/grandchild" ]; do sleep 0.01; done
exit 0
"#,
    );
    let (code, run) = run_to_end(&server.url_ns(NS), &scratch, FAST, &["sh", &child]);
    assert_eq!(code, 0, "{}", run.log());
    let grandchild = read_pid(&scratch, "grandchild");
    wait_until("the left-behind process to die", EVENT, || {
        !alive(grandchild)
    });
    let log = run.log();
    let stopping = log
        .find("the child left processes in its group")
        .unwrap_or_else(|| panic!("{log}"));
    let releasing = log.find("releasing id").unwrap_or_else(|| panic!("{log}"));
    assert!(stopping < releasing, "released before stopping: {log}");
    let (client, id) = run.lease().unwrap();
    assert_released(&server, id, &client);
}

#[test]
fn redis_restarted_empty_kills_the_child_before_a_new_owner_starts_its_own() {
    let mut server = RedisServer::start();
    init_pool(&server, 1, 1);
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    let old_sh = scratch.script(
        "old.sh",
        r#"trap 'echo "old: SIGTERM" >> "$D/events"; exit 0' TERM
echo $$ > "$D/old.pid"
while :; do sleep 0.05; done
"#,
    );
    // The new owner records whether the old child is still running as it starts.
    let new_sh = scratch.script(
        "new.sh",
        r#"state=$(cut -d' ' -f3 "/proc/$OLD/stat" 2>/dev/null)
echo "new: started, old child ${state:-gone}" >> "$D/events"
"#,
    );
    // A long expiry: only the ownership check can stop the old child in time.
    let mut old = Run::start(&url, &scratch, &timings("30s", "300ms"), &["sh", &old_sh]);
    let old_pid = read_pid(&scratch, "old.pid");
    let (_, old_id) = old.wait_lease();

    server.restart_empty();
    init_pool(&server, 1, 1);
    // The new owner gets the same id at once, and waits the safeguarded
    // delay (2 × interval + kill-after) before starting its child.
    let mut cmd = run_cmd(
        &url,
        &scratch,
        &[
            "--interval",
            "100ms",
            "--expire",
            "30s",
            "--kill-after",
            "300ms",
        ],
        &["sh", &new_sh],
    );
    cmd.env("OLD", old_pid.to_string());
    let mut new = Run::spawn(cmd, &scratch);

    assert_eq!(old.wait(), 124, "{}", old.log());
    assert_eq!(new.wait(), 0, "{}", new.log());
    assert_eq!(new.lease().map(|(_, id)| id), Some(old_id));
    let events = scratch.lines("events");
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0], "old: SIGTERM");
    assert!(
        events[1] == "new: started, old child gone" || events[1] == "new: started, old child Z",
        "the new owner started while the old child ran: {events:?}"
    );
    assert!(old.log().contains("lost"), "{}", old.log());
}

#[test]
fn frozen_redis_kills_the_child_at_the_local_deadline() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let expire = 1.0;
    // The delay a new owner waits (the safeguard minimum 2 × interval + kill-after).
    let delay = 2.0 * 0.1 + 0.3;
    let child = scratch.script(
        "child.sh",
        r#"trap 'date +%s.%N > "$D/term"; exit 0' TERM
echo $$ > "$D/pid"
while :; do sleep 0.05; done
"#,
    );
    let mut run = Run::start(&server.url_ns(NS), &scratch, FAST, &["sh", &child]);
    let pid = read_pid(&scratch, "pid");
    let (_, id) = run.wait_lease();
    wait_until("a renewal", EVENT, || {
        stat(&server, "extend_ttl_success") >= 1
    });

    // The expiry the server holds now. A renewal that slips in before the
    // SIGSTOP can only make the real one later, so bounds from this one
    // are conservative on the side that matters (the upper one).
    let expiry = score(&server, id).unwrap();
    server.sigstop();
    wait_until("the child to die", EVENT, || !alive(pid));
    let dead = wall_now();
    assert_eq!(run.wait(), 124, "{}", run.log());
    server.sigcont();

    let term: f64 = scratch.wait_line("term").parse().unwrap();
    // Not killed while the lease was still good for a while...
    assert!(
        term >= expiry - expire / 2.0,
        "SIGTERM at {term}, long before the expiry {expiry}"
    );
    // ...and dead before a new owner could have started after the expiry.
    assert!(
        dead < expiry + delay,
        "child still alive at {dead}, after expiry {expiry} + delay {delay}"
    );
    assert!(
        run.log()
            .contains("no renewal succeeded before the lease ran out"),
        "{}",
        run.log()
    );
}

#[test]
fn sigkilled_yaraus_takes_its_child_with_it() {
    // tokio's blocking-pool threads exit after 10 s idle; a child forked from
    // one would get its PDEATHSIG then. It must outlive that.
    const BLOCKING_POOL_KEEP_ALIVE: Duration = Duration::from_secs(10);
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let child = scratch.script("child.sh", "echo $$ > \"$D/pid\"\nexec sleep 1000\n");
    let mut run = Run::start(&server.url_ns(NS), &scratch, FAST, &["sh", &child]);
    let pid = read_pid(&scratch, "pid");
    let (client, id) = run.wait_lease();

    thread::sleep(BLOCKING_POOL_KEEP_ALIVE + Duration::from_secs(1));
    assert!(alive(pid), "the child died while yaraus ran");
    assert!(!run.exited(), "{}", run.log());

    run.signal(Signal::SIGKILL);
    wait_until("the child to die with yaraus", EVENT, || !alive(pid));
    assert!(run.exited());
    // Nobody released it: the id stays ours until it expires.
    assert_eq!(owner(&server, id).as_deref(), Some(client.as_str()));
}

#[test]
fn sigkilled_yaraus_takes_the_childs_whole_group_with_it() {
    // PDEATHSIG reaches only the child; the guard process must kill the
    // background grandchild too.
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let child = scratch.script(
        "child.sh",
        "sleep 1000 &\necho $! > \"$D/gpid\"\necho $$ > \"$D/pid\"\nwait\n",
    );
    let run = Run::start(&server.url_ns(NS), &scratch, FAST, &["sh", &child]);
    let pid = read_pid(&scratch, "pid");
    let grandchild = read_pid(&scratch, "gpid");
    run.wait_lease();
    assert!(alive(pid) && alive(grandchild));

    run.signal(Signal::SIGKILL);
    wait_until("the child to die with yaraus", EVENT, || !alive(pid));
    wait_until("the grandchild to die with yaraus", EVENT, || {
        !alive(grandchild)
    });
}

// ===========================================================================
// Replication: WAIT for a majority of the replicas.
// ===========================================================================

fn master_and_replica() -> (RedisServer, RedisServer) {
    let master = RedisServer::start_with(ServerOptions {
        tcp: true,
        ..Default::default()
    });
    let replica = RedisServer::start_with(ServerOptions {
        replica_of: Some(&master),
        ..Default::default()
    });
    init_pool(&master, 1, 2);
    replica.wait_replica_synced(&master);
    (master, replica)
}

#[test]
fn with_a_replica_the_lease_is_replicated_before_the_child_starts() {
    let (master, replica) = master_and_replica();
    let scratch = Scratch::new();
    // The child looks at the replica itself the moment it starts.
    let child = scratch.script(
        "child.sh",
        r#"echo "$YARAUS_WORKER_ID" > "$D/id"
while [ ! -e "$D/go" ]; do sleep 0.05; done
"#,
    );
    let mut run = Run::start(&master.url_ns(NS), &scratch, FAST, &["sh", &child]);
    let id: u64 = scratch.wait_line("id").parse().unwrap();
    let (client, _) = run.lease().unwrap();
    // WAIT returned before the child started, so the replica has it already.
    assert_leased_to(&replica, id, &client);
    scratch.touch("go");
    assert_eq!(run.wait(), 0, "{}", run.log());
    assert_released(&master, id, &client);
}

#[test]
fn a_promoted_replica_does_not_hand_out_the_ids_its_dead_master_leased() {
    let (mut master, replica) = master_and_replica();
    let scratch = Scratch::new();
    let opts = &with(&timings("3s", "300ms"), &["--timeout", "300ms"]);
    let child = scratch.script(
        "child.sh",
        "echo \"$YARAUS_WORKER_ID\" >> \"$D/ids\"\nexec sleep 1000\n",
    );
    let mut a = Run::start(&master.url_ns(NS), &scratch, opts, &["sh", &child]);
    let mut b = Run::start(&master.url_ns(NS), &scratch, opts, &["sh", &child]);
    scratch.wait_lines("ids", 2);

    // The master dies; its replica is promoted in its place.
    master.sigkill();
    replica.promote();

    // Both leases were confirmed by the replica before the children started,
    // so the new master still has them, and a newcomer finds no free id.
    assert_eq!(leased_ids(&replica), vec![1, 2]);
    let (code, newcomer) = run_to_end(
        &replica.url_ns(NS),
        &scratch,
        &with(opts, &["--wait", "500ms"]),
        &["touch", &scratch.arg("newcomer-ran")],
    );
    assert_eq!(code, 75, "{}", newcomer.log());
    assert!(!scratch.exists("newcomer-ran"));

    // The old holders cannot reach their master: they kill their children at
    // their local deadline.
    assert_eq!(a.wait(), 124, "{}", a.log());
    assert_eq!(b.wait(), 124, "{}", b.log());
}

#[test]
fn with_a_stopped_replica_the_acquisition_is_released_and_retried() {
    let (master, replica) = master_and_replica();
    let url = master.url_ns(NS);
    let scratch = Scratch::new();
    replica.sigstop();

    // Within --wait: every attempt is released again, and the last failure
    // is reported as it is: Redis not available as required (69), not as a
    // full pool (75).
    let (code, run) = run_to_end(
        &url,
        &scratch,
        &with(FAST, &["--timeout", "300ms", "--wait", "1s"]),
        &["touch", &scratch.arg("ran")],
    );
    assert_eq!(code, 69, "{}", run.log());
    let log = run.log();
    assert!(
        log.matches("of the 1 replicas needed confirmed it; released it")
            .count()
            >= 2,
        "{log}"
    );
    assert!(
        run.last_line()
            .starts_with("yaraus: leased id 1 but only 0"),
        "{log}"
    );
    assert!(
        !scratch.exists("ran"),
        "the command ran on an unreplicated id"
    );
    assert!(leased_ids(&master).is_empty(), "an id was left leased");

    // Without --wait it keeps trying, and succeeds once the replica is back.
    let mut run = Run::start(
        &url,
        &scratch,
        &with(FAST, &["--timeout", "300ms"]),
        &["sh", "-c", r#"echo "$YARAUS_WORKER_ID" > "$D/id""#],
    );
    run.wait_log("released it; retrying in");
    assert!(!scratch.exists("id"));
    replica.sigcont();
    assert_eq!(run.wait(), 0, "{}", run.log());
    assert_eq!(scratch.wait_line("id"), "1");
}

#[test]
fn a_replica_stopped_mid_run_gets_the_child_killed_at_the_deadline() {
    let (master, replica) = master_and_replica();
    let scratch = Scratch::new();
    let child = scratch.script(
        "child.sh",
        r#"trap 'exit 0' TERM
echo $$ > "$D/pid"
while :; do sleep 0.05; done
"#,
    );
    let mut run = Run::start(
        &master.url_ns(NS),
        &scratch,
        &with(FAST, &["--timeout", "300ms"]),
        &["sh", &child],
    );
    let pid = read_pid(&scratch, "pid");
    replica.sigstop();
    assert_eq!(run.wait(), 124, "{}", run.log());
    assert!(!alive(pid));
    let log = run.log();
    assert!(
        log.contains("renewed, but only 0 of the 1 replicas needed confirmed it"),
        "{log}"
    );
    assert!(log.contains("no renewal succeeded"), "{log}");
    replica.sigcont();
}

// ===========================================================================
// Compatibility and bad input.
// ===========================================================================

#[test]
fn a_pool_written_by_hand_in_the_go_layout_is_used_correctly() {
    let server = RedisServer::start();
    // What the Go tool writes: every id at score 0, no ns:stats; one id held
    // by a Go client (float score in Unix seconds), and its client counter.
    let mut zadd = vec!["ZADD", IDS];
    let members: Vec<String> = (1..=11).map(enc).collect();
    for m in &members {
        zadd.extend(["0", m.as_str()]);
    }
    server.cmd(&zadd);
    let go_until = format!("{:.3}", server_now(&server) + 3600.0);
    server.cmd(&["ZADD", IDS, &go_until, "A1"]);
    server.cmd(&["HSET", CLIENTS, "A1", "gohost-1700000000.123-7"]);
    server.cmd(&["SET", "t:next_id", "7"]);
    let go_holder = server.snapshot();

    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    let child = scratch.script(
        "child.sh",
        r#"echo "$YARAUS_WORKER_ID" > "$D/id.$1"
while [ ! -e "$D/go" ]; do sleep 0.05; done
"#,
    );
    let mut a = Run::start(&url, &scratch, FAST, &["sh", &child, "a"]);
    assert_eq!(scratch.wait_line("id.a"), "2");
    let mut b = Run::start(&url, &scratch, FAST, &["sh", &child, "b"]);
    assert_eq!(scratch.wait_line("id.b"), "3");
    let (client_a, _) = a.lease().unwrap();
    assert_leased_to(&server, 2, &client_a);

    // Renewals work on a pool without ns:stats too.
    let first = score(&server, 2).unwrap();
    wait_until("a renewal of id 2", EVENT, || {
        score(&server, 2).unwrap() > first
    });

    scratch.touch("go");
    assert_eq!(a.wait(), 0, "{}", a.log());
    assert_eq!(b.wait(), 0, "{}", b.log());
    assert_released(&server, 2, &client_a);
    let (client_b, _) = b.lease().unwrap();
    assert_released(&server, 3, &client_b);
    // The Go client's lease and its keys are as it left them.
    let now = server.snapshot();
    assert_eq!(now.get("t:next_id"), go_holder.get("t:next_id"));
    assert_eq!(score(&server, 1), Some(go_until.parse().unwrap()));
    assert_eq!(
        owner(&server, 1).as_deref(),
        Some("gohost-1700000000.123-7")
    );
    assert_eq!(leased_ids(&server), [1]);
}

#[test]
fn bad_input_gives_one_line_a_documented_code_and_leaves_redis_unchanged() {
    let server = RedisServer::start();
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    let ran = scratch.arg("ran");
    let secured = RedisServer::start_with(ServerOptions {
        tcp: true,
        requirepass: Some("s3cret".into()),
        ..Default::default()
    });
    let no_password = format!("redis://127.0.0.1:{}/0", secured.port().unwrap());
    let closed_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        format!("redis://127.0.0.1:{port}/0")
    };
    let missing_socket = format!("unix://{}", scratch.arg("no.sock"));

    let check = |what: &str, url: &str, args: &[&str], want: i32, expect: &str| {
        let before = server.snapshot();
        let mut cmd = common::yaraus();
        cmd.args(["run", "--quiet", "--redis", url])
            .args(args)
            .current_dir(scratch.dir())
            .stdin(Stdio::null());
        let mut run = Run::spawn(cmd, &scratch);
        let code = run.wait();
        let stderr = run.log();
        assert_eq!(code, want, "{what}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{what}: not one line: {stderr}");
        assert!(stderr.starts_with("yaraus: "), "{what}: {stderr}");
        assert!(stderr.contains(expect), "{what}: {stderr}");
        assert!(!Path::new(&ran).exists(), "{what}: the command ran");
        assert_eq!(server.snapshot(), before, "{what}: Redis changed");
    };

    check("no command", &url, &[], 2, "");
    check(
        "bad duration",
        &url,
        &["--interval", "soon", "--", "touch", &ran],
        2,
        "soon",
    );
    check(
        "bad wait",
        &url,
        &["--wait", "-1s", "--", "touch", &ran],
        2,
        "",
    );
    check(
        "pool not initialised",
        &url,
        &["--", "touch", &ran],
        125,
        "yaraus init",
    );
    server.cmd(&["SET", IDS, "not a pool"]);
    check(
        "ids of the wrong type",
        &url,
        &["--", "touch", &ran],
        125,
        "t:ids",
    );
    server.cmd(&["DEL", IDS]);
    check(
        "unreachable socket",
        &missing_socket,
        &["--", "touch", &ran],
        69,
        "",
    );
    check("closed port", &closed_port, &["--", "touch", &ran], 69, "");
    check(
        "no password",
        &no_password,
        &["--", "touch", &ran],
        69,
        "authentication",
    );
}

// ===========================================================================
// An interactive terminal.
// ===========================================================================

#[test]
fn an_interactive_child_reads_the_terminal_and_gets_ctrl_c_once() {
    if !pty_available() {
        eprintln!("skipped: script(1) from util-linux is missing or cannot open a pty");
        return;
    }
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let child = scratch.script(
        "child.sh",
        r#"trap 'echo INT >> "$D/ints"' INT
echo ready > "$D/ready"
read line
echo "got: $line" > "$D/line"
while [ ! -e "$D/stop" ]; do sleep 0.05; done
exit 5
"#,
    );
    let url = server.url_ns(NS);
    let args: Vec<&str> = [env!("CARGO_BIN_EXE_yaraus"), "run", "--redis", &url]
        .into_iter()
        .chain(FAST.iter().copied())
        .chain(["--", "sh", child.as_str()])
        .collect();
    let (mut run, mut tty) = on_a_pty(&scratch, &shell_words(&args));

    scratch.wait_line("ready");
    tty.write_all(b"hello from the terminal\n").unwrap();
    tty.flush().unwrap();
    assert_eq!(scratch.wait_line("line"), "got: hello from the terminal");
    tty.write_all(b"\x03").unwrap();
    tty.flush().unwrap();
    scratch.wait_line("ints");
    scratch.touch("stop");
    // script -e exits with the status of yaraus, which is the child's.
    assert_eq!(run.wait(), 5, "{}", run.output());
    drop(tty);
    // Ctrl-C reached the child once, and yaraus, out of the terminal's
    // foreground group, neither got nor forwarded it. (yaraus logs to the
    // terminal, which script copies to its stdout.)
    assert_eq!(scratch.lines("ints"), ["INT"]);
    let screen = run.output();
    assert!(screen.contains("starting..."), "{screen}");
    assert!(screen.contains("releasing id 1..."), "{screen}");
    assert!(!screen.contains("interrupted"), "{screen}");
    assert!(leased_ids(&server).is_empty());
}

#[test]
fn ctrl_z_stops_the_child_and_yaraus_and_fg_resumes_both() {
    // An interactive bash with job control on a pseudo-terminal (script(1)),
    // driven as a user would: type the command, Ctrl-Z, `fg`.
    if !pty_available() || Command::new("bash").arg("--version").output().is_err() {
        eprintln!("skipped: script(1) or bash is missing, or no pty can be opened");
        return;
    }
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let child = scratch.script(
        "child.sh",
        r#"echo $$ > "$D/pid"
read line
echo "got: $line" > "$D/line"
exit 6
"#,
    );
    let url = server.url_ns(NS);
    let args: Vec<&str> = [env!("CARGO_BIN_EXE_yaraus"), "run", "--redis", &url]
        .into_iter()
        .chain(timings("30s", "300ms"))
        .chain(["--", "sh", child.as_str()])
        .collect();
    let command_line = shell_words(&args);
    let (mut run, mut tty) = on_a_pty(&scratch, "bash --norc --noprofile -i");
    let mut type_in = |text: &[u8]| {
        tty.write_all(text).unwrap();
        tty.flush().unwrap();
    };
    // Alone on its line: in `a; b`, bash would run b as soon as a stops.
    type_in(format!("{command_line}\n").as_bytes());
    let child_pid: i32 = scratch.wait_line("pid").parse().unwrap();
    // yaraus is the child's parent, or its grandparent when a watchdog
    // process stands between them.
    let yaraus_pid = yaraus_ancestor(child_pid).expect("a yaraus among the child's ancestors");
    let state = |pid: i32| proc_stat(pid).map(|(state, _)| state);

    // Ctrl-Z: the child stops, and yaraus follows it, so that bash (which
    // waits for yaraus, its job) gets the terminal back.
    type_in(b"\x1a");
    wait_until("the child to stop", EVENT, || state(child_pid) == Some('T'));
    wait_until("yaraus to stop", EVENT, || state(yaraus_pid) == Some('T'));
    assert!(run.output().contains("stopping too"), "{}", run.output());

    // `fg`: bash continues yaraus, which gives the terminal to the child
    // and continues it; the child reads what is typed next.
    type_in(b"fg\n");
    wait_until("the child to run again", EVENT, || {
        state(child_pid).is_some_and(|s| s != 'T')
    });
    type_in(b"after fg\n");
    assert_eq!(scratch.wait_line("line"), "got: after fg");
    // Read by bash once `fg` returns: the status of yaraus, the child's.
    type_in(b"echo \"status $?\" > \"$D/status\"\n");
    assert_eq!(scratch.wait_line("status"), "status 6");
    type_in(b"exit\n");
    run.wait();
    assert!(leased_ids(&server).is_empty());
}
