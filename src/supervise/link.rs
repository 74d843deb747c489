//! yaraus's end of the watchdog: starting it, giving it orders, hearing its
//! reports.
//!
//! The watchdog is forked before anything else happens (before the tokio
//! runtime and its threads exist), so that the copy is a plain
//! single-threaded program that may run any code. Dropping a [`Watchdog`]
//! without [`Watchdog::stand_down`] closes yaraus's end of the socket,
//! which the watchdog takes exactly as it takes yaraus's death: it SIGKILLs
//! whatever the command left and exits.

use super::protocol::{Frames, Order, Report, frame};
use crate::base::sys;
use crate::error::{Error, Result};
use crate::timing::supervise::STAND_DOWN_WAIT;
use nix::unistd::{ForkResult, Pid};
use std::io;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

enum Socket {
    /// Not yet handed to the runtime (the watchdog is forked before it exists).
    Std(std::os::unix::net::UnixStream),
    Tokio(tokio::net::UnixStream),
    Closed,
}

/// A running watchdog process.
pub struct Watchdog {
    pid: Pid,
    socket: Socket,
    frames: Frames,
}

impl Watchdog {
    /// Forks the watchdog. Must be called while the process has a single
    /// thread (before a tokio runtime is built): it is refused otherwise.
    pub fn start() -> Result<Watchdog> {
        let cannot = |e: io::Error| Error::State(format!("cannot start the watchdog process: {e}"));
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().map_err(cannot)?;
        match sys::fork_single_threaded().map_err(cannot)? {
            ForkResult::Child => {
                drop(ours);
                super::watchdog::run(theirs)
            }
            ForkResult::Parent { child } => {
                drop(theirs);
                // Should the watchdog be killed, the command dies with it
                // (PDEATHSIG) and what the command started is handed to us,
                // to be stopped before the claim is released.
                nix::sys::prctl::set_child_subreaper(true)
                    .map_err(|e| cannot(io::Error::from(e)))?;
                Ok(Watchdog {
                    pid: child,
                    socket: Socket::Std(ours),
                    frames: Frames::default(),
                })
            }
        }
    }

    /// The watchdog's pid.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    fn stream(&mut self) -> io::Result<&mut tokio::net::UnixStream> {
        if let Socket::Std(_) = self.socket {
            let Socket::Std(std) = std::mem::replace(&mut self.socket, Socket::Closed) else {
                unreachable!()
            };
            std.set_nonblocking(true)?;
            self.socket = Socket::Tokio(tokio::net::UnixStream::from_std(std)?);
        }
        match &mut self.socket {
            Socket::Tokio(stream) => Ok(stream),
            _ => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the watchdog's socket is closed",
            )),
        }
    }

    /// Sends an order.
    pub(crate) async fn order(&mut self, order: &Order) -> io::Result<()> {
        let bytes = frame(order);
        self.stream()?.write_all(&bytes).await
    }

    /// The next report. Cancel-safe: bytes already read stay in `frames`.
    /// An error means the watchdog is gone (or talks nonsense).
    pub(crate) async fn report(&mut self) -> io::Result<Report> {
        loop {
            if let Some(report) = self
                .frames
                .next_message::<Report>()
                .map_err(io::Error::other)?
            {
                return Ok(report);
            }
            let mut buf = [0u8; 4096];
            let n = self.stream()?.read(&mut buf).await?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the watchdog process exited",
                ));
            }
            self.frames.push(&buf[..n]);
        }
    }

    /// Tells the watchdog that nothing is left to guard, and waits (briefly)
    /// for it to exit, so that it holds none of the caller's descriptors (a
    /// shell reading yaraus's output through a pipe) once yaraus is gone.
    pub async fn stand_down(mut self) {
        if self.order(&Order::StandDown).await.is_ok() {
            let _ = tokio::time::timeout(STAND_DOWN_WAIT, async {
                while self.report().await.is_ok() {}
            })
            .await;
        }
        self.socket = Socket::Closed;
        let _ = nix::sys::wait::waitpid(self.pid, Some(nix::sys::wait::WaitPidFlag::WNOHANG));
    }
}
