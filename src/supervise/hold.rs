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

/// The `--kill-after` used when none is given: 5 s, or a quarter of the
/// claim's validity when that is less (a 2 s lock cannot give 5 s).
pub fn default_kill_after(validity: Duration) -> Duration {
    Duration::from_secs(5).min(validity / 4)
}

/// The `--kill-after` to use: `requested`, or the default, checked against
/// the claim. The command gets SIGTERM kill-after before the deadline, so
/// kill-after must fit inside the validity; and unless `renewals_checked` is
/// off, with room for at least one renewal (every `interval`) to be tried
/// before that SIGTERM, or a single slow round trip would kill the command.
/// A value that does not fit is a usage error, named after `length_flag`
/// (`--ttl`, `--expire`).
pub fn kill_after_within(
    requested: Option<Duration>,
    validity: Duration,
    interval: Duration,
    renewals_checked: bool,
    length_flag: &str,
) -> Result<Duration> {
    let Some(kill_after) = requested else {
        return Ok(default_kill_after(validity));
    };
    let room = if renewals_checked {
        validity.saturating_sub(interval)
    } else {
        validity
    };
    if kill_after <= room {
        return Ok(kill_after);
    }
    let fmt = |d: Duration| humantime::format_duration(Duration::from_millis(d.as_millis() as u64));
    let renewals = if renewals_checked {
        format!(", renewed every {}", fmt(interval))
    } else {
        String::new()
    };
    Err(Error::Usage(format!(
        "--kill-after {} does not fit: the claim is valid for {}{renewals}, and the command \
         must be gone by then; give --kill-after {} or less, or a longer {length_flag}",
        fmt(kill_after),
        fmt(validity),
        fmt(room)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_default_kill_after_is_five_seconds_or_a_quarter_of_the_validity() {
        assert_eq!(default_kill_after(ms(1_782_000)), ms(5000));
        assert_eq!(
            default_kill_after(ms(1978)),
            ms(494) + Duration::from_micros(500)
        );
        let validity = ms(1978);
        let interval = ms(666);
        let ka = kill_after_within(None, validity, interval, true, "--ttl").unwrap();
        assert!(ka + interval <= validity);
    }

    #[test]
    fn a_kill_after_that_leaves_no_room_for_a_renewal_is_refused() {
        // lock --ttl 2s --kill-after 1500ms: validity 1.978 s, extended every 666 ms.
        let e = kill_after_within(Some(ms(1500)), ms(1978), ms(666), true, "--ttl").unwrap_err();
        assert!(matches!(e, Error::Usage(_)));
        let text = e.to_string();
        assert!(text.contains("--kill-after 1s 500ms"), "{text}");
        assert!(text.contains("1s 312ms or less"), "{text}");
        assert!(text.contains("--ttl"), "{text}");
        assert_eq!(
            kill_after_within(Some(ms(1312)), ms(1978), ms(666), true, "--ttl").unwrap(),
            ms(1312)
        );
    }

    #[test]
    fn without_the_renewal_check_kill_after_must_still_fit_inside_the_validity() {
        assert_eq!(
            kill_after_within(Some(ms(400)), ms(493), ms(2000), false, "--expire").unwrap(),
            ms(400)
        );
        assert!(kill_after_within(Some(ms(500)), ms(493), ms(2000), false, "--expire").is_err());
    }
}
