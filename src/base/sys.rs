//! The few operating-system calls that Rust cannot check for us: forking
//! (the watchdog), code run between a fork and an exec (the command), and
//! handing a descriptor to tokio (the boot clock's timer). This is the
//! crate's only unsafe code, kept in the bottom layer so that every layer
//! above can use it; the rest of the crate is `#![deny(unsafe_code)]`, and
//! every block here says why it is sound. Signals are kept off with masks (safe), never with
//! dispositions, so that nothing here installs or resets a handler.
#![allow(unsafe_code)]

use nix::sys::signal::{SigSet, SigmaskHow, Signal, sigprocmask};
use nix::sys::timerfd::TimerFd;
use nix::unistd::{ForkResult, Pid};
use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// How many threads this process has now.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(usize::MAX)
}

/// Forks. Refused unless this process has a single thread: a fork copies
/// only the calling thread, and a lock that another thread held at that
/// moment (the allocator's, stdout's) would stay locked forever in the copy.
pub fn fork_single_threaded() -> io::Result<ForkResult> {
    if threads() != 1 {
        return Err(io::Error::other(
            "the watchdog must be started while the process has a single thread",
        ));
    }
    // SAFETY: the process has one thread (checked just above; nothing here
    // starts another), so the child is a complete copy with no lock held by
    // a thread that does not exist in it, and may run any code.
    unsafe { nix::unistd::fork() }.map_err(io::Error::from)
}

/// Blocks `set` in this (single-threaded) process.
pub fn block(set: &SigSet) -> nix::Result<()> {
    sigprocmask(SigmaskHow::SIG_BLOCK, Some(set), None)
}

/// What the command needs set up between the fork and the exec.
pub struct CommandStart<'a> {
    pub argv: &'a [String],
    pub env: &'a [(String, String)],
    /// Inherited variables to leave out.
    pub env_remove: &'a [String],
    /// Make the command's new group the terminal's foreground group.
    pub take_terminal: bool,
    /// The process starting it, whose death must take the command along.
    pub parent: Pid,
}

/// Starts the command as the leader of a new process group that gets
/// SIGKILL when `parent` dies, with every signal unblocked and at its
/// default action. Returns its pid once it has exec'd; an error means it
/// does not run.
pub fn spawn_command(start: CommandStart<'_>) -> io::Result<Pid> {
    let Some((program, args)) = start.argv.split_first() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no command"));
    };
    let mut cmd = Command::new(program);
    for name in start.env_remove {
        cmd.env_remove(name);
    }
    cmd.args(args)
        .envs(start.env.iter().map(|(k, v)| (k, v)))
        .process_group(0);
    let (take_terminal, parent) = (start.take_terminal, start.parent);
    let hook = move || -> io::Result<()> {
        nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
        // The parent may have died before the line above took effect.
        if nix::unistd::getppid() != parent {
            return Err(io::Error::from_raw_os_error(nix::libc::ESRCH));
        }
        nix::unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0))?;
        if take_terminal {
            // SIGTTOU is blocked (inherited from the watchdog) for this call.
            let _ = nix::unistd::tcsetpgrp(std::io::stdin(), nix::unistd::getpid());
        }
        sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
        Ok(())
    };
    // SAFETY: the hook runs in the forked child of the watchdog, a process
    // with one thread, so nothing it calls can find a lock held by a thread
    // that was not copied; it only changes the child's own state.
    unsafe { cmd.pre_exec(hook) };
    let child = cmd.spawn()?;
    Ok(Pid::from_raw(child.id() as i32))
}

/// A timer descriptor that tokio can wait on.
pub struct AsyncTimer(TimerFd);

impl AsyncTimer {
    pub fn timer(&self) -> &TimerFd {
        &self.0
    }
}

impl AsRawFd for AsyncTimer {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

/// Registers `timer` with the tokio runtime, which then owns it.
pub fn async_timer(timer: TimerFd) -> io::Result<tokio::io::unix::AsyncFd<AsyncTimer>> {
    // SAFETY: the descriptor is owned by the `AsyncTimer` that the `AsyncFd`
    // owns, so it stays open and the same for the whole registration.
    unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(
            AsyncTimer(timer),
            tokio::io::Interest::READABLE,
        )
    }
    .map_err(|e| e.into_parts().1)
}
