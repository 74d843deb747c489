//! A watchdog process that kills the child's whole process group when yaraus
//! dies, however it dies.
//!
//! `PR_SET_PDEATHSIG` reaches only the direct child: the `sleep` under
//! `sh -c 'worker & sleep 1000'` would survive a SIGKILLed yaraus and go on
//! using an id, a lock or an index about to be handed to someone else. So,
//! next to the child, yaraus forks a tiny guard that blocks reading a pipe
//! whose only write end yaraus holds. The kernel closes that end when yaraus
//! exits for any reason, SIGKILL included; the guard then reads end-of-file
//! and SIGKILLs the child's group. When yaraus ends normally, it first writes
//! one byte ("stand down"), because by then the group is gone and its number
//! must not be signalled again.
//!
//! The guard is forked without exec from a multi-threaded process, so it
//! only makes async-signal-safe calls: sigaction, close, read, kill, _exit.

use nix::fcntl::OFlag;
use nix::sys::signal::{self, SigHandler, Signal};
use nix::unistd::{ForkResult, Pid};
use std::os::fd::OwnedFd;

/// The parent's end of a guard. Dropping it without [`Guard::stand_down`]
/// makes the guard kill the group, exactly as yaraus dying would; dropping
/// it reaps the guard.
pub struct Guard {
    alive: Option<OwnedFd>,
    pid: Pid,
}

impl Guard {
    /// Forks a guard for the process group `pgid`.
    pub fn watch(pgid: Pid) -> nix::Result<Guard> {
        let (read_end, write_end) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
        // SAFETY: the child branch only calls async-signal-safe functions.
        match unsafe { nix::unistd::fork()? } {
            ForkResult::Child => {
                // SAFETY: dispositions of our own, freshly forked process.
                unsafe {
                    for sig in crate::signals::FORWARDED {
                        let _ = signal::signal(sig, SigHandler::SigIgn);
                    }
                }
                drop(write_end);
                let mut byte = [0u8; 1];
                let n = loop {
                    match nix::unistd::read(&read_end, &mut byte) {
                        Err(nix::errno::Errno::EINTR) => continue,
                        Ok(n) => break n,
                        Err(_) => break 0,
                    }
                };
                if n == 0 {
                    let _ = signal::killpg(pgid, Signal::SIGKILL);
                }
                // SAFETY: _exit is async-signal-safe and skips atexit handlers
                // and destructors that belong to the parent's state.
                unsafe { nix::libc::_exit(0) }
            }
            ForkResult::Parent { child } => {
                drop(read_end);
                Ok(Guard {
                    alive: Some(write_end),
                    pid: child,
                })
            }
        }
    }

    /// Tells the guard the group is gone. The guard exits by itself; it is
    /// reaped when the `Guard` is dropped, by which time (after the release
    /// round trip) it has long finished.
    pub fn stand_down(&mut self) {
        if let Some(fd) = self.alive.take() {
            let _ = nix::unistd::write(&fd, b"x");
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // Without a stand-down, closing our end makes the guard kill the
        // group, exactly as our death would.
        drop(self.alive.take());
        let _ = nix::sys::wait::waitpid(self.pid, None);
    }
}
