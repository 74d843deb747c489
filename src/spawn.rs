//! Starting the child the way `posix_spawn` does: `clone(CLONE_VM |
//! CLONE_VFORK)`, so that nothing of yaraus's address space is copied, with
//! the few steps yaraus needs between the clone and the `exec` that
//! `posix_spawn` cannot express (`PR_SET_PDEATHSIG`, above all).
//!
//! Why not `fork`: `std::process::Command` forks as soon as a `pre_exec` hook
//! is set, and a fork copies the page tables of a process that holds a tokio
//! runtime and its connections, then makes every page it touches afterwards a
//! copy-on-write fault. On the VM this project is measured on, that cost
//! about 0.2 ms of a `yaraus lock NAME -- true` that takes 3 ms in all
//! (docs/benchmarks.md).
//!
//! The rules of a vfork child, which the code below keeps: it runs on a stack
//! of its own inside the parent's memory while the calling thread is
//! suspended, so it allocates nothing, takes no lock, and calls only
//! async-signal-safe functions on data prepared beforehand. Every signal is
//! blocked around the clone and, in the child, every signal that has a
//! handler gets its default disposition back before the mask is restored, so
//! that a signal arriving before the `exec` can never run one of yaraus's
//! handlers (tokio's) in the child, on memory the parent shares. An `exec`
//! failure is passed back through that shared memory.

use crate::guard::Announce;
use nix::libc;
use nix::sched::CloneFlags;
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use std::ffi::{CString, OsStr};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicI32, Ordering};

/// What the child does between the clone and the exec.
#[derive(Clone, Copy, Debug, Default)]
pub struct PreExec {
    /// Make the child's new process group the terminal's foreground group
    /// (stdin's terminal).
    pub take_terminal: bool,
    /// Tell the guard the child's group first, so that the guard knows it
    /// before the command can start anything.
    pub announce: Option<Announce>,
}

/// An exec failure before the program started: `errno` of the last attempt
/// (as `execvp` reports it), or of the step that failed.
fn os_error(errno: i32) -> io::Error {
    io::Error::from_raw_os_error(errno)
}

fn cstring(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} contains a NUL byte", s.to_string_lossy()),
        )
    })
}

/// Starts `argv` (looked up in `PATH` as `execvp` does, when it has no `/`)
/// with yaraus's environment plus `env`, as the leader of a new process
/// group that gets SIGKILL when the calling thread dies. Returns once the
/// program runs (the child has `exec`ed): an error means nothing runs.
///
/// The calling thread must outlive the child, since the kernel sends
/// `PR_SET_PDEATHSIG` when the *thread* that created the child exits; the
/// binary runs everything on its main thread.
pub fn spawn(argv: &[String], env: &[(String, String)], pre: PreExec) -> io::Result<Pid> {
    if argv.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no command"));
    }
    let args: Vec<CString> = argv
        .iter()
        .map(|a| cstring(OsStr::new(a)))
        .collect::<io::Result<_>>()?;
    let mut arg_ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    arg_ptrs.push(std::ptr::null());

    let mut vars: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os()
        .filter(|(k, _)| !env.iter().any(|(name, _)| OsStr::new(name) == k))
        .collect();
    vars.extend(env.iter().map(|(k, v)| (k.into(), v.into())));
    let envs: Vec<CString> = vars
        .iter()
        .map(|(k, v)| {
            let mut kv = k.clone();
            kv.push("=");
            kv.push(v);
            cstring(&kv)
        })
        .collect::<io::Result<_>>()?;
    let mut env_ptrs: Vec<*const libc::c_char> = envs.iter().map(|e| e.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());

    // The child searches PATH as execvp does; glibc's execvpe builds the
    // candidates on the stack (and so does its fallback to /bin/sh for a
    // script without #!), hence posix_spawn's stack size: 64 KiB beyond the
    // argument vector.
    let mut stack = vec![0u8; 64 * 1024 + 8 * (argv.len() + 1) + 4096];
    let failure = AtomicI32::new(0);
    let parent = nix::unistd::getpid();

    // SAFETY: sigemptyset only writes the set it is given.
    let empty = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        set
    };
    let child_main = || -> isize {
        // SAFETY (the whole closure): a vfork child; see the module comment.
        // Only raw system calls and execvpe, on data prepared above.
        unsafe {
            let fail = |errno: i32| -> isize {
                failure.store(errno.max(1), Ordering::SeqCst);
                libc::_exit(127)
            };
            let errno = || *libc::__errno_location();

            // No handler of ours may run here; the exec resets the rest.
            let mut old: libc::sigaction = std::mem::zeroed();
            for sig in 1..=libc::SIGRTMAX() {
                if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction != libc::SIG_DFL
                    && old.sa_sigaction != libc::SIG_IGN
                {
                    let mut dfl: libc::sigaction = std::mem::zeroed();
                    dfl.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(sig, &dfl, std::ptr::null_mut());
                }
            }
            // Rust ignores SIGPIPE in yaraus; a command expects the default
            // (std::process::Command resets it too).
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(libc::SIGPIPE, &dfl, std::ptr::null_mut());

            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return fail(errno());
            }
            // yaraus may have died before the line above took effect.
            if libc::getppid() != parent.as_raw() {
                return fail(libc::ESRCH);
            }
            if libc::setpgid(0, 0) != 0 {
                return fail(errno());
            }
            let me = libc::getpid();
            if pre.take_terminal {
                // We are in a background group now: tcsetpgrp would stop us
                // with SIGTTOU unless it is ignored for the call.
                let mut ign: libc::sigaction = std::mem::zeroed();
                ign.sa_sigaction = libc::SIG_IGN;
                let mut saved: libc::sigaction = std::mem::zeroed();
                libc::sigaction(libc::SIGTTOU, &ign, &mut saved);
                libc::tcsetpgrp(0, me);
                libc::sigaction(libc::SIGTTOU, &saved, std::ptr::null_mut());
            }
            if let Some(announce) = pre.announce {
                if !announce.announce(me) {
                    return fail(errno());
                }
            }
            // An empty mask, as std::process::Command leaves it.
            libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            libc::execvpe(arg_ptrs[0], arg_ptrs.as_ptr(), env_ptrs.as_ptr());
            fail(errno())
        }
    };

    // SAFETY: CLONE_VFORK suspends this thread until the child has exec'd or
    // exited, so the closure, the stack and everything they borrow outlive
    // the child's use of them; the child keeps the rules of the module
    // comment.
    let cloned = crate::signals::with_all_blocked(|| unsafe {
        nix::sched::clone(
            Box::new(child_main),
            &mut stack,
            CloneFlags::CLONE_VM | CloneFlags::CLONE_VFORK,
            Some(Signal::SIGCHLD as i32),
        )
    });
    let pid = cloned.and_then(|c| c).map_err(io::Error::from)?;
    match failure.load(Ordering::SeqCst) {
        0 => Ok(pid),
        errno => {
            let _ = nix::sys::wait::waitpid(pid, None);
            Err(os_error(errno))
        }
    }
}
