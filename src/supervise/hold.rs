//! Running a command while a claim holds: the shared middle of `run`, `lock`
//! and every later subcommand that wraps a command.
//!
//! ```text
//! claim (done by the caller) → grace delay → command runs → release
//! ```
//!
//! While the command runs, [`hold`] waits for everything at once: the
//! watchdog's reports (the command stopped, ended, left processes behind,
//! its whole tree is gone), the keeper (the claim is lost, or renewed: the
//! watchdog is told the new deadline), the signals yaraus forwards, and
//! SIGCONT (yaraus was continued). The claim is released on every path,
//! and only once the watchdog has seen the command's whole tree gone.

use super::child::{Child, ChildEvent, ChildSpec, exit_code};
use super::link::Watchdog;
use super::signals::Signals;
use crate::claim::{Claim, Keeper};
use crate::error::{Error, Result};
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};

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
    let (result, watchdog) = hold_once(keeper, watchdog, spec, options, signals).await;
    if let Some(watchdog) = watchdog {
        watchdog.stand_down().await;
    }
    result
}

/// [`hold`], for a caller that starts the command again under a new claim
/// (`index`, after a transition): the watchdog comes back with the result
/// whenever it is still there and the command's whole tree is gone.
pub async fn hold_once<C: Claim>(
    mut keeper: Keeper<C>,
    watchdog: Watchdog,
    spec: &ChildSpec,
    options: HoldOptions,
    signals: &mut Signals,
) -> (Result<i32>, Option<Watchdog>) {
    if !options.delay.is_zero() {
        crate::info!(
            "sleep {} for making sure that the previous holder has stopped",
            humantime::format_duration(options.delay)
        );
        tokio::select! {
            _ = tokio::time::sleep(options.delay) => {}
            loss = keeper.lost() => {
                let what = release(keeper, options).await;
                let e = Error::Lost(format!("{what} lost before the command started: {loss}"));
                return (Err(e), Some(watchdog));
            }
            sig = signals.recv() => {
                release(keeper, options).await;
                return (Err(Error::Interrupted(sig as i32)), Some(watchdog));
            }
        }
    }

    let mut continued = match signal(SignalKind::from_raw(nix::libc::SIGCONT)) {
        Ok(continued) => continued,
        Err(e) => {
            release(keeper, options).await;
            let e = Error::State(format!("cannot catch SIGCONT: {e}"));
            return (Err(e), Some(watchdog));
        }
    };
    crate::info!("starting...");
    let mut child = match Child::spawn(watchdog, spec, keeper.deadline(), options.kill_after).await
    {
        Ok(child) => child,
        Err(e) => {
            release(keeper, options).await;
            return (Err(e), None);
        }
    };
    let mut deadlines = keeper.deadlines();
    let mut renewing = true;
    // Why the command is being killed, once it is.
    let mut killed: Option<String> = None;

    loop {
        let step: Result<()> = tokio::select! {
            event = child.event() => match event {
                Ok(ChildEvent::Gone) => break,
                Ok(ChildEvent::Exited(_)) => Ok(()),
                Ok(ChildEvent::Stopped(sig)) => {
                    let killed_now = child.follow_stop(sig, || keeper.expired()).await;
                    ran_out_while_stopped(killed_now, &mut killed)
                }
                Ok(ChildEvent::Leftovers(n)) => {
                    crate::warn!(
                        "the child left processes in its group or below it ({n}); stopping them"
                    );
                    Ok(())
                }
                Ok(ChildEvent::Killing(n)) => {
                    crate::warn!(
                        "{n} process(es) of the command did not stop within {}; sending SIGKILL",
                        humantime::format_duration(options.kill_after)
                    );
                    Ok(())
                }
                Ok(ChildEvent::Expiring) => {
                    if killed.is_none() {
                        let why = format!(
                            "no renewal succeeded in time: the claim runs out in {}",
                            humantime::format_duration(options.kill_after)
                        );
                        crate::warn!("killing the command (process group {}): {why}", child.pid());
                        killed = Some(why);
                    }
                    Ok(())
                }
                Err(e) => Err(e),
            },
            loss = keeper.lost(), if killed.is_none() => {
                crate::warn!("killing the command (process group {}): {loss}", child.pid());
                killed = Some(loss.to_string());
                child.terminate().await
            }
            changed = deadlines.changed(), if renewing => match changed {
                Ok(()) => {
                    let deadline = *deadlines.borrow_and_update();
                    child.extend_to(deadline).await
                }
                // The keeper ended; the last deadline stands.
                Err(_) => {
                    renewing = false;
                    Ok(())
                }
            },
            sig = signals.recv() => child.signal(sig).await,
            _ = continued.recv() => {
                let killed_now = child.continued(&|| keeper.expired()).await;
                ran_out_while_stopped(killed_now, &mut killed)
            }
        };
        if let Err(e) = step {
            // The watchdog is gone, and took the command along (it is the
            // command's parent, and the command dies with it); what the
            // command left behind is ours to stop, as the subreaper.
            crate::warn!("{e}; stopping what is left of the command");
            super::tree::kill_own_descendants().await;
            let what = release(keeper, options).await;
            let e = Error::State(format!("{e}: the command was killed and {what} released"));
            return (Err(e), None);
        }
    }

    let status = child.status();
    let watchdog = child.into_watchdog();
    let what = release(keeper, options).await;
    let result = match (killed, status) {
        (Some(why), _) => Err(Error::Lost(format!(
            "{what} lost while the command ran ({why}); the command was killed"
        ))),
        (None, Some(status)) => Ok(exit_code(status)),
        (None, None) => Err(Error::State("the command's end was not reported".into())),
    };
    (result, Some(watchdog))
}

/// Records a kill made on continuing because the claim ran out meanwhile.
fn ran_out_while_stopped(outcome: Result<bool>, killed: &mut Option<String>) -> Result<()> {
    if outcome? && killed.is_none() {
        let why = "the claim ran out while the command was stopped".to_string();
        crate::warn!("killing the command where it stands: {why}");
        *killed = Some(why);
    }
    Ok(())
}

/// Stops the keeper and gives back whatever is still ours of the claim
/// (release only touches what is ours), within the release timeout. Returns
/// the claim's description, for messages.
pub async fn release<C: Claim>(keeper: Keeper<C>, options: HoldOptions) -> String {
    let mut claim = keeper.stop().await;
    let what = claim.describe();
    crate::info!("releasing {what}...");
    match tokio::time::timeout(options.release_timeout, claim.release()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => crate::warn!("could not release {what}: {e}; it will expire by itself"),
        Err(_) => crate::warn!("could not release {what} in time; it will expire by itself"),
    }
    what
}
