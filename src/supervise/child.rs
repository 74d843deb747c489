//! The command, as yaraus sees it: started, signalled and followed through
//! the watchdog, which is its parent (`watchdog/`).
//!
//! * The command leads a process group of its own, so one `killpg` reaches
//!   it and everything it started (`sh -c 'a | b'`), and a signal meant for
//!   it is never delivered twice. yaraus forwards the signals it catches.
//! * With a terminal, the command's group gets it while yaraus is in the
//!   foreground ([`super::terminal`]). Ctrl-Z stops the command; yaraus then
//!   takes the terminal back and stops itself with the same signal, as a
//!   job-control shell expects of its job (sudo does the same). When it is
//!   continued (`fg`, `bg`, or `kill -CONT`), it first looks at the claim:
//!   if its deadline passed meanwhile, the command is SIGKILLed where it
//!   stands and never runs again; otherwise it gets the terminal back (if
//!   yaraus is in the foreground) and is continued. Without a terminal, a
//!   stopped command is left to whoever stopped it.
//! * Exit status: the command's code; 128+N when it died of signal N; 127
//!   when it was not found and 126 when it could not be executed.

use super::link::Watchdog;
use super::protocol::{Order, Report};
use super::terminal::Terminal;
use crate::base::BootInstant;
use crate::error::{EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND, Error, Result};
use nix::sys::signal::Signal;
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
    /// Variables set for the command (its id, its token).
    pub env: Vec<(String, String)>,
    /// Variables of yaraus's environment it must not inherit (those that
    /// carry credentials, but for those the user lets through).
    pub env_remove: Vec<String>,
}

/// What happens to the command, as [`Child::event`] reports it.
#[derive(Clone, Copy, Debug)]
pub enum ChildEvent {
    /// It was stopped by this signal.
    Stopped(Signal),
    /// It ended.
    Exited(ExitStatus),
    /// It ended, leaving this many processes behind; they are being stopped.
    Leftovers(usize),
    /// This many processes outlived kill-after (or the deadline) after their
    /// SIGTERM, and got SIGKILL.
    Killing(usize),
    /// The deadline minus kill-after came: the watchdog is stopping it.
    Expiring,
    /// Nothing of its tree is left.
    Gone,
}

/// The running command.
pub struct Child {
    watchdog: Watchdog,
    pid: Pid,
    status: Option<ExitStatus>,
    terminal: Option<Terminal>,
    /// It reported a stop and has not been continued by us since.
    stopped: bool,
}

/// The watchdog stopped answering: it was killed, and the command with it.
fn watchdog_lost(e: io::Error) -> Error {
    Error::State(format!("lost the watchdog process ({e})"))
}

impl Child {
    /// Starts `spec` through `watchdog`; it must be gone by `deadline`, and
    /// gets SIGTERM `kill_after` before it.
    pub async fn spawn(
        mut watchdog: Watchdog,
        spec: &ChildSpec,
        deadline: BootInstant,
        kill_after: Duration,
    ) -> Result<Child> {
        let Some(program) = spec.argv.first().cloned() else {
            return Err(Error::Usage("no command given to run".into()));
        };
        let terminal = Terminal::of_session();
        let order = Order::Spawn {
            argv: spec.argv.clone(),
            env: spec.env.clone(),
            env_remove: spec.env_remove.clone(),
            take_terminal: terminal.as_ref().is_some_and(Terminal::is_foreground),
            deadline: deadline.as_nanos(),
            kill_after_ns: u64::try_from(kill_after.as_nanos()).unwrap_or(u64::MAX),
        };
        watchdog.order(&order).await.map_err(watchdog_lost)?;
        match watchdog.report().await.map_err(watchdog_lost)? {
            Report::Started(pid) => Ok(Child {
                watchdog,
                pid: Pid::from_raw(pid),
                status: None,
                terminal,
                stopped: false,
            }),
            Report::NotStarted { errno, message } => {
                watchdog.stand_down().await;
                Err(exec_error(&program, errno, &message))
            }
            Report::TooLate => {
                watchdog.stand_down().await;
                Err(Error::Lost(
                    "the claim ran out before the command could start".into(),
                ))
            }
            other => Err(Error::State(format!(
                "the watchdog answered {other:?} to the start of the command"
            ))),
        }
    }

    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// How the command ended, once it has.
    pub fn status(&self) -> Option<ExitStatus> {
        self.status
    }

