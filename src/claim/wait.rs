//! The one wait loop of a claim: attempts until the claim is held, the
//! caller's `--wait` runs out, or a signal ends the wait, under the retry
//! policy of [`super::retry`] (its pauses, its log lines, its bound).
//!
//! Between two attempts it pauses: for a random time within the claimant's
//! range when the claim is busy, so that a crowd of waiters (a fleet started
//! at once, a cron minute) spreads out instead of retrying in step; after
//! growing pauses when the servers are out of reach.
//!
//! A claimant may also be woken ([`Claimant::woken`]: a release publishes
//! on a channel its waiters subscribe to, [`super::wake`]): the
//! pause then ends early, and stays the fallback poll when no wake-up
//! comes. It subscribes after its first busy refusal
//! ([`Claimant::arm_wakeups`]) and tries again at once, so that nothing
//! freed before the subscription is missed. The subscription ends with the
//! wait ([`Claimant::disarm_wakeups`]), whatever ended it. The poll and the
//! wake-ups a claimant uses are the caller's choice ([`WaitOptions`]).
//!
//! Two things can end an attempt in flight, and neither leaves what it took
//! held:
//!
//! * a signal: the attempt is given [`Claimant::settle_within`] to finish,
//!   and whatever it took is released; one that does not finish by then
//!   is dropped and the claimant undoes it ([`Claimant::undo_interrupted`]);
//! * the bound: the attempt is dropped at once, so that the command ends
//!   at its bound rather than a request timeout past it, and the claimant
//!   undoes it within [`UNDO_WITHIN`]. So that this is rare, the attempt's
//!   `WAIT`s for replicas end [`UNDO_WITHIN`] before the bound
//!   ([`waits_end_by`]): one that finds too few replicas then undoes
//!   itself, and says why.

use super::claimant::{Attempt, Claimant, RefusalKind};
use super::keeper::Claim;
use super::retry::Patience;
use super::wake::WakePolicy;
use crate::error::{Error, Result};
use crate::store::waits_end_by;
use crate::timing::retry::UNDO_WITHIN;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use tokio::time::Instant;

/// How a waiter for a busy claim learns that it may have been freed. The
/// defaults suit every program; the others are for tests and benchmarks
/// that tell a wake-up from a poll, or compare the ways (the binary sets
/// them with hidden flags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitOptions {
    /// The pause between two attempts (the fallback poll), instead of the
    /// claim's own ([`crate::timing::lock::RETRY_PAUSE`],
    /// [`crate::timing::lease::poll_pause`]).
    pub poll: Option<Duration>,
    /// Whether releases wake the waiters, and which.
    pub wakeups: WakePolicy,
}

impl WaitOptions {
    /// The pause between two attempts: [`poll`](Self::poll), else `own`.
    pub fn pause(&self, own: (Duration, Duration)) -> (Duration, Duration) {
        self.poll.map_or(own, |d| (d, d))
    }
}

/// Tries to take the claim until it is held, `wait` runs out (`None`:
/// forever; zero: one attempt), or `cancel` resolves, whose error is then
/// returned. When `wait` runs out, the last refusal is the error:
/// [`Error::Exhausted`] when busy, [`Error::Unavailable`] otherwise.
pub async fn wait_for<C: Claimant>(
    claimant: &mut C,
    wait: Option<Duration>,
    cancel: impl Future<Output = Error>,
) -> Result<C::Claim> {
    let held = wait_loop(claimant, wait, cancel).await;
    claimant.disarm_wakeups();
    held
}

async fn wait_loop<C: Claimant>(
    claimant: &mut C,
    wait: Option<Duration>,
    cancel: impl Future<Output = Error>,
) -> Result<C::Claim> {
    let mut patience = Patience::new(wait);
    let mut cancel = std::pin::pin!(cancel);
    loop {
        let refusal = match one_attempt(claimant, patience.cut_at(), cancel.as_mut()).await {
            Ended::Done(Ok(Attempt::Acquired(held))) => match claimant.check(&held) {
                Ok(()) => return Ok(*held),
                Err(why) => {
                    log::warn!("{}: {why}; releasing and retrying", held.describe());
                    let mut held = *held;
                    let _ = held.release().await;
                    continue;
                }
            },
            Ended::Done(Ok(Attempt::Refused(refusal))) => refusal,
            Ended::Done(Err(fatal)) => return Err(fatal),
            Ended::Interrupted(e, settled) => {
                if !settled {
                    claimant.undo_interrupted().await;
                }
                return Err(e);
            }
            Ended::Cut => {
                let _ = tokio::time::timeout(UNDO_WITHIN, claimant.undo_interrupted()).await;
                return Err(patience.give_up(&claimant.wanted()));
            }
        };
        let busy = refusal.kind == RefusalKind::Busy;
        let Some(pause) = patience.pause_after(&claimant.wanted(), refusal, claimant.pause())
        else {
            return Err(patience.give_up(&claimant.wanted()));
        };
        // Subscribed only now: try again at once, since the lock may have
        // been freed between the refusal and the subscription.
        // Subscribing may take a round trip per master (a connect timeout
        // at worst): the bound cuts it short, as it cuts an attempt.
        let cut_at = patience.cut_at();
        let armed = busy && {
            tokio::select! {
                biased;
                e = cancel.as_mut() => return Err(e),
                armed = claimant.arm_wakeups() => armed,
                _ = sleep_until(cut_at) => true,
            }
        };
        if armed {
            continue;
        }
        // The pause is the fallback poll; a wake-up ends it early.
        tokio::select! {
            biased;
            e = cancel.as_mut() => return Err(e),
            _ = tokio::time::sleep(pause) => {}
            _ = claimant.woken() => {}
        }
    }
}

