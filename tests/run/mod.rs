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

use crate::common;

mod clock_guard;
mod command_line;
mod compatibility;
mod leasing;
mod losing;
mod metrics;
mod replication;
mod signals;
mod terminal;
mod waking;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

use common::pool::{
    CLIENTS, IDS, NS, dec, enc, fresh_pool, init_pool, owner, score, server_now, stat, steal,
    wall_now,
};
use common::process::{
    Run, alive, live_members, proc_stat, read_pid, run_cmd, run_script, run_to_end, safe_timings,
    timings, waiting_child, with, yaraus_ancestor,
};
use common::pty::{READS_A_LINE, on_a_pty, require_bash, yaraus_run_line};
use common::scratch::Scratch;
use common::{EVENT, RedisServer, ServerOptions, wait_until};
use nix::sys::signal::Signal;
use nix::unistd::Pid;

/// `yaraus run` of `touch $D/ran` with a one-minute delay, once it sleeps
/// through the delay holding its id: the run, its client id and the id.
fn in_the_delay(
    server: &RedisServer,
    scratch: &Scratch,
    expire: &'static str,
) -> (Run, String, u64) {
    let run = Run::start(
        &server.url_ns(NS),
        scratch,
        &safe_timings(expire, "300ms", "1m"),
        &["touch", &scratch.arg("ran")],
    );
    run.wait_log("sleep 1m");
    let (client, id) = run.lease().unwrap();
    (run, client, id)
}

/// The signals yaraus forwards to its child.
const FORWARDED: [Signal; 6] = [
    Signal::SIGINT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGQUIT,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
];

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
