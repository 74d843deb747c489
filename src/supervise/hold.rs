//! Running a command while a claim holds: the shared middle of `run`, `lock`
//! and every later subcommand that wraps a command.
//!
//! ```text
//! claim (done by the caller) → grace delay → command runs → release
//! ```
//!
//! While the command runs, `Running` waits for everything at once: the
//! watchdog's reports (the command stopped, ended, left processes behind,
//! its whole tree is gone), the keeper (the claim is lost, or renewed: the
//! watchdog is told the new deadline), the signals yaraus forwards, and
//! SIGCONT (yaraus was continued).
//!
//! Why a `Hold` owns the keeper: the claim must be released on every path,
//! exactly once, and only once the watchdog has seen the command's whole
//! tree gone. Each way a hold can end is an `End` value, made without
//! releasing anything; `Hold::release` consumes the hold, so the one
//! release, after the end is known, is the only one the types allow. The end
//! then becomes a [`HoldOutcome`]: the status, and the watchdog when it can
//! start another command.

use super::child::{Child, ChildEvent, ChildSpec, exit_code};
use super::link::Watchdog;
use super::signals::Signals;
use crate::base::BootInstant;
use crate::claim::{Claim, Keeper, Loss};
use crate::error::{Error, Result};
use nix::sys::signal::Signal;
use std::ops::ControlFlow::{self, Break, Continue};
use std::process::ExitStatus;
use std::time::{Duration, SystemTime};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

/// How a held command is treated.
#[derive(Clone, Copy, Debug)]
pub struct HoldOptions {
    /// Wait this long after claiming before starting the command.
    pub delay: Duration,
    /// The command gets SIGTERM this long before the claim's deadline (or
    /// as soon as the claim is lost), and SIGKILL at the deadline (or this
    /// long after the SIGTERM).
    pub kill_after: Duration,
    /// Bound on the final release request.
    pub release_timeout: Duration,
    /// After the delay, wait until the wall clock has passed this instant
    /// (a worker id's clock guard, `crate::lease::clock_guard`).
    pub start_after: Option<StartAfter>,
}

/// A wall-clock instant the command must not start before.
#[derive(Clone, Copy, Debug)]
pub struct StartAfter {
    pub at: SystemTime,
    /// What the instant is, for the line that says why the command waits.
    pub what: &'static str,
}

/// How a hold ended, its claim released.
pub struct HoldOutcome {
    /// The exit status to report, or why there is none.
    pub status: Result<i32>,
    /// The watchdog, when it is still there and the command's whole tree is
    /// gone: ready to start another command. `None` when it went away (and
    /// took the command along), or went with a command that could not start.
    pub watchdog: Option<Watchdog>,
}

impl HoldOutcome {
    /// Lets the watchdog go and returns the status: for a caller that
    /// starts nothing more.
    pub async fn finish(self) -> Result<i32> {
        if let Some(watchdog) = self.watchdog {
            watchdog.stand_down().await;
        }
        self.status
    }

    /// For a caller that starts the command again under a new claim: when
    /// the claim was lost and the watchdog is back, why it was lost and the
    /// watchdog; otherwise the outcome, to [`finish`](Self::finish).
    pub fn restartable(self) -> std::result::Result<(String, Watchdog), HoldOutcome> {
        match self {
            HoldOutcome {
                status: Err(Error::Lost(why)),
                watchdog: Some(watchdog),
            } => Ok((why, watchdog)),
            outcome => Err(outcome),
        }
    }
}

/// Runs `spec` through `watchdog` while `keeper` keeps the claim; returns
/// the exit status to report. Consumes the keeper, releasing the claim at
/// the end, and lets the watchdog go.
pub async fn hold<C: Claim>(
    keeper: Keeper<C>,
    watchdog: Watchdog,
    spec: &ChildSpec,
    options: HoldOptions,
    signals: &mut Signals,
) -> Result<i32> {
    hold_once(keeper, watchdog, spec, options, signals)
        .await
        .finish()
        .await
}

