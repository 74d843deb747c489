//! The supervision promise of `yaraus run` and `yaraus lock`, against real
//! redis-server processes, real signals and real children:
//!
//! **no process started for a claim runs after the claim's deadline, and the
//! deadline comes before the server-side expiry.** SIGTERM goes at (deadline
//! − kill-after) and SIGKILL at the deadline, so even a child that ignores
//! SIGTERM is dead before the claim expires in Redis — whatever happens to
//! yaraus (its process group killed, frozen, stopped by Ctrl-Z, blocked on a
//! full stderr) and whatever the child does (leave its process group, leave
//! its session).
//!
//! Timing is observed, never assumed: the children append heartbeats (`date
//! +%s.%N`, wall clock, every ~20 ms) to `$D/beats`, and the last one is
//! compared with the expiry the server holds — the id's score in `t:ids`, or
//! for a lock the server's `TIME` + `PTTL` of its key. Both clocks are this
//! machine's. Where the expiry is read before a fault, writes are paused on
//! the server first (`CLIENT PAUSE ... WRITE`), so that no renewal can slip in
//! between the reading and the fault: the expiry read is then the last one
//! yaraus can know of. Every other wait is a `wait_until` on an event.
//!
//! # Layout
//!
//! This file holds the children's scripts and what the tests observe of
//! them (heartbeats, process groups, expiries read with writes paused);
//! each module is one way the promise could break:
//!
//! * `groups.rs`: the process group of yaraus killed at once, and a
//!   descendant that leaves the session (setsid).
//! * `stderr.rs`: a stderr nobody reads.
//! * `freezing.rs`: Redis frozen with a child that ignores SIGTERM
//!   (`--kill-after` inside the validity), and yaraus itself frozen.
//! * `job_control.rs`: Ctrl-Z, `fg` and a background job on a terminal.
//! * `watchdog.rs`: what the watchdog, the command's parent, adds.

use crate::common;

mod freezing;
mod groups;
mod job_control;
mod stderr;
mod watchdog;

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;

use common::pool::{NS, fresh_pool, score, server_now, stat, steal};
use common::process::{
    KillOnDrop, Run, alive, is_yaraus, live_members, lock_cmd, proc_stat, read_pid, run_cmd,
    run_script, terminal_foreground, timings, waiting_child, with, yaraus_ancestor, yaraus_in,
};
use common::pty::{READS_A_LINE, on_a_pty, require_bash, yaraus_run_line};
use common::scratch::Scratch;
use common::{EVENT, RedisServer, wait_until};
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// The exit status of a run whose claim was lost and whose command was killed.
const EXIT_LOST: i32 = 124;
/// The exit status of a usage error.
const EXIT_USAGE: i32 = 2;

/// The body of a child that writes heartbeats until it is killed.
const HEARTBEAT: &str = r#"echo $$ > "$D/pid"
while :; do date +%s.%N >> "$D/beats"; sleep 0.02; done
"#;

/// The same, ignoring SIGTERM (and so do the `date` and `sleep` it starts):
/// only SIGKILL ends it.
const STUBBORN_HEARTBEAT: &str = r#"trap '' TERM
echo $$ > "$D/pid"
while :; do date +%s.%N >> "$D/beats"; sleep 0.02; done
"#;

// ----- helpers ---------------------------------------------------------------

/// A pool of one id, and `yaraus run` of the shell script `body` with a
/// long lease (30 s) and a short kill-after (300 ms).
fn long_lease_run(body: &str) -> (RedisServer, Scratch, Run) {
    let (server, scratch) = fresh_pool(1, 1);
    let run = run_script(&server, &scratch, &timings("30s", "300ms"), body);
    (server, scratch, run)
}

/// The last heartbeat the children wrote to `$D/beats`, in Unix seconds.
fn last_beat(scratch: &Scratch) -> f64 {
    let beats = scratch.lines("beats");
    let last = beats.last().expect("no heartbeat was written");
    last.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a heartbeat: {last:?}"))
}

/// Waits until the child has written its first heartbeat.
fn wait_beating(scratch: &Scratch) {
    scratch.wait_line("beats");
}

/// Asserts that the last heartbeat came before `expiry` (Unix seconds).
fn assert_beats_end_before(scratch: &Scratch, expiry: f64, what: &str) {
    let last = last_beat(scratch);
    assert!(
        last < expiry,
        "{what}: the last heartbeat ({last:.6}) is {:.3} s after the server-side expiry \
         ({expiry:.6}): the child ran after its claim expired",
        last - expiry
    );
}

/// Waits until the process `pid` is dead, and so is every other process of
/// the process group it was in (a `date` or `sleep` it started) — yaraus
/// processes (a watchdog) excepted.
fn wait_child_and_group_dead(pid: i32, pgid: i32, what: &str) {
    wait_until(what, EVENT, || {
        !alive(pid)
            && live_members(pgid)
                .into_iter()
                .all(|p| p == pid || is_yaraus(p))
    });
}

/// The process group of a live process.
fn pgid_of(pid: i32) -> i32 {
    proc_stat(pid)
        .map(|(_, g)| g)
        .unwrap_or_else(|| panic!("process {pid} is gone"))
}

fn state(pid: i32) -> Option<char> {
    proc_stat(pid).map(|(s, _)| s)
}

/// Pauses every write command (scripts included) on the server, so that no
/// renewal can change an expiry read afterwards. Reads still work.
fn pause_writes(server: &RedisServer) {
    server.cmd(&["CLIENT", "PAUSE", "600000", "WRITE"]);
}

fn unpause(server: &RedisServer) {
    server.cmd(&["CLIENT", "UNPAUSE"]);
}

/// Waits for `yaraus run` to have renewed its lease at least once.
fn wait_renewal(server: &RedisServer) {
    wait_until("a renewal of the lease", EVENT, || {
        stat(server, "extend_ttl_success") >= 1
    });
}

fn pttl(server: &RedisServer, key: &str) -> i64 {
    server.query(&["PTTL", key])
}

/// Waits until the lock `key` has been extended once (its PTTL went up).
fn wait_extension(server: &RedisServer, key: &str) {
    let mut last = pttl(server, key);
    assert!(last > 0, "the lock {key} is not held (PTTL {last})");
    wait_until(&format!("an extension of the lock {key}"), EVENT, || {
        let now = pttl(server, key);
        let extended = now > last;
        last = now;
        extended
    });
}

/// When the lock `key` expires on the server: its `TIME` + `PTTL key`, read
/// atomically, in Unix seconds.
fn lock_expiry(server: &RedisServer, key: &str) -> f64 {
    let mut conn = server.conn();
    let ((secs, micros), pttl): ((u64, u64), i64) = redis::pipe()
        .atomic()
        .cmd("TIME")
        .cmd("PTTL")
        .arg(key)
        .query(&mut conn)
        .expect("TIME + PTTL");
    assert!(pttl > 0, "the lock {key} is not held (PTTL {pttl})");
    secs as f64 + micros as f64 / 1e6 + pttl as f64 / 1e3
}
