//! The signals yaraus forwards to its child, caught from the start.
//!
//! They are installed before anything is claimed, so that a SIGTERM that
//! arrives while yaraus waits for an id or a lock ends the wait cleanly (what
//! was partly taken is released, exit 128+N) instead of killing the process
//! with a claim still registered in Redis.

use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
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

/// A stream of the forwarded signals.
pub struct Signals {
    streams: Vec<(Signal, tokio::signal::unix::Signal)>,
}

impl Signals {
    /// Catches every signal in [`FORWARDED`] from now on.
    pub fn install() -> std::io::Result<Signals> {
        let mut streams = Vec::with_capacity(FORWARDED.len());
        for sig in FORWARDED {
            streams.push((sig, signal(SignalKind::from_raw(sig as i32))?));
        }
        Ok(Signals { streams })
    }

    /// The next signal received. Cancel-safe.
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

/// Runs `start` with every signal blocked in the calling thread, then puts
/// the mask back. For starting a process that shares yaraus's memory (the
/// command before its `exec`, the guard): it begins life with every signal
/// blocked, so none of yaraus's handlers can run in it.
pub fn with_all_blocked<T>(start: impl FnOnce() -> T) -> nix::Result<T> {
    let mut original = SigSet::empty();
    pthread_sigmask(
        SigmaskHow::SIG_SETMASK,
        Some(&SigSet::all()),
        Some(&mut original),
    )?;
    let started = start();
    let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&original), None);
    Ok(started)
}
