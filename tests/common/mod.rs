//! Test harness shared by the integration and fault tests: a module of
//! `tests/integration.rs` and `tests/faults.rs`, which each test module
//! reaches as `crate::common`.
//!
//! Every Redis here is a real `redis-server` process started in a fresh
//! temporary directory — never a mock. Faults are real too: SIGKILL, SIGSTOP,
//! restart with an empty dataset, promotion of a replica.
//!
//! # Layout
//!
//! * `spawn.rs`: the one way a test starts a process (`command`, `yaraus`):
//!   default signal dispositions and an empty mask for every child.
//! * `server.rs`: one `RedisServer` (start, address, queries); `faults.rs`
//!   its faults; `snapshot.rs` its keys as text for "unchanged" checks.
//! * `cli.rs`: yaraus as a one-shot command with a deadline (`run_yaraus`).
//! * `tools.rs`: the programs the tests need besides yaraus; a test that
//!   lacks one fails, naming it and the script that installs it.
//! * `process.rs`, `scratch.rs`, `pty.rs`: yaraus as a running process, the
//!   children's scratch directory, a terminal driven as a user would.
//! * `metrics.rs`: scraping `--metrics-listen` (address, GET, parse).
//! * `heal.rs`: a counter's quarantine mark and the wait for its repair.
//! * `pool.rs`, `lock.rs`: the worker-id pool and the lock tests' helpers;
//!   `sentinel.rs`, `cluster.rs`, `proxy.rs`: topologies and partitions.
//!
//! The faults binary uses only part of it, hence the module-wide
//! `dead_code` allowance.
#![allow(dead_code)]

pub mod cli;
pub mod cluster;
pub mod faults;
pub mod heal;
pub mod lock;
pub mod metrics;
pub mod pool;
pub mod process;
pub mod proxy;
pub mod pty;
pub mod scratch;
pub mod sentinel;
pub mod server;
pub mod snapshot;
pub mod spawn;
pub mod tools;

use std::thread;
use std::time::{Duration, Instant};

// The names the tests have always used (`common::RedisServer`,
// `common::yaraus`...); a crate that uses none of one of them must not warn.
#[allow(unused_imports)]
pub use cli::{Output, create_acl_user, run_ok, run_yaraus};
#[allow(unused_imports)]
pub use server::{RedisServer, ServerOptions, ensure_redis_server_installed, free_port};
#[allow(unused_imports)]
pub use spawn::{command, yaraus};

/// Bound on events that must happen promptly (a child writing a file, a
/// process dying, yaraus exiting). Reaching it means the test fails.
pub const EVENT: Duration = Duration::from_secs(20);

/// Polls `cond` every 10 ms until it holds; panics naming `what` after
/// `timeout`. For awaiting an observable event — never as a bare sleep.
pub fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// A single-threaded tokio runtime, for the tests that drive the library
/// (`block_on` one call at a time, as a one-shot command does).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}
