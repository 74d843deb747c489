//! A watchdog process that kills the child's whole process group when yaraus
//! dies, however it dies.
//!
//! `PR_SET_PDEATHSIG` reaches only the direct child: the `sleep` under
//! `sh -c 'worker & sleep 1000'` would survive a SIGKILLed yaraus and go on
//! using an id, a lock or an index about to be handed to someone else. So
//! next to the child yaraus keeps a tiny guard process that blocks reading a
//! pipe whose only write end yaraus holds. The kernel closes that end when
//! yaraus exits for any reason, SIGKILL included; the guard then reads
//! end-of-file and SIGKILLs the child's group. When yaraus ends normally, it
//! first writes one byte ("stand down"), because by then the group is gone
//! and its number must not be signalled again.
//!
//! The child itself tells the guard its group, between its clone and its
//! exec ([`crate::spawn::PreExec::announce`]), so the guard knows the group
//! before the command can start anything: there is no moment when a
//! grandchild could outlive yaraus unguarded.
//!
//! # Two ways to start it
//!
//! On x86_64 and aarch64 Linux the guard shares yaraus's memory
//! (`clone(CLONE_VM)`, the way `posix_spawn` starts its child, but without
//! waiting for an `exec`), and the child announces its group by storing it
//! in that memory: nothing is copied, nothing becomes copy-on-write, and
//! nobody wakes the guard until the end. A `fork` in its place cost about
//! 0.1 ms of the 3 ms that `yaraus lock NAME -- true` takes on the VM this
//! project is measured on (docs/benchmarks.md).
//!
//! Sharing the memory sets the rules: the guard runs on a stack of its own
//! that is never freed (it may outlive yaraus, and then keeps the memory
//! alive by itself); it makes raw system calls only, because a libc wrapper
//! would store `errno` in the thread-local storage of the yaraus thread that
//! started it; and it starts with every signal blocked and never unblocks
//! one, so that no handler of yaraus's can run in it (SIGKILL still ends
//! it).
//!
//! Elsewhere the guard is a forked copy of yaraus, which only makes
//! async-signal-safe calls, and the child announces its group on the pipe.

use nix::fcntl::OFlag;
use nix::libc;
use nix::unistd::Pid;
use std::os::fd::{OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};

/// How the child tells its guard which process group to kill.
#[derive(Clone, Copy, Debug)]
pub enum Announce {
    /// Store the group in memory the guard shares.
    Shared(&'static AtomicI32),
    /// Write the group (a native-endian `i32`) to the guard's pipe.
    Pipe(RawFd),
}

impl Announce {
    /// Announces `group`; async-signal-safe (for a vfork child). False if
    /// the pipe refused it.
    pub fn announce(self, group: i32) -> bool {
        match self {
            Announce::Shared(slot) => {
                slot.store(group, Ordering::SeqCst);
                true
            }
            Announce::Pipe(fd) => {
                let bytes = group.to_ne_bytes();
                // SAFETY: writing a buffer of ours to a descriptor we hold.
                let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
                n == bytes.len() as isize
            }
        }
    }
}

/// The parent's end of a guard. Dropping it without [`Guard::stand_down`]
/// makes the guard kill the announced group, exactly as yaraus dying would;
/// dropping it reaps the guard.
pub struct Guard {
    alive: Option<OwnedFd>,
    pid: Pid,
    announce: Announce,
}

impl Guard {
    /// Starts a guard that waits for a group to be announced.
    pub fn start() -> nix::Result<Guard> {
        #[cfg(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        {
            shared::start()
        }
        #[cfg(not(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        )))]
        {
            forked::start()
        }
    }