/// [`hold`], for a caller that starts the command again under a new claim
/// (`index`, after a transition): the watchdog comes back with the status
/// whenever it is still there and the command's whole tree is gone.
pub async fn hold_once<C: Claim>(
    keeper: Keeper<C>,
    watchdog: Watchdog,
    spec: &ChildSpec,
    options: HoldOptions,
    signals: &mut Signals,
) -> HoldOutcome {
    let mut hold = Hold { keeper, options };
    let end = hold.run(watchdog, spec, signals).await;
    let what = hold.release(end.command_gone()).await;
    end.outcome(&what)
}

/// A claim while its command runs. It is released by [`Hold::release`],
/// which consumes it: once, whatever ended the hold.
struct Hold<C: Claim> {
    keeper: Keeper<C>,
    options: HoldOptions,
}

/// What ended a hold before it started the command.
enum Early {
    /// The claim was lost during the grace delay.
    Lost(Loss),
    /// A signal came during the grace delay.
    Interrupted(Signal),
    /// SIGCONT cannot be caught.
    NoSigcont(std::io::Error),
}

/// How a hold ended, before its claim is released.
enum End {
    /// Before the command was started; the watchdog is unused.
    Early(Early, Watchdog),
    /// The command could not be started (the watchdog went with it).
    NotStarted(Error),
    /// The watchdog went away, and took the command along; what the
    /// command left behind has been killed.
    WatchdogLost(Error),
    /// The command's whole tree is gone.
    Gone {
        /// Why the command was killed, if it was.
        killed: Option<String>,
        status: Option<ExitStatus>,
        watchdog: Watchdog,
    },
}

impl End {
    /// Whether the command surely never started (`Some(false)`), or ran
    /// and its whole tree is gone (`Some(true)`); `None` when unsure.
    fn command_gone(&self) -> Option<bool> {
        match self {
            End::Early(..) => Some(false),
            End::Gone { .. } => Some(true),
            End::NotStarted(_) | End::WatchdogLost(_) => None,
        }
    }

    /// The outcome, once `what` (the claim's description) was released.
    fn outcome(self, what: &str) -> HoldOutcome {
        let (status, watchdog) = match self {
            End::Early(early, watchdog) => {
                let e = match early {
                    Early::Lost(loss) => {
                        Error::Lost(format!("{what} lost before the command started: {loss}"))
                    }
                    Early::Interrupted(sig) => Error::Interrupted(sig as i32),
                    Early::NoSigcont(e) => Error::State(format!("cannot catch SIGCONT: {e}")),
                };
                (Err(e), Some(watchdog))
            }
            End::NotStarted(e) => (Err(e), None),
            End::WatchdogLost(e) => (
                Err(Error::State(format!(
                    "{e}: the command was killed and {what} released"
                ))),
                None,
            ),
            End::Gone {
                killed,
                status,
                watchdog,
            } => {
                let status = match (killed, status) {
                    (Some(why), _) => Err(Error::Lost(format!(
                        "{what} lost while the command ran ({why}); the command was killed"
                    ))),
                    (None, Some(status)) => Ok(exit_code(status)),
                    (None, None) => Err(Error::State("the command's end was not reported".into())),
                };
                (status, Some(watchdog))
            }
        };
        HoldOutcome { status, watchdog }
    }
}

