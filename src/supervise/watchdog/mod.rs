//! The watchdog: the process that starts the command, and the one thing
//! that makes sure nothing of it runs past the claim's deadline.
//!
//! yaraus forks it first thing, while yaraus still has a single thread, and
//! talks to it over a socket ([`super::protocol`]). It is deliberately
//! small and separate, so that what can happen to yaraus cannot happen to it:
//!
//! * It leads a process group of its own, so `kill -9 -PGID` of yaraus's job
//!   does not reach it, and it blocks every signal a terminal or a job
//!   control shell sends; only SIGKILL aimed at it ends it.
//! * It does not share yaraus's memory, so the OOM killer choosing yaraus
//!   does not take it along, and it never waits for yaraus: a yaraus that is
//!   frozen (SIGSTOP, a debugger, a frozen cgroup) or blocked (a full stderr)
//!   does not freeze it.
//! * It is the command's parent and a child subreaper, so every descendant
//!   of the command stays its descendant, whatever process group or session
//!   it moves to; and the command gets SIGKILL if the watchdog dies.
//! * It keeps the deadline itself, on `CLOCK_BOOTTIME`: yaraus sends each new
//!   one after a renewal. At deadline − kill-after it sends SIGTERM (and
//!   SIGCONT) to the whole tree, at the deadline SIGKILL; a job that the user
//!   suspended is SIGKILLed without being continued.
//! * When yaraus's end of the socket closes (yaraus died, however), it
//!   SIGKILLs the whole tree at once and exits once nothing is left.
//!
//! It holds nothing yaraus opened after the fork (Redis connections): only
//! the socket, and the standard descriptors that the command inherits.
//!
//! Its state is three phases ([`state`]): the command's life, how far
//! stopping its tree has gone, and yaraus's link. Each moves in one place:
//! `spawn`, `command_ended` and `all_gone`; `terminate` and `kill_all`;
//! `stand_down` and `yaraus_gone`. It logs nothing: its reports go to the
//! socket, which is all it has of yaraus's after the fork.

mod state;

use super::protocol::{Frames, Order, Report, frame};
use super::tree;
use crate::base::BootInstant;
use crate::base::boot_clock::arm;
use crate::base::sys::{self, CommandStart};
use crate::timing::supervise::KILL_SWEEP;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, Signal, killpg};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::timerfd::TimerFd;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use state::{Command, Link, Ready, Stopping};
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// The signals the watchdog blocks for good, so that only SIGKILL ends it: a
/// Ctrl-C, a hang-up or a `kill` meant for the job must not take away the
/// process that guarantees the job's end. The command starts with an empty
/// mask, and so gets them as yaraus got them (at their default action, or
/// ignored where yaraus was started with them ignored).
const BLOCKED_BY_WATCHDOG: [Signal; 9] = [
    Signal::SIGINT,
    Signal::SIGQUIT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGTSTP,
    Signal::SIGTTIN,
    Signal::SIGTTOU,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
];

/// Runs the watchdog in the forked process; never returns.
pub(crate) fn run(link: UnixStream) -> ! {
    let code = match Watch::new(link) {
        Ok(mut watch) => watch.run(),
        Err(_) => 1,
    };
    // Nothing of this copy's buffers holds output: it was forked before
    // yaraus wrote any.
    std::process::exit(code)
}

struct Watch {
    me: Pid,
    link: UnixStream,
    frames: Frames,
    outbox: Vec<u8>,
    sigchld: SignalFd,
    timer: TimerFd,

    yaraus: Link,
    command: Command,
    stopping: Stopping,
    /// The last command's: by `deadline - kill_after` it gets SIGTERM, by
    /// `deadline` SIGKILL. Renewals move the deadline until stopping starts.
    kill_after: Duration,
    deadline: Option<BootInstant>,
}

