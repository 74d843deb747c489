//! The one wait loop: attempts until the claim is held, the caller's
//! `--wait` runs out, or a signal ends the wait.
//!
//! Between two attempts it pauses for a random time within the claimant's
//! range, so that a crowd of waiters (a fleet started at once, a cron minute)
//! spreads out instead of retrying in step. It reports the first refusal,
//! every change of reason, and every [`REPORT_EVERY`] of the same one: a
//! wait of hours leaves a readable log.
//!
//! A signal can arrive while an attempt is in flight. The attempt is then
//! given [`Claimant::settle_within`] to finish, and whatever it took is given
//! back; one that does not finish by then is dropped and the claimant undoes
//! it ([`Claimant::abandon`]). Either way nothing taken for a wait that ended
//! stays held.

use super::{Attempt, Claim, Claimant, Refusal, RefusalKind, rounded};
use crate::base::random::random_below;
use crate::error::{Error, Result};
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

/// While waiting, repeat the "still waiting" line this often.
pub const REPORT_EVERY: Duration = Duration::from_secs(30);

/// Tries to take the claim until it is held, `wait` runs out (`None`:
/// forever; zero: one attempt), or `cancel` resolves, whose error is then
/// returned. When `wait` runs out, the last refusal is the error:
/// [`Error::Exhausted`] when busy, [`Error::Unavailable`] otherwise.
pub async fn wait_for<C: Claimant>(
    claimant: &mut C,
    wait: Option<Duration>,
    cancel: impl Future<Output = Error>,
) -> Result<C::Held> {
    let give_up = wait.map(|w| Instant::now() + w);
    let mut cancel = std::pin::pin!(cancel);
    let mut report = Report::default();
    loop {
        let settle = claimant.settle_within();
        let outcome = {
            let mut attempt = std::pin::pin!(claimant.attempt());
            tokio::select! {
                biased;
                e = &mut cancel => match tokio::time::timeout(settle, &mut attempt).await {
                    Ok(Ok(Attempt::Acquired(mut held))) => {
                        crate::info!("{}: taken just as the wait ended; giving it back", held.describe());
                        let _ = held.release().await;
                        Err((e, true))
                    }
                    Ok(_) => Err((e, true)),
                    Err(_) => Err((e, false)),
                },
                a = &mut attempt => Ok(a),
            }
        };
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err((interrupted, settled)) => {
                if !settled {
                    claimant.abandon().await;
                }
                return Err(interrupted);
            }
        };
        let refusal = match outcome {
            Ok(Attempt::Acquired(held)) => match claimant.check(&held) {
                Ok(()) => return Ok(*held),
                Err(why) => {
                    crate::warn!("{}: {why}; releasing and retrying", held.describe());
                    let mut held = *held;
                    let _ = held.release().await;
                    continue;
                }
            },
            Ok(Attempt::Refused(refusal)) => refusal,
            Err(fatal) => return Err(fatal),
        };
        let now = Instant::now();
        let (low, high) = claimant.pause();
        let mut pause = low + random_below(high.saturating_sub(low));
        if let Some(limit) = give_up {
            if now >= limit {
                return Err(refusal.into_error(wait));
            }
            pause = pause.min(limit - now);
        }
        report.note(&claimant.wanted(), &refusal, wait, pause);
        tokio::select! {
            biased;
            e = &mut cancel => return Err(e),
            _ = tokio::time::sleep(pause) => {}
        }
    }
}

/// The log lines of a wait: the first refusal, then every change of reason
/// and every [`REPORT_EVERY`].
#[derive(Default)]
struct Report {
    last: Option<(RefusalKind, Instant)>,
}

impl Report {
    fn note(&mut self, wanted: &str, refusal: &Refusal, wait: Option<Duration>, pause: Duration) {
        let now = Instant::now();
        let due = match self.last {
            None => true,
            Some((kind, at)) => kind != refusal.kind || now - at >= REPORT_EVERY,
        };
        if !due {
            return;
        }
        let first = self.last.is_none();
        self.last = Some((refusal.kind, now));
        let until = match wait {
            None => "as long as it takes".to_string(),
            Some(w) => format!("up to {}", humantime::format_duration(rounded(w))),
        };
        let pause = humantime::format_duration(rounded(pause));
        match refusal.kind {
            RefusalKind::Busy if first => crate::info!(
                "{}; waiting for {wanted} ({until}); retrying in {pause}",
                refusal.message
            ),
            RefusalKind::Busy => crate::info!("still waiting: {}", refusal.message),
            _ => crate::warn!("{}; retrying in {pause} ({until})", refusal.message),
        }
    }
}
