//! Riding out what passes, and failing at once on what does not: every subcommand waits out servers out of reach up to its
//! `--wait`, and ends there; a misconfiguration ends it at once, with one
//! line and its exit status.
//!
//! * `down.rs`: a `run` and a `lock` started while the only server is down
//!   (not listening) get their id and lock once it is back;
//! * `frozen.rs`: against a SIGSTOPped server, `run`, `lock` and `seq next`
//!   end with 69 at their bound (the test only checks that they ended, with
//!   a generous outer bound: speed is never asserted);
//! * `misconfigured.rs`: a wrong password, a key of another type, a server
//!   that does not speak Redis: one line, its status, even for commands
//!   that would wait forever for what passes;
//! * `recreated.rs`: `run --min --max` re-creates the pool of a Redis
//!   restarted empty while `run` clients loop.
//!
//! A `run` started during a Sentinel failover is in `tests/deploy`.

use crate::common;

mod down;
mod frozen;
mod misconfigured;
mod recreated;

use common::pool::NS;
use common::process::{Run, lock_cmd, run_cmd};
use common::scratch::Scratch;
use common::{EVENT, RedisServer, ServerOptions, run_yaraus, wait_until};
use std::time::Duration;

/// An outer bound on a command that must end by itself: far beyond any
/// `--wait` given here, reached only when the command does not end.
const ENDS_WITHIN: Duration = Duration::from_secs(60);

/// Short timings for `run`: its command starts at once.
const QUICK_RUN: [&str; 9] = [
    "--interval",
    "200ms",
    "--expire",
    "5s",
    "--kill-after",
    "500ms",
    "--delay",
    "0",
    "--no-safeguards",
];

/// A server that keeps its data across a restart (the AOF, fsynced).
fn durable_server() -> RedisServer {
    RedisServer::start_with(ServerOptions {
        appendfsync_always: true,
        ..Default::default()
    })
}
