//! The signals yaraus forwards to its child, caught from the start.
//!
//! They are installed before anything is claimed, so that a SIGTERM that
//! arrives while yaraus waits for an id or a lock ends the wait cleanly (what
//! was partly taken is released, exit 128+N) instead of killing the process
//! with a claim still registered in Redis.

use nix::sys::signal::Signal;
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
