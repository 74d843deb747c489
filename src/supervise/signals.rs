//! The signals yaraus acts on, caught from the start: the six it forwards to
//! its child, or the two that stop a service (`seq serve`, `hilo agent
//! --every`).
//!
//! They are installed before anything is claimed, so that a SIGTERM that
//! arrives while yaraus waits for an id or a lock ends the wait cleanly (what
//! was partly taken is released, exit 128+N) instead of killing the process
//! with a claim still registered in Redis.
//!
//! A signal that was *ignored* when yaraus started is left ignored: yaraus
//! neither catches nor forwards it, and the command inherits it ignored, as
//! it would under flock(1) or a plain `exec`. That is what `nohup` (SIGHUP)
//! and a background job of a non-interactive shell (SIGINT, SIGQUIT) ask of
//! every process they start: a hang-up or a Ctrl-C meant for the foreground
//! must not end a wait for a lock, nor reach the command through yaraus.
//! Catching a signal replaces its disposition, so the ignored set is read
//! once, before the first handler is installed ([`ignored_at_start`]).

use nix::sys::signal::Signal;
use std::sync::OnceLock;
use std::task::Poll;
use tokio::signal::unix::{SignalKind, signal};

/// SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2.
pub const FORWARDED: [Signal; 6] = [
    Signal::SIGINT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGQUIT,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
];

/// What stops a service gracefully: SIGTERM (systemd, kill) and SIGINT (Ctrl-C).
pub const STOPPING: [Signal; 2] = [Signal::SIGTERM, Signal::SIGINT];

/// A stream of caught signals.
pub struct Signals {
    streams: Vec<(Signal, tokio::signal::unix::Signal)>,
}

impl Signals {
    /// Catches every signal of [`FORWARDED`] from now on, but those ignored
    /// at start.
    pub fn install() -> std::io::Result<Signals> {
        Signals::catch(&FORWARDED)
    }

    /// Catches the signals of [`STOPPING`], but those ignored at start.
    pub fn stopping() -> std::io::Result<Signals> {
        Signals::catch(&STOPPING)
    }

    fn catch(set: &[Signal]) -> std::io::Result<Signals> {
        let ignored = ignored_at_start();
        let mut streams = Vec::with_capacity(set.len());
        for &sig in set.iter().filter(|s| !ignored.contains(s)) {
            streams.push((sig, signal(SignalKind::from_raw(sig as i32))?));
        }
        Ok(Signals { streams })
    }

    /// The next signal received (never, when none is caught). Cancel-safe.
    pub async fn recv(&mut self) -> Signal {
        std::future::poll_fn(|cx| {
            for (sig, stream) in &mut self.streams {
                if let Poll::Ready(Some(())) = stream.poll_recv(cx) {
                    return Poll::Ready(*sig);
                }
            }
            Poll::Pending
        })
        .await
    }
}

/// The signals of [`FORWARDED`] that were ignored when this process
/// started. Read on the first call, which the binary makes before anything
/// catches a signal; the answer never changes after that.
pub fn ignored_at_start() -> &'static [Signal] {
    static IGNORED: OnceLock<Vec<Signal>> = OnceLock::new();
    IGNORED.get_or_init(|| {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let mask = ignored_mask(&status);
        FORWARDED
            .into_iter()
            .filter(|&sig| mask & (1 << (sig as u64 - 1)) != 0)
            .collect()
    })
}

/// The `SigIgn:` mask of a `/proc/PID/status` text (bit N-1 = signal N);
/// none when it cannot be read.
fn ignored_mask(status: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ignored_mask_is_read_from_proc_status() {
        let status = "Name:\tyaraus\nSigBlk:\t0000000000000000\nSigIgn:\t0000000000000003\n";
        let mask = ignored_mask(status);
        assert_ne!(mask & (1 << (Signal::SIGHUP as u64 - 1)), 0);
        assert_ne!(mask & (1 << (Signal::SIGINT as u64 - 1)), 0);
        assert_eq!(mask & (1 << (Signal::SIGTERM as u64 - 1)), 0);
        assert_eq!(ignored_mask("Name:\tx\n"), 0);
    }
}