impl<C: Claim> Hold<C> {
    /// Delays, starts the command and follows it until its whole tree is
    /// gone. Releases nothing.
    async fn run(&mut self, watchdog: Watchdog, spec: &ChildSpec, signals: &mut Signals) -> End {
        let mut continued = match self.prepare(signals).await {
            Ok(continued) => continued,
            Err(early) => return End::Early(early, watchdog),
        };
        log::info!("starting...");
        let kill_after = self.options.kill_after;
        let child = match Child::spawn(watchdog, spec, self.keeper.deadline(), kill_after).await {
            Ok(child) => child,
            Err(e) => return End::NotStarted(e),
        };
        let running = Running {
            child,
            deadlines: self.keeper.deadlines(),
            renewing: true,
            killed: None,
            kill_after,
        };
        // Readiness for --metrics-listen: the claim is held and the command runs.
        let metrics = self.keeper.metrics().clone();
        metrics.command_running(true);
        let end = running
            .until_gone(&mut self.keeper, signals, &mut continued)
            .await;
        metrics.command_running(false);
        end
    }

    /// The grace delay, then SIGCONT caught (yaraus may be stopped with its
    /// command, and must look at the claim when continued).
    async fn prepare(
        &mut self,
        signals: &mut Signals,
    ) -> Result<tokio::signal::unix::Signal, Early> {
        let delay = self.options.delay;
        if !delay.is_zero() {
            log::info!(
                "sleep {} for making sure that the previous holder has stopped",
                crate::base::duration::shown(delay)
            );
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                loss = self.keeper.lost() => return Err(Early::Lost(loss)),
                sig = signals.recv() => return Err(Early::Interrupted(sig)),
            }
        }
        if let Some(after) = self.options.start_after {
            self.wait_for_wall_clock(after, signals).await?;
        }
        signal(SignalKind::from_raw(nix::libc::SIGCONT)).map_err(Early::NoSigcont)
    }

    /// Waits until the wall clock has passed `after`, saying once why.
    /// Read again after each sleep: the clock may be set meanwhile.
    async fn wait_for_wall_clock(
        &mut self,
        after: StartAfter,
        signals: &mut Signals,
    ) -> Result<(), Early> {
        let mut said = false;
        while let Ok(gap) = after.at.duration_since(SystemTime::now()) {
            if !said {
                log::info!(
                    "waiting {} more for this host's clock to pass {}, {}",
                    crate::base::duration::shown(Duration::from_millis(gap.as_millis() as u64 + 1)),
                    humantime::format_rfc3339_millis(after.at),
                    after.what
                );
                said = true;
            }
            let nap = (gap + Duration::from_millis(1)).min(Duration::from_secs(1));
            tokio::select! {
                _ = tokio::time::sleep(nap) => {}
                loss = self.keeper.lost() => return Err(Early::Lost(loss)),
                sig = signals.recv() => return Err(Early::Interrupted(sig)),
            }
        }
        Ok(())
    }

    /// Gives the claim back (see [`release`]); returns its description.
    async fn release(self, command_gone: Option<bool>) -> String {
        release_after(self.keeper, self.options, command_gone).await
    }
}

/// The command while it runs.
struct Running {
    child: Child,
    deadlines: watch::Receiver<BootInstant>,
    /// Whether the keeper still renews (its deadlines still change).
    renewing: bool,
    /// Why the command is being killed, once it is.
    killed: Option<String>,
    kill_after: Duration,
}

impl Running {
    /// Follows the command until its whole tree is gone, or the watchdog is.
    async fn until_gone<C: Claim>(
        mut self,
        keeper: &mut Keeper<C>,
        signals: &mut Signals,
        continued: &mut tokio::signal::unix::Signal,
    ) -> End {
        loop {
            match self.step(keeper, signals, continued).await {
                Ok(Continue(())) => {}
                Ok(Break(())) => break,
                Err(e) => {
                    // The watchdog is gone, and took the command along (it
                    // is the command's parent, and the command dies with
                    // it); what the command left behind is ours to stop, as
                    // the subreaper.
                    log::warn!("{e}; stopping what is left of the command");
                    super::tree::kill_own_descendants().await;
                    return End::WatchdogLost(e);
                }
            }
        }
        End::Gone {
            killed: self.killed,
            status: self.child.status(),
            watchdog: self.child.into_watchdog(),
        }
    }

