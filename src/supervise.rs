//! The child: spawn it, forward signals to it, kill its whole tree when the
//! claim is lost, and report its exit status as a shell would.
//!
//! Design, after tini and watchexec's process-wrap:
//!
//! * The child leads a process group of its own, so one `killpg` reaches it
//!   and everything it started (`sh -c 'a | b'`), and a signal meant for it
//!   is never delivered twice.
//! * When yaraus runs in the foreground of a terminal, the child's group is
//!   made the terminal's foreground group, so an interactive child can read
//!   the terminal and Ctrl-C reaches it exactly once. The terminal is handed
//!   back when the child ends.
//! * Ctrl-Z stops the child's group; yaraus then takes the terminal back and
//!   stops itself, as a job-control shell expects of its job (sudo does the
//!   same), and on `fg` hands the terminal back and continues the child. In
//!   an orphaned process group (no shell to continue us) the kernel discards
//!   our SIGTSTP, and the child is simply continued.
//! * The child gets `PR_SET_PDEATHSIG(SIGKILL)`: if yaraus is SIGKILLed, the
//!   kernel kills the child, which would otherwise go on using an id, a lock
//!   or an index that is about to be handed to someone else. It is started
//!   the way `posix_spawn` starts a program ([`crate::spawn`]), without
//!   copying yaraus's memory, and waited for on SIGCHLD, without a thread.
//! * PDEATHSIG reaches only the child itself, so a guard process
//!   ([`crate::guard`]) SIGKILLs the whole group if yaraus dies, and yaraus
//!   is the subreaper of the group's orphans, so that a finished orphan is
//!   reaped instead of counting as a live member of the group.
//! * Exit status: the child's code; 128+N when it died of signal N; 127 when
//!   the command was not found and 126 when it could not be executed.

use crate::error::{EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND, Error, Result};
use crate::guard::Guard;
use crate::spawn::PreExec;
use nix::sys::signal::{self, SigHandler, Signal};
use nix::unistd::Pid;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

/// Replaces every occurrence of `placeholder` in every argument with `value`.
pub fn substitute(argv: &[String], placeholder: &str, value: &str) -> Vec<String> {
    if placeholder.is_empty() {
        return argv.to_vec();
    }
    argv.iter().map(|a| a.replace(placeholder, value)).collect()
}