    /// The next thing that happens to the command. Cancel-safe. An error
    /// means the watchdog is gone (and the command with it).
    pub async fn event(&mut self) -> Result<ChildEvent> {
        let report = self.watchdog.report().await.map_err(watchdog_lost)?;
        Ok(match report {
            Report::Stopped(sig) => {
                self.stopped = true;
                ChildEvent::Stopped(Signal::try_from(sig).unwrap_or(Signal::SIGSTOP))
            }
            Report::Exited(raw) => {
                let status = ExitStatus::from_raw(raw);
                self.status = Some(status);
                if let Some(t) = &self.terminal {
                    t.take_back_from(self.pid);
                }
                ChildEvent::Exited(status)
            }
            Report::Leftovers(n) => ChildEvent::Leftovers(n),
            Report::Killing(n) => ChildEvent::Killing(n),
            Report::Expiring => ChildEvent::Expiring,
            Report::Gone => ChildEvent::Gone,
            Report::Started(_) | Report::NotStarted { .. } | Report::TooLate => {
                return Err(Error::State(format!(
                    "the watchdog reported {report:?} twice"
                )));
            }
        })
    }

    async fn order(&mut self, order: Order) -> Result<()> {
        self.watchdog.order(&order).await.map_err(watchdog_lost)
    }

    /// Forwards `sig` to the command's group, while the command runs.
    pub async fn signal(&mut self, sig: Signal) -> Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        self.order(Order::Signal(sig as i32)).await
    }

    /// The claim was renewed: the command may run until `deadline`.
    pub async fn extend_to(&mut self, deadline: BootInstant) -> Result<()> {
        self.order(Order::Deadline(deadline.as_nanos())).await
    }

    /// The claim is lost: SIGTERM now, SIGKILL kill-after later.
    pub async fn terminate(&mut self) -> Result<()> {
        self.order(Order::Terminate).await
    }

    /// SIGKILL to everything now.
    pub async fn kill(&mut self) -> Result<()> {
        self.order(Order::Kill).await
    }

    /// Follows a stop of the command as a job-control shell would see it
    /// (see the module comment). `expired` says whether the claim's time to
    /// stop the command has come; returns true when it had, and the command
    /// was SIGKILLed instead of being continued.
    pub async fn follow_stop(&mut self, sig: Signal, expired: impl Fn() -> bool) -> Result<bool> {
        let Some(terminal) = &self.terminal else {
            return Ok(false);
        };
        if matches!(sig, Signal::SIGTTIN | Signal::SIGTTOU) && terminal.is_foreground() {
            // It touched the terminal before it was handed over.
            terminal.give_to(self.pid);
            return self.continued(&expired).await;
        }
        log::info!("the command was stopped by {sig}; stopping too");
        // The stop stops the log's writer too: the line goes out first
        // (the binary's logger waits a bounded time, so a paused terminal
        // does not keep yaraus from following its command).
        log::logger().flush();
        terminal.take_back_from(self.pid);
        self.order(Order::Suspend).await?;
        let own = match sig {
            Signal::SIGTSTP | Signal::SIGTTIN | Signal::SIGTTOU => sig,
            _ => Signal::SIGTSTP,
        };
        // Stops us here until a SIGCONT; returns at once when our group is
        // orphaned (the kernel discards the signal: no shell to continue us).
        let _ = nix::sys::signal::kill(nix::unistd::getpid(), own);
        let killed = self.continued(&expired).await?;
        if !killed {
            log::info!("continued; so is the command");
        }
        Ok(killed)
    }

    /// yaraus was continued (after its own stop, or a SIGCONT from `fg` or
    /// `bg`): kill the command if its time ran out meanwhile, else give it
    /// the terminal if we have it and continue it if it is stopped. Returns
    /// true when it was killed.
    pub async fn continued(&mut self, expired: &impl Fn() -> bool) -> Result<bool> {
        if self.status.is_some() {
            return Ok(false);
        }
        if expired() {
            self.kill().await?;
            return Ok(true);
        }
        if let Some(terminal) = &self.terminal {
            if terminal.is_foreground() {
                terminal.give_to(self.pid);
            }
        }
        if self.stopped {
            self.stopped = false;
            self.order(Order::Resume).await?;
        }
        Ok(false)
    }

    /// Lets the watchdog go: only once [`ChildEvent::Gone`] was reported.
    pub async fn stand_down(self) {
        self.watchdog.stand_down().await;
    }

    /// The watchdog back, to start another command: only once
    /// [`ChildEvent::Gone`] was reported.
    pub fn into_watchdog(self) -> Watchdog {
        self.watchdog
    }
}

fn exec_error(program: &str, errno: Option<i32>, message: &str) -> Error {
    let e = match errno {
        Some(errno) => io::Error::from_raw_os_error(errno),
        None => io::Error::other(message.to_string()),
    };
    match e.kind() {
        io::ErrorKind::NotFound => Error::Exec(
            EXIT_NOT_FOUND,
            format!("cannot run '{program}': command not found"),
        ),
        _ => Error::Exec(EXIT_CANNOT_EXECUTE, format!("cannot run '{program}': {e}")),
    }
}