impl Watch {
    fn new(link: UnixStream) -> nix::Result<Watch> {
        let me = nix::unistd::getpid();
        // Out of yaraus's job: a signal to that group must not reach us.
        nix::unistd::setpgid(me, me)?;
        nix::sys::prctl::set_child_subreaper(true)?;
        let _ = nix::sys::prctl::set_name(c"yaraus-watchdog");
        let mut blocked = SigSet::empty();
        for sig in BLOCKED_BY_WATCHDOG {
            blocked.add(sig);
        }
        blocked.add(Signal::SIGCHLD);
        sys::block(&blocked)?;
        let mut chld = SigSet::empty();
        chld.add(Signal::SIGCHLD);
        let sigchld = SignalFd::with_flags(&chld, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)?;
        let timer = BootInstant::now().timer()?;
        link.set_nonblocking(true).map_err(|_| nix::Error::EIO)?;
        Ok(Watch {
            me,
            link,
            frames: Frames::default(),
            outbox: Vec::new(),
            sigchld,
            timer,
            yaraus: Link::Open,
            command: Command::NotStarted,
            stopping: Stopping::No,
            kill_after: Duration::ZERO,
            deadline: None,
        })
    }

    fn run(&mut self) -> i32 {
        loop {
            self.arm_timer();
            let ready = self.wait().unwrap_or(Ready::POLL_FAILED);
            if ready.link {
                self.read_orders();
                self.flush();
            }
            if ready.sigchld {
                while let Ok(Some(_)) = self.sigchld.read_signal() {}
            }
            // Reaping is cheap and cannot miss anything; do it every round,
            // also when a SIGCHLD was merged with another.
            let was_running = self.command.running().is_some();
            let any_left = self.reap();
            let ended_now = was_running && self.command.running().is_none();
            if ended_now && any_left && self.stopping == Stopping::No {
                self.leftovers();
            }
            if ready.timer || self.due() {
                self.on_time();
            }
            if !any_left {
                self.all_gone();
                if self.yaraus.released() {
                    return 0;
                }
            }
        }
    }