/// The exit status a shell would report for `status`.
pub fn exit_code(status: ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(sig)) => 128 + sig,
        (None, None) => crate::error::EXIT_SOFTWARE,
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct ChildSpec {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// What [`Child::event`] reports.
#[derive(Clone, Copy, Debug)]
pub enum ChildEvent {
    Exited(ExitStatus),
    Stopped(Signal),
}

/// A running child and its process group.
pub struct Child {
    pid: Pid,
    /// SIGCHLD, to learn without a thread of our own that the child stopped
    /// or ended.
    sigchld: tokio::signal::unix::Signal,
    status: Option<ExitStatus>,
    terminal: Option<Terminal>,
    guard: Option<Guard>,
}

impl Child {
    /// Starts the child in a new process group, guarded, with the terminal
    /// when yaraus has it.
    ///
    /// It must be called from a thread that outlives the child (the kernel
    /// sends `PR_SET_PDEATHSIG` when the creating *thread* exits): the
    /// binary runs everything on its main thread.
    pub async fn spawn(spec: &ChildSpec) -> Result<Child> {
        let Some(program) = spec.argv.first().cloned() else {
            return Err(Error::Usage("no command given to run".into()));
        };
        // Orphans of the child's group are re-parented to us, not to init, so
        // that we can reap them: a zombie still counts as a member of the
        // group, and init may reap late (or never, in a container).
        let _ = nix::sys::prctl::set_child_subreaper(true);
        // Registered before the child exists, so that no SIGCHLD is missed.
        let sigchld = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child())
            .map_err(|e| {
                Error::Exec(
                    EXIT_CANNOT_EXECUTE,
                    format!("cannot watch for SIGCHLD: {e}"),
                )
            })?;
        let mut guard = match Guard::start() {
            Ok(guard) => Some(guard),
            Err(e) => {
                crate::warn!("cannot start the guard of the command's process group: {e}");
                None
            }
        };
        let terminal = Terminal::foreground();
        let pre = PreExec {
            take_terminal: terminal.is_some(),
            announce: guard.as_ref().map(Guard::announcement),
        };
        let pid = match crate::spawn::spawn(&spec.argv, &spec.env, pre) {
            Ok(pid) => pid,
            Err(e) => {
                if let Some(t) = &terminal {
                    t.restore();
                }
                if let Some(g) = guard.as_mut() {
                    g.stand_down();
                }
                return Err(exec_error(&program, e));
            }
        };
        Ok(Child {
            pid,
            sigchld,
            status: None,
            terminal,
            guard,
        })
    }

    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// Sends `sig` to the child's whole process group.
    pub fn signal(&self, sig: Signal) {
        if self.status.is_none() {
            let _ = signal::killpg(self.pid, sig);
        }
    }

    /// The next thing that happens to the child: it ends, or it is stopped
    /// (Ctrl-Z, SIGSTOP). Cancel-safe.
    pub async fn event(&mut self) -> ChildEvent {
        loop {
            if let Some(event) = self.poll_event() {
                return event;
            }
            // A notification may stand for several SIGCHLDs, or for one of
            // another child (the guard): the loop asks the kernel again.
            if self.sigchld.recv().await.is_none() {
                // The signal driver is gone (the runtime is shutting down):
                // nothing will tell us any more, so ask now and then.
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }

    /// What `waitpid` says now, without blocking.
    fn poll_event(&mut self) -> Option<ChildEvent> {
        use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
        if let Some(status) = self.status {
            return Some(ChildEvent::Exited(status));
        }
        loop {
            let flags = WaitPidFlag::WNOHANG | WaitPidFlag::WUNTRACED;
            let status = match waitpid(self.pid, Some(flags)) {
                Ok(WaitStatus::StillAlive) => return None,
                Ok(WaitStatus::Stopped(_, sig)) => return Some(ChildEvent::Stopped(sig)),
                Ok(WaitStatus::Exited(_, code)) => ExitStatus::from_raw((code & 0xff) << 8),
                Ok(WaitStatus::Signaled(_, sig, core)) => {
                    ExitStatus::from_raw(sig as i32 | if core { 0x80 } else { 0 })
                }
                Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
                // wait(2) cannot fail for our own child; report it as
                // yaraus's failure.
                Err(_) => ExitStatus::from_raw(crate::error::EXIT_SOFTWARE << 8),
            };
            return Some(ChildEvent::Exited(self.finish(status)));
        }
    }

    /// Follows a stop of the child as a job-control shell would see it: when
    /// the child had the terminal (the user typed Ctrl-Z), yaraus takes the
    /// terminal back and stops itself too, so that the user's shell gets
    /// control; once continued in the foreground (`fg`), it hands the
    /// terminal back and continues the child. Without a terminal a stopped
    /// child is left to whoever stopped it.
    ///
    /// While yaraus is stopped it renews nothing: if it stays stopped past
    /// its deadline, the claim is lost and the child is killed when yaraus
    /// runs again, exactly as for any holder that cannot renew.
    pub fn follow_stop(&self, sig: Signal) {
        let Some(terminal) = &self.terminal else {
            return;
        };
        crate::info!("the command was stopped by {sig}; stopping too");
        terminal.restore();
        let _ = signal::kill(nix::unistd::getpid(), Signal::SIGTSTP);
        // Here again after SIGCONT.
        if terminal.is_foreground() {
            terminal.give_to(self.pid);
        }
        let _ = signal::killpg(self.pid, Signal::SIGCONT);
        crate::info!("continued; so is the command");
    }

    /// Waits for the child to end (stops are left to whoever stopped it).
    /// Cancel-safe.
    pub async fn wait(&mut self) -> ExitStatus {
        loop {
            if let ChildEvent::Exited(status) = self.event().await {
                return status;
            }
        }
    }

    /// Records how the child ended, and takes the terminal back.
    fn finish(&mut self, status: ExitStatus) -> ExitStatus {
        self.status = Some(status);
        if let Some(t) = self.terminal.take() {
            t.restore();
        }
        status
    }

    /// SIGTERM to the group, SIGKILL after `kill_after`; returns the status.
    pub async fn terminate(&mut self, kill_after: Duration) -> ExitStatus {
        self.signal(Signal::SIGTERM);
        let _ = signal::killpg(self.pid, Signal::SIGCONT);
        match tokio::time::timeout(kill_after, self.wait()).await {
            Ok(status) => status,
            Err(_) => {
                crate::warn!(
                    "child {} did not stop within {}; sending SIGKILL",
                    self.pid,
                    humantime::format_duration(kill_after)
                );
                self.signal(Signal::SIGKILL);
                self.wait().await
            }
        }
    }

    /// After the child ended: processes it left behind in its group would
    /// go on using what we are about to release. SIGTERM them, and SIGKILL
    /// whatever is left after `kill_after`.
    pub async fn kill_leftovers(&mut self, kill_after: Duration) {
        if self.group_alive() {
            crate::warn!(
                "the child left processes in its group {}; stopping them",
                self.pid
            );
            let _ = signal::killpg(self.pid, Signal::SIGTERM);
            let _ = signal::killpg(self.pid, Signal::SIGCONT);
            let until = tokio::time::Instant::now() + kill_after;
            while self.group_alive() && tokio::time::Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            if self.group_alive() {
                let _ = signal::killpg(self.pid, Signal::SIGKILL);
                // SIGKILL cannot be ignored; give the kernel a moment to
                // finish the processes so that we can reap the orphans.
                let until = tokio::time::Instant::now() + Duration::from_millis(200);
                while self.group_alive() && tokio::time::Instant::now() < until {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        }
        if let Some(guard) = self.guard.as_mut() {
            guard.stand_down();
        }
    }

    /// Whether any process of the child's group is left, after reaping the
    /// group's orphans that have exited (ours, as the subreaper). Only called
    /// once the group leader has been waited for, so that this never takes
    /// its exit status from [`Child::event`].
    fn group_alive(&self) -> bool {
        use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
        let group = Pid::from_raw(-self.pid.as_raw());
        while let Ok(status) = waitpid(group, Some(WaitPidFlag::WNOHANG)) {
            if status == WaitStatus::StillAlive {
                break;
            }
        }
        signal::killpg(self.pid, None).is_ok()
    }
}

fn exec_error(program: &str, e: io::Error) -> Error {
    match e.kind() {
        io::ErrorKind::NotFound => Error::Exec(
            EXIT_NOT_FOUND,
            format!("cannot run '{program}': command not found"),
        ),
        _ => Error::Exec(EXIT_CANNOT_EXECUTE, format!("cannot run '{program}': {e}")),
    }
}

/// The terminal yaraus was in the foreground of, handed to the child and
/// taken back when it ends.
struct Terminal {
    ours: Pid,
}

impl Terminal {
    /// Some when stdin is a terminal whose foreground group is ours.
    fn foreground() -> Option<Terminal> {
        let stdin = std::io::stdin();
        if !nix::unistd::isatty(&stdin).unwrap_or(false) {
            return None;
        }
        let ours = nix::unistd::getpgrp();
        match nix::unistd::tcgetpgrp(&stdin) {
            Ok(fg) if fg == ours => Some(Terminal { ours }),
            _ => None,
        }
    }

    /// Whether our group is the terminal's foreground group now.
    fn is_foreground(&self) -> bool {
        nix::unistd::tcgetpgrp(std::io::stdin()).is_ok_and(|fg| fg == self.ours)
    }

    /// Makes `pgid` the terminal's foreground group.
    fn give_to(&self, pgid: Pid) {
        // SAFETY: changing a signal disposition of our own process.
        unsafe {
            if let Ok(old) = signal::signal(Signal::SIGTTOU, SigHandler::SigIgn) {
                let _ = nix::unistd::tcsetpgrp(std::io::stdin(), pgid);
                let _ = signal::signal(Signal::SIGTTOU, old);
            }
        }
    }

    fn restore(&self) {
        // SAFETY: changing a signal disposition of our own process.
        unsafe {
            if let Ok(old) = signal::signal(Signal::SIGTTOU, SigHandler::SigIgn) {
                let _ = nix::unistd::tcsetpgrp(std::io::stdin(), self.ours);
                let _ = signal::signal(Signal::SIGTTOU, old);
            }
        }
    }
}
