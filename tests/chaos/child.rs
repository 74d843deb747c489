//! The child every `yaraus run` and `yaraus lock` of the suite supervises:
//! this test executable itself, started again as
//! `faults-EXE --exact chaos::chaos_child --nocapture --test-threads=1` with
//! [`LOG_ENV`] set, which makes the test `chaos_child` act as the child
//! instead of returning at once.
//!
//! It writes `start`, then a `beat` every [`BEAT`] while it runs, to the
//! shared log ([`super::lives`] has the format), each line one `write(2)` on
//! a file opened with `O_APPEND`. On SIGTERM (or SIGINT, SIGHUP: what yaraus
//! forwards) it takes [`GRACE_ENV`] ms to shut down, still beating — a
//! child that needs some of its `--kill-after` — then writes `stop` and
//! exits 0. SIGKILLed, it writes nothing more: its life ends at its last beat.
//!
//! A *stubborn* child ([`STUBBORN_ENV`]) ignores SIGTERM, so that only the
//! SIGKILL that comes `--kill-after` later ends it: the path where the
//! watchdog's SIGKILL, not the child's good will, keeps the deadline. It
//! still stops at once on SIGINT, which is how the fleet is stopped.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
use nix::time::{ClockId, clock_gettime};

/// The log file's path; set only for the child.
pub const LOG_ENV: &str = "CHAOS_CHILD_LOG";
/// The index of the client loop (passed through yaraus's environment).
pub const CLIENT_ENV: &str = "CHAOS_CLIENT";
/// How long the child takes to stop after SIGTERM, in ms.
pub const GRACE_ENV: &str = "CHAOS_GRACE_MS";
/// Set to `1`: the child ignores SIGTERM.
pub const STUBBORN_ENV: &str = "CHAOS_STUBBORN";
/// Time between two beats.
pub const BEAT: Duration = Duration::from_millis(5);

/// `CLOCK_MONOTONIC` in nanoseconds: the one clock of the log and the tests.
pub fn now_ns() -> u64 {
    let t = clock_gettime(ClockId::CLOCK_MONOTONIC).expect("clock_gettime");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

static TERMINATE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_terminate(_: nix::libc::c_int) {
    TERMINATE.store(true, Ordering::SeqCst);
}

/// Acts as the child if [`LOG_ENV`] is set; returns at once otherwise.
pub fn act_if_asked() {
    let Some(log) = std::env::var_os(LOG_ENV) else {
        return;
    };
    let res = match (
        std::env::var("YARAUS_WORKER_ID"),
        std::env::var("YARAUS_LOCK_NAME"),
    ) {
        (Ok(id), _) => format!("id:{id}"),
        (_, Ok(name)) => format!("lock:{name}"),
        _ => panic!("chaos child: neither YARAUS_WORKER_ID nor YARAUS_LOCK_NAME is set"),
    };
    let client: usize = std::env::var(CLIENT_ENV)
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(usize::MAX);
    let grace = Duration::from_millis(
        std::env::var(GRACE_ENV)
            .ok()
            .and_then(|g| g.parse().ok())
            .unwrap_or(0),
    );
    let handler = SigAction::new(
        SigHandler::Handler(on_terminate),
        SaFlags::empty(),
        SigSet::empty(),
    );
    let ignore = SigAction::new(SigHandler::SigIgn, SaFlags::empty(), SigSet::empty());
    let stubborn = std::env::var(STUBBORN_ENV).is_ok_and(|v| v == "1");
    for sig in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        let action = if stubborn && sig == Signal::SIGTERM {
            &ignore
        } else {
            &handler
        };
        // SAFETY: the handler only stores to an atomic.
        unsafe { sigaction(sig, action) }.expect("sigaction");
    }
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(&log)
        .expect("open the chaos log");
    let pid = std::process::id();
    let write = |file: &mut File, event: &str| {
        let line = format!("{event} {res} {} {pid} {client}\n", now_ns());
        // One write(2) per line: O_APPEND keeps lines whole and in order.
        let n = file.write(line.as_bytes()).expect("write the chaos log");
        assert_eq!(n, line.len(), "short write to the chaos log");
    };
    write(&mut file, "start");
    let mut stopping: Option<Instant> = None;
    loop {
        thread::sleep(BEAT);
        if stopping.is_none() && TERMINATE.load(Ordering::SeqCst) {
            stopping = Some(Instant::now());
        }
        if stopping.is_some_and(|at| at.elapsed() >= grace) {
            write(&mut file, "stop");
            std::process::exit(0);
        }
        write(&mut file, "beat");
    }
}
