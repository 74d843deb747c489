//! `yaraus lock` as a command, against real redis-servers: a lost lock kills
//! the child's whole group, busy locks exit with the -E code, interop with a
//! raw `SET NX PX`, auto-extension of a short lock under a long child (with a
//! master restarted empty in the middle), the script forms (--acquire,
//! --extend, --release, --info), signals while waiting, semaphores, and bad
//! input (one stderr line, the documented code, Redis unchanged).
//!
//! # Layout
//!
//! * `holding.rs`: holding a lock and losing it: the child killed, a busy
//!   lock, a raw `SET NX` as the other holder, extensions under a long child.
//! * `forms.rs`: the script forms, `--prefix`, semaphores, masters from the
//!   environment.
//! * `command.rs`: the wrapped command's status and signals, and a signal
//!   while waiting for the lock.
//! * `bad_input.rs`: bad input, and a release that reaches a late master.
//! * `wake.rs`: a release wakes a waiter; a lost wake-up costs the poll.
//! * `wake_one.rs`: a release wakes the first waiter of the queue only.
//!
//! The helpers of every lock test are in `tests/common/lock.rs`; the few
//! here are this suite's own.

use crate::common;

mod bad_input;
mod command;
mod forms;
mod holding;
mod shared;
mod wake;
mod wake_one;

use common::lock::*;
use common::{RedisServer, wait_until};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::collections::HashMap;
use std::process::Stdio;
use std::time::Duration;

/// Starts `cmd` with stderr going to a file the test can watch.
fn spawn_logged(
    cmd: &mut std::process::Command,
    stderr_path: &std::path::Path,
) -> std::process::Child {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(stderr_path).unwrap())
        .spawn()
        .unwrap()
}

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `NAME=value` lines of `--acquire` (single-quoted values unquoted).
fn parse_env(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches('\'').to_string()))
        .collect()
}