    /// Blocks until the socket, a SIGCHLD or the timer has something.
    fn wait(&mut self) -> nix::Result<Ready> {
        let mut link_events = PollFlags::POLLIN;
        if !self.outbox.is_empty() {
            link_events |= PollFlags::POLLOUT;
        }
        let link = self.link.as_fd();
        let mut fds = vec![
            PollFd::new(self.sigchld.as_fd(), PollFlags::POLLIN),
            PollFd::new(self.timer.as_fd(), PollFlags::POLLIN),
        ];
        if self.yaraus != Link::Orphaned {
            fds.push(PollFd::new(link, link_events));
        }
        // A backstop for a timer that fires late (libfaketime moves
        // absolute expirations): poll's own timeout runs on the monotonic
        // clock, which never gets ahead of the boot clock, so it does not
        // end before the wake-up is due.
        let timeout = self.next_wake().map_or(PollTimeout::NONE, |at| {
            let ms = at.remaining().as_millis() + 1;
            PollTimeout::try_from(ms.min(i32::MAX as u128) as i32).unwrap_or(PollTimeout::MAX)
        });
        loop {
            match poll(&mut fds, timeout) {
                Ok(_) => break,
                Err(nix::Error::EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
        let ready = |fd: &PollFd| fd.revents().is_some_and(|r| !r.is_empty());
        Ok(Ready {
            link: fds.get(2).is_some_and(ready),
            sigchld: ready(&fds[0]),
            timer: ready(&fds[1]),
        })
    }

    /// Whether a timed action is due (the timer may have been re-armed
    /// after it fired).
    fn due(&self) -> bool {
        self.next_wake().is_some_and(BootInstant::has_passed)
    }

    fn next_wake(&self) -> Option<BootInstant> {
        match self.stopping {
            Stopping::No => self
                .sigterm_at()
                .filter(|_| self.command.running().is_some()),
            Stopping::Terminating { kill_at } => Some(kill_at),
            Stopping::Killing => Some(BootInstant::now() + KILL_SWEEP),
        }
    }

    /// When SIGTERM is due: the deadline minus kill-after.
    fn sigterm_at(&self) -> Option<BootInstant> {
        self.deadline.map(|d| d.saturating_sub(self.kill_after))
    }

    fn arm_timer(&self) {
        let _ = match self.next_wake() {
            Some(at) => arm(&self.timer, at),
            None => self.timer.unset(),
        };
    }

    fn on_time(&mut self) {
        // Drains the expiry (the timer is non-blocking); re-arming follows.
        let _ = self.timer.wait();
        if let (Stopping::No, Command::Running { suspended, .. }) = (self.stopping, self.command) {
            if self.deadline_due() {
                self.send(&Report::Expiring);
                if suspended {
                    let _ = self.kill_all();
                } else {
                    self.terminate();
                }
            }
        }
        match self.stopping {
            Stopping::Killing => {
                self.kill_all();
            }
            Stopping::Terminating { kill_at } if kill_at.has_passed() => {
                let left = self.kill_all();
                if left > 0 {
                    self.send(&Report::Killing(left));
                }
            }
            _ => {}
        }
    }

    /// SIGTERM and SIGCONT to the whole tree now, SIGKILL `kill_after` later
    /// or at the deadline, whichever comes first.
    fn terminate(&mut self) {
        if self.stopping != Stopping::No {
            return;
        }
        let below = tree::descendants(self.me);
        let group = self.command.group();
        tree::signal(&below, group, Signal::SIGTERM);
        // A stopped process cannot act on its SIGTERM.
        tree::signal(&below, group, Signal::SIGCONT);
        let mut kill_at = BootInstant::now() + self.kill_after;
        if let Some(deadline) = self.deadline {
            kill_at = kill_at.min(deadline);
        }
        self.stopping = Stopping::Terminating { kill_at };
    }

    /// SIGKILL to the whole tree, now and at every sweep until it is gone.
    /// Returns how many processes were alive.
    fn kill_all(&mut self) -> usize {
        self.stopping = Stopping::Killing;
        let below = tree::descendants(self.me);
        tree::signal(&below, self.command.group(), Signal::SIGKILL)
    }

    /// Reaps every child that ended (the command, and orphans of its tree
    /// that were handed to us), reporting the command's stops and end.
    /// Returns whether any child is left.
    fn reap(&mut self) -> bool {
        loop {
            let flags = WaitPidFlag::WNOHANG | WaitPidFlag::WUNTRACED;
            let status = match waitpid(None, Some(flags)) {
                Ok(WaitStatus::StillAlive) => return true,
                Err(nix::Error::ECHILD) => return false,
                Err(nix::Error::EINTR) => continue,
                Err(_) => return true,
                Ok(status) => status,
            };
            let is_command = status.pid().is_some() && status.pid() == self.command.running();
            if !is_command {
                continue;
            }
            match status {
                WaitStatus::Stopped(_, sig) => self.send(&Report::Stopped(sig as i32)),
                WaitStatus::Exited(_, code) => self.command_ended((code & 0xff) << 8),
                WaitStatus::Signaled(_, sig, core) => {
                    self.command_ended(sig as i32 | if core { 0x80 } else { 0 })
                }
                _ => {}
            }
        }
    }

    /// Whether the deadline minus kill-after has passed.
    fn deadline_due(&self) -> bool {
        self.sigterm_at().is_some_and(BootInstant::has_passed)
    }

    fn command_ended(&mut self, raw_status: i32) {
        self.command = Command::Ended {
            group: self.command.group(),
        };
        self.send(&Report::Exited(raw_status));
    }

    /// No child is left: an ended command's tree is gone, which yaraus
    /// hears once.
    fn all_gone(&mut self) {
        if let Command::Ended { group } = self.command {
            self.command = Command::Gone { group };
            self.send(&Report::Gone);
        }
    }

    /// The command ended and children are left (orphans of its tree, handed
    /// to us): they would go on using the claim, so they get what a lost
    /// claim gets.
    fn leftovers(&mut self) {
        let left = tree::descendants(self.me)
            .iter()
            .filter(|p| p.alive)
            .count();
        if left > 0 {
            self.send(&Report::Leftovers(left));
            self.terminate();
        }
    }

    fn read_orders(&mut self) {
        let mut buf = [0u8; 8192];
        loop {
            match self.link.read(&mut buf) {
                Ok(0) => {
                    self.yaraus_gone();
                    return;
                }
                Ok(n) => self.frames.push(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.yaraus_gone();
                    return;
                }
            }
        }
        loop {
            match self.frames.next_message::<Order>() {
                Ok(Some(order)) => self.obey(order),
                Ok(None) => break,
                // Not yaraus talking: nothing it says can be trusted.
                Err(_) => {
                    self.yaraus_gone();
                    return;
                }
            }
        }
    }

    fn yaraus_gone(&mut self) {
        self.yaraus = Link::Orphaned;
        let _ = self.kill_all();
    }

    fn obey(&mut self, order: Order) {
        match order {
            Order::Spawn {
                argv,
                env,
                env_remove,
                take_terminal,
                deadline,
                kill_after_ns,
            } => {
                let start = CommandStart {
                    argv: &argv,
                    env: &env,
                    env_remove: &env_remove,
                    take_terminal,
                    parent: self.me,
                };
                self.spawn(start, deadline, kill_after_ns);
            }
            Order::Deadline(at) => {
                // Once stopping has started, a renewal cannot call it off.
                if self.stopping == Stopping::No {
                    self.deadline = Some(BootInstant::from_nanos(at));
                }
            }
            Order::Signal(sig) => {
                if let (Some(group), Ok(sig)) = (self.command.running(), Signal::try_from(sig)) {
                    let _ = killpg(group, sig);
                }
            }
            Order::Suspend | Order::Resume => self.job_control(order == Order::Suspend),
            Order::Terminate => self.terminate(),
            Order::Kill => {
                let _ = self.kill_all();
            }
            Order::StandDown => self.stand_down(),
        }
    }

    /// yaraus needs us no more. It says so only once nothing is left; if
    /// something is, it goes.
    fn stand_down(&mut self) {
        if self.yaraus == Link::Open {
            self.yaraus = Link::StoodDown;
        }
        if self.reap() {
            let _ = self.kill_all();
        }
    }

    /// Starts the next command, the last one's tree being gone; one whose
    /// time to stop has already come is not started at all (yaraus was
    /// held up between its check and this order).
    fn spawn(&mut self, start: CommandStart, deadline: u64, kill_after_ns: u64) {
        if !self.command.may_start() {
            return;
        }
        self.stopping = Stopping::No;
        self.deadline = Some(BootInstant::from_nanos(deadline));
        self.kill_after = Duration::from_nanos(kill_after_ns);
        if self.deadline_due() {
            self.command = Command::Ended { group: None };
            self.send(&Report::TooLate);
            return;
        }
        match sys::spawn_command(start) {
            Ok(pid) => {
                self.command = Command::Running {
                    pid,
                    suspended: false,
                };
                self.send(&Report::Started(pid.as_raw()));
            }
            Err(e) => {
                self.command = Command::Ended { group: None };
                self.send(&Report::NotStarted {
                    errno: e.raw_os_error(),
                    message: e.to_string(),
                });
            }
        }
    }

    /// yaraus stops itself with the stopped command (`suspend`), or was
    /// continued (`fg`) and continues the command, unless it is being
    /// killed.
    fn job_control(&mut self, suspend: bool) {
        if let Command::Running { pid, suspended } = &mut self.command {
            *suspended = suspend;
            if !suspend && self.stopping != Stopping::Killing {
                let _ = killpg(*pid, Signal::SIGCONT);
            }
        }
    }

    /// Queues a report; it is written as the socket takes it, never waiting
    /// for yaraus (which may be frozen).
    fn send(&mut self, report: &Report) {
        if self.yaraus == Link::Orphaned {
            return;
        }
        self.outbox.extend_from_slice(&frame(report));
        self.flush();
    }

    fn flush(&mut self) {
        while !self.outbox.is_empty() {
            match self.link.write(&self.outbox) {
                Ok(0) => break,
                Ok(n) => {
                    self.outbox.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    }
}