    /// How the child tells this guard its group.
    pub fn announcement(&self) -> Announce {
        self.announce
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

/// A pipe whose read end the guard watches; both ends close on exec.
fn pipe() -> nix::Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(OFlag::O_CLOEXEC)
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod shared {
    //! The guard in yaraus's own memory; see the module comment above.
    use super::{Announce, Guard};
    use nix::libc;
    use nix::unistd::Pid;
    use std::os::fd::{AsRawFd, IntoRawFd};
    use std::sync::atomic::{AtomicI32, Ordering};

    const STACK: usize = 16 * 1024;

    /// What the guard reads; leaked with its stack, for the same reason.
    struct Watch {
        read_fd: i32,
        write_fd: i32,
        group: AtomicI32,
    }

    pub(super) fn start() -> nix::Result<Guard> {
        let (read_end, write_end) = super::pipe()?;
        let watch: &'static Watch = Box::leak(Box::new(Watch {
            read_fd: read_end.into_raw_fd(),
            write_fd: write_end.as_raw_fd(),
            group: AtomicI32::new(0),
        }));
        let stack: &'static mut [u8] = Box::leak(vec![0u8; STACK].into_boxed_slice());
        let end = stack.as_mut_ptr_range().end;
        // SAFETY: stays inside the stack (at most 15 bytes below its end).
        let top = unsafe { end.sub(end as usize % 16) };
        let started = crate::signals::with_all_blocked(|| {
            // SAFETY: `guard_main` keeps the rules of the module comment;
            // its stack and its `Watch` are leaked, so they stay valid for
            // as long as the guard runs.
            let pid = unsafe {
                libc::clone(
                    guard_main,
                    top.cast(),
                    libc::CLONE_VM | libc::SIGCHLD,
                    watch as *const Watch as *mut libc::c_void,
                )
            };
            nix::errno::Errno::result(pid)
        });
        // Our copy of the read end: the guard has its own.
        // SAFETY: this descriptor is ours and nothing else uses it.
        unsafe { libc::close(watch.read_fd) };
        let pid = started??;
        Ok(Guard {
            alive: Some(write_end),
            pid: Pid::from_raw(pid),
            announce: Announce::Shared(&watch.group),
        })
    }

    extern "C" fn guard_main(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` is the leaked `Watch` that `start` passed.
        let watch = unsafe { &*(arg as *const Watch) };
        // SAFETY: raw system calls on descriptors of the guard's own table
        // and on buffers of its own stack.
        unsafe {
            // Keep nothing but the read end: not our own write end (or
            // yaraus's end would never be the last), not the terminal or a
            // pipe of the caller (a shell reading yaraus's output must see
            // its end with yaraus), not yaraus's sockets, and not the write
            // end of another guard's pipe, which would keep that guard
            // waiting for us.
            let read = watch.read_fd as usize;
            let below = if read > 0 {
                syscall(libc::SYS_close_range, 0, read - 1, 0)
            } else {
                0
            };
            let above = syscall(libc::SYS_close_range, read + 1, u32::MAX as usize, 0);
            if below < 0 || above < 0 {
                // A kernel before 5.9: at least what matters most.
                syscall(libc::SYS_close, watch.write_fd as usize, 0, 0);
                for fd in (0..3).filter(|&fd| fd != read) {
                    syscall(libc::SYS_close, fd, 0, 0);
                }
            }
            let mut byte = [0u8; 1];
            let n = loop {
                let n = syscall(
                    libc::SYS_read,
                    watch.read_fd as usize,
                    byte.as_mut_ptr() as usize,
                    1,
                );
                if n != -(libc::EINTR as isize) {
                    break n;
                }
            };
            let group = watch.group.load(Ordering::SeqCst);
            if n <= 0 && group > 1 {
                syscall(
                    libc::SYS_kill,
                    (-group) as isize as usize,
                    libc::SIGKILL as usize,
                    0,
                );
            }
            syscall(libc::SYS_exit_group, 0, 0, 0);
        }
        0
    }

    /// A system call that leaves `errno` alone: the result, or -errno.
    #[cfg(target_arch = "x86_64")]
    unsafe fn syscall(nr: libc::c_long, a: usize, b: usize, c: usize) -> isize {
        let ret: isize;
        // SAFETY: the caller passes a valid system call and arguments.
        unsafe {
            std::arch::asm!(
                "syscall",
                inlateout("rax") nr as isize => ret,
                in("rdi") a,
                in("rsi") b,
                in("rdx") c,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
        }
        ret
    }

    /// A system call that leaves `errno` alone: the result, or -errno.
    #[cfg(target_arch = "aarch64")]
    unsafe fn syscall(nr: libc::c_long, a: usize, b: usize, c: usize) -> isize {
        let ret: isize;
        // SAFETY: the caller passes a valid system call and arguments.
        unsafe {
            std::arch::asm!(
                "svc 0",
                in("x8") nr,
                inlateout("x0") a as isize => ret,
                in("x1") b,
                in("x2") c,
                options(nostack),
            );
        }
        ret
    }
}

#[cfg_attr(
    all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ),
    allow(dead_code)
)]
mod forked {
    //! The guard as a forked copy of yaraus, for other platforms.
    use super::{Announce, Guard};
    use nix::unistd::{ForkResult, Pid};
    use std::os::fd::{AsRawFd, OwnedFd};

    pub(super) fn start() -> nix::Result<Guard> {
        let (read_end, write_end) = super::pipe()?;
        // SAFETY: the child branch only calls async-signal-safe functions.
        let forked = crate::signals::with_all_blocked(|| unsafe { nix::unistd::fork() })?;
        match forked? {
            ForkResult::Child => {
                drop(write_end);
                // Keep nothing but the read end (see the shared guard).
                let read = std::os::fd::AsRawFd::as_raw_fd(&read_end);
                // SAFETY: descriptors of our own, freshly forked process.
                unsafe {
                    for fd in (0..1024).filter(|&fd| fd != read) {
                        nix::libc::close(fd);
                    }
                }
                watch(&read_end);
                // SAFETY: _exit is async-signal-safe and skips atexit
                // handlers and destructors that belong to the parent's state.
                unsafe { nix::libc::_exit(0) }
            }
            ForkResult::Parent { child } => {
                drop(read_end);
                let fd = write_end.as_raw_fd();
                Ok(Guard {
                    alive: Some(write_end),
                    pid: child,
                    announce: Announce::Pipe(fd),
                })
            }
        }
    }

    /// Learn the group, then wait for "stand down" or for yaraus's end.
    fn watch(pipe: &OwnedFd) {
        let mut announced = [0u8; 4];
        if !read_exact(pipe, &mut announced) {
            return;
        }
        let group = Pid::from_raw(i32::from_ne_bytes(announced));
        let mut byte = [0u8; 1];
        if !read_exact(pipe, &mut byte) && group.as_raw() > 1 {
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        }
    }

    /// Fills `buf`; false at end-of-file (or on an error, which means the
    /// same here: nobody will write again).
    fn read_exact(pipe: &OwnedFd, buf: &mut [u8]) -> bool {
        let mut filled = 0;
        while filled < buf.len() {
            match nix::unistd::read(pipe, &mut buf[filled..]) {
                Ok(0) => return false,
                Ok(n) => filled += n,
                Err(nix::errno::Errno::EINTR) => {}
                Err(_) => return false,
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::{CommandExt, ExitStatusExt};

    /// A `sleep` leading a process group of its own, announced to `guard`.
    fn guarded_sleep(guard: &Guard) -> std::process::Child {
        let child = std::process::Command::new("sleep")
            .arg("60")
            .process_group(0)
            .spawn()
            .unwrap();
        assert!(guard.announcement().announce(child.id() as i32));
        child
    }

    fn killed_when_dropped(guard: Guard) {
        let mut child = guarded_sleep(&guard);
        drop(guard);
        assert_eq!(child.wait().unwrap().signal(), Some(9));
    }

    #[test]
    fn the_platforms_guard_kills_the_announced_group_when_dropped() {
        killed_when_dropped(Guard::start().unwrap());
    }

    /// The fallback must work too, wherever the tests run.
    #[test]
    fn a_forked_guard_kills_the_announced_group_when_dropped() {
        killed_when_dropped(forked::start().unwrap());
    }

    #[test]
    fn a_guard_holds_no_descriptor_of_its_caller() {
        use std::os::fd::AsRawFd;
        let starts: [fn() -> nix::Result<Guard>; 2] = [Guard::start, forked::start];
        for start in starts {
            // Inherited the way a caller's pipe (or another guard's) would be.
            let (read_end, write_end) = nix::unistd::pipe().unwrap();
            let guard = start().unwrap();
            drop(write_end);
            // The pipe hangs up once no copy of its write end is left: at
            // once if the guard closed its own, never while the guard runs
            // otherwise.
            let mut fds = [libc::pollfd {
                fd: read_end.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }];
            // SAFETY: one valid pollfd, for the length given.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), 1, 5000) };
            assert_eq!(ready, 1, "the guard still holds the caller's pipe");
            let mut byte = [0u8; 1];
            assert_eq!(nix::unistd::read(&read_end, &mut byte), Ok(0));
            drop(guard);
        }
    }

    #[test]
    fn a_guard_that_stood_down_kills_nothing() {
        for mut guard in [Guard::start().unwrap(), forked::start().unwrap()] {
            let mut child = guarded_sleep(&guard);
            guard.stand_down();
            drop(guard);
            assert!(child.try_wait().unwrap().is_none());
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }
}