    /// Waits for the next thing to happen and answers it; `Break` once the
    /// command's whole tree is gone.
    async fn step<C: Claim>(
        &mut self,
        keeper: &mut Keeper<C>,
        signals: &mut Signals,
        continued: &mut tokio::signal::unix::Signal,
    ) -> Result<ControlFlow<()>> {
        tokio::select! {
            event = self.child.event() => return self.on_event(event?, keeper).await,
            loss = keeper.lost(), if self.killed.is_none() => {
                log::warn!("killing the command (process group {}): {loss}", self.child.pid());
                self.killed = Some(loss.to_string());
                self.child.terminate().await?;
            }
            changed = self.deadlines.changed(), if self.renewing => match changed {
                Ok(()) => {
                    let deadline = *self.deadlines.borrow_and_update();
                    self.child.extend_to(deadline).await?;
                }
                // The keeper ended; the last deadline stands.
                Err(_) => self.renewing = false,
            },
            sig = signals.recv() => self.child.signal(sig).await?,
            _ = continued.recv() => {
                let killed_now = self.child.continued(&|| keeper.expired()).await;
                self.ran_out_while_stopped(killed_now)?;
            }
        }
        Ok(Continue(()))
    }

    /// What the watchdog reported.
    async fn on_event<C: Claim>(
        &mut self,
        event: ChildEvent,
        keeper: &Keeper<C>,
    ) -> Result<ControlFlow<()>> {
        match event {
            ChildEvent::Gone => return Ok(Break(())),
            ChildEvent::Exited(_) => {}
            ChildEvent::Stopped(sig) => {
                let killed_now = self.child.follow_stop(sig, || keeper.expired()).await;
                self.ran_out_while_stopped(killed_now)?;
            }
            ChildEvent::Leftovers(n) => {
                log::warn!(
                    "the child left processes in its group or below it ({n}); stopping them"
                );
            }
            ChildEvent::Killing(n) => {
                log::warn!(
                    "{n} process(es) of the command did not stop within {}; sending SIGKILL",
                    crate::base::duration::shown(self.kill_after)
                );
            }
            ChildEvent::Expiring => {
                if self.killed.is_none() {
                    let why = format!(
                        "no renewal succeeded in time: the claim runs out in {}",
                        crate::base::duration::shown(self.kill_after)
                    );
                    log::warn!(
                        "killing the command (process group {}): {why}",
                        self.child.pid()
                    );
                    self.killed = Some(why);
                }
            }
        }
        Ok(Continue(()))
    }

    /// Records a kill made on continuing because the claim ran out meanwhile.
    fn ran_out_while_stopped(&mut self, outcome: Result<bool>) -> Result<()> {
        if outcome? && self.killed.is_none() {
            let why = "the claim ran out while the command was stopped".to_string();
            log::warn!("killing the command where it stands: {why}");
            self.killed = Some(why);
        }
        Ok(())
    }
}

/// Stops the keeper and releases whatever is still ours of the claim
/// (release only touches what is ours), within the release timeout. Returns
/// the claim's description, for messages.
pub async fn release<C: Claim>(keeper: Keeper<C>, options: HoldOptions) -> String {
    release_after(keeper, options, None).await
}

/// [`release`], told whether the command ran and its whole tree is gone
/// (`Some(true)`) or it never started (`Some(false)`).
async fn release_after<C: Claim>(
    keeper: Keeper<C>,
    options: HoldOptions,
    command_gone: Option<bool>,
) -> String {
    let mut claim = keeper.stop().await;
    if let Some(ran) = command_gone {
        claim.command_gone(ran);
    }
    let what = claim.describe();
    log::info!("releasing {what}...");
    match tokio::time::timeout(options.release_timeout, claim.release()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => log::warn!("could not release {what}: {e}; it will expire by itself"),
        Err(_) => log::warn!("could not release {what} in time; it will expire by itself"),
    }
    what
}