/// Sleeps until `at`; forever when there is no bound.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// How one attempt ended.
enum Ended<H> {
    /// It finished by itself.
    Done(Result<Attempt<H>>),
    /// A signal ended the wait (`true`: the attempt settled, and what it
    /// took was released).
    Interrupted(Error, bool),
    /// The bound came first; it was dropped, and must be undone.
    Cut,
}

/// One attempt, raced against the signal and the bound.
async fn one_attempt<C: Claimant>(
    claimant: &mut C,
    cut_at: Option<Instant>,
    cancel: Pin<&mut impl Future<Output = Error>>,
) -> Ended<C::Claim> {
    let settle = claimant.settle_within();
    // Its WAITs end early enough for it to be undone in time.
    let waits_end = cut_at.map(|at| at.checked_sub(UNDO_WITHIN).unwrap_or(at));
    let mut attempt = std::pin::pin!(waits_end_by(waits_end, claimant.attempt()));
    let cut = sleep_until(cut_at);
    tokio::select! {
        biased;
        e = cancel => match tokio::time::timeout(settle, &mut attempt).await {
            Ok(Ok(Attempt::Acquired(mut held))) => {
                log::info!("{}: taken just as the wait ended; giving it back", held.describe());
                let _ = held.release().await;
                Ended::Interrupted(e, true)
            }
            Ok(_) => Ended::Interrupted(e, true),
            Err(_) => Ended::Interrupted(e, false),
        },
        a = &mut attempt => Ended::Done(a),
        _ = cut => Ended::Cut,
    }
}

#[cfg(test)]
mod tests {
    //! The wake-up path of the loop, in paused time: a claimant that arms
    //! tries again at once, and a wake-up ends its pause.
    use super::*;
    use crate::claim::{Refusal, RenewError};

    struct TestClaim;

    impl Claim for TestClaim {
        async fn renew(&mut self) -> Result<Duration, RenewError> {
            Ok(Duration::from_secs(1))
        }
        async fn release(&mut self) -> Result<()> {
            Ok(())
        }
        fn describe(&self) -> String {
            "held".into()
        }
    }

    /// Busy for its first `busy` attempts; with `wakes`, it arms after the
    /// first refusal and is woken at once after every later one.
    struct Waiter {
        busy: usize,
        attempts: usize,
        wakes: bool,
        armed: bool,
    }

    impl Claimant for Waiter {
        type Claim = TestClaim;
        fn wanted(&self) -> String {
            "the thing".into()
        }
        async fn attempt(&mut self) -> Result<Attempt<TestClaim>> {
            self.attempts += 1;
            Ok(if self.attempts > self.busy {
                Attempt::Acquired(Box::new(TestClaim))
            } else {
                Attempt::Refused(Refusal::busy("busy"))
            })
        }
        fn settle_within(&self) -> Duration {
            Duration::ZERO
        }
        async fn undo_interrupted(&mut self) {}
        fn pause(&self) -> (Duration, Duration) {
            (Duration::from_secs(10), Duration::from_secs(10))
        }
        async fn arm_wakeups(&mut self) -> bool {
            let arms = self.wakes && !self.armed;
            self.armed |= arms;
            arms
        }
        async fn woken(&mut self) {
            if !self.armed {
                std::future::pending::<()>().await;
            }
        }
    }

    async fn waited(wakes: bool) -> (usize, Duration) {
        let mut w = Waiter {
            busy: 3,
            attempts: 0,
            wakes,
            armed: false,
        };
        let start = Instant::now();
        wait_for(&mut w, None, std::future::pending())
            .await
            .unwrap();
        (w.attempts, start.elapsed())
    }

    #[tokio::test(start_paused = true)]
    async fn an_armed_waiter_retries_at_once_and_is_woken_before_its_pause() {
        // Refused (arm, retry at once), refused (woken), refused (woken),
        // taken: no pause of 10 s was slept.
        let (attempts, elapsed) = waited(true).await;
        assert_eq!(attempts, 4);
        assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
        // Without wake-ups, the same three refusals cost three pauses.
        let (attempts, elapsed) = waited(false).await;
        assert_eq!(attempts, 4);
        assert!(elapsed >= Duration::from_secs(30), "{elapsed:?}");
    }
}
