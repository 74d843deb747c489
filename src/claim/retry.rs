//! The one retry policy of every subcommand: what passes is waited out,
//! up to the bound the user gave; what is misconfigured fails at once.
//!
//! The error kinds decide, as [`crate::store`] sorted them: an
//! [`Error::Unavailable`] (a refused connection, a failover in progress,
//! `LOADING`, `MASTERDOWN`, a Sentinel that names no usable master yet, too
//! few nodes of a majority) is tried again after a pause of
//! [`Backoff`]; anything else (a refused password, an ACL denial, a
//! master name no sentinel knows, a key of another type, a server that does
//! not speak Redis, bad input) ends the command with its one line.
//!
//! A [`Patience`] is one command's wait: its bound (`None`: as long as it
//! takes; zero: one attempt), the pauses, the log lines ("waiting for …"
//! when the wait starts, on every change of reason, and every
//! [`REPORT_EVERY`]), and the error at the bound. The bound is kept
//! exactly: an attempt still in flight when it comes is cut off there, not
//! let run into a request timeout past it. Claims wait through
//! [`super::wait_for`], which adds what only a claim has (busy refusals,
//! undoing a cut-off attempt); other calls through
//! [`Patience::retry`].

use super::claimant::{Refusal, RefusalKind};
use crate::base::random::random_below;
use crate::error::{Error, Result};
use crate::timing::retry::{Backoff, REPORT_EVERY, UNDO_WITHIN};
use std::time::Duration;
use tokio::time::Instant;

/// One command's wait for what it needs.
pub struct Patience {
    bound: Option<Duration>,
    started: Instant,
    backoff: Backoff,
    report: Report,
    /// Why the last attempt did not succeed: the error at the bound.
    last: Option<Refusal>,
}

impl Patience {
    /// A wait of at most `bound` from now (`None`: as long as it takes;
    /// zero: one attempt, bounded only by its own request timeouts).
    pub fn new(bound: Option<Duration>) -> Patience {
        Patience {
            bound,
            started: Instant::now(),
            backoff: Backoff::default(),
            report: Report::default(),
            last: None,
        }
    }

    /// The bound given.
    pub fn bound(&self) -> Option<Duration> {
        self.bound
    }

    /// When an attempt still in flight is cut off: the bound, unless there
    /// is none or it is zero (one attempt, let finish).
    pub fn cut_at(&self) -> Option<Instant> {
        self.bound
            .filter(|b| !b.is_zero())
            .map(|b| self.started + b)
    }

    /// The time left before [`cut_at`](Self::cut_at), for an attempt that
    /// fits deadlines of its own into it (`None`: no cut).
    pub fn left(&self) -> Option<Duration> {
        self.cut_at()
            .map(|at| at.saturating_duration_since(Instant::now()))
    }

    /// After a refusal: the pause before the next attempt, or `None` when
    /// the bound has passed (end with [`give_up`](Self::give_up)), or is so
    /// near that another attempt would have less than [`UNDO_WITHIN`] to run
    /// in. A busy
    /// claim is tried again after a pause drawn in `busy` (the claimant's
    /// range); servers out of reach after the growing pauses of
    /// [`Backoff`], never shorter than `busy`'s shortest. Says what it is
    /// waiting for, as the module doc tells.
    pub fn pause_after(
        &mut self,
        wanted: &str,
        refusal: Refusal,
        busy: (Duration, Duration),
    ) -> Option<Duration> {
        let (low, high) = busy;
        let mut pause = match refusal.kind {
            RefusalKind::Busy => {
                self.backoff.reset();
                low + random_below(high.saturating_sub(low))
            }
            _ => self.backoff.pause(low),
        };
        if let Some(bound) = self.bound {
            // No attempt starts that has not UNDO_WITHIN left to run in.
            let last_start = (self.started + bound)
                .checked_sub(UNDO_WITHIN)
                .unwrap_or(self.started);
            let now = Instant::now();
            if now >= last_start || bound <= UNDO_WITHIN {
                self.last = Some(refusal);
                return None;
            }
            pause = pause.min(last_start - now);
        }
        let waited = self.started.elapsed();
        self.report
            .note(wanted, &refusal, self.bound, pause, waited);
        self.last = Some(refusal);
        Some(pause)
    }

    /// The error once no more attempts will be made: the last refusal,
    /// with how long was waited ([`Error::Exhausted`] when busy,
    /// [`Error::Unavailable`] otherwise).
    pub fn give_up(&mut self, wanted: &str) -> Error {
        match self.last.take() {
            Some(refusal) => refusal.into_error(self.bound),
            None => Refusal::unreachable(format!("no answer in time while getting {wanted}"))
                .into_error(self.bound),
        }
    }

    /// Runs `attempt` until it succeeds, fails with anything but
    /// [`Error::Unavailable`], or the bound passes; an attempt in flight at
    /// the bound is dropped there (it must leave nothing that matters
    /// behind: a read, or a write that is safe to lose or to have made).
    /// `attempt` is given the time left ([`left`](Self::left)), to bound
    /// its own rounds by. `wanted` names what is waited for in log lines:
    /// "the next id of the sequence orders".
    pub async fn retry<T>(
        &mut self,
        wanted: &str,
        mut attempt: impl AsyncFnMut(Option<Duration>) -> Result<T>,
    ) -> Result<T> {
        loop {
            let outcome = match self.cut_at() {
                None => attempt(None).await,
                Some(at) => match tokio::time::timeout_at(at, attempt(self.left())).await {
                    Ok(outcome) => outcome,
                    Err(_) => return Err(self.give_up(wanted)),
                },
            };
            match outcome {
                Err(Error::Unavailable(why)) => {
                    let refusal = Refusal::unreachable(why);
                    match self.pause_after(wanted, refusal, (Duration::ZERO, Duration::ZERO)) {
                        Some(pause) => tokio::time::sleep(pause).await,
                        None => return Err(self.give_up(wanted)),
                    }
                }
                other => return other,
            }
        }
    }
}

impl Patience {
    /// As [`retry`](Self::retry), for work that is long by nature (`init`
    /// of millions of ids, `list`): only reaching the server (`reach`: a
    /// dial and a first request) is cut off at the bound, never the work
    /// (`work`, given what `reach` made), whose every request is bounded by
    /// its own timeout. Work that fails with [`Error::Unavailable`] is done
    /// again, from `reach`, while the bound allows; it must be safe to
    /// repeat.
    pub async fn retry_work<S, T>(
        &mut self,
        wanted: &str,
        mut reach: impl AsyncFnMut(Option<Duration>) -> Result<S>,
        mut work: impl AsyncFnMut(S) -> Result<T>,
    ) -> Result<T> {
        loop {
            let reached = self.retry(wanted, &mut reach).await?;
            match work(reached).await {
                Err(Error::Unavailable(why)) => {
                    let refusal = Refusal::unreachable(why);
                    match self.pause_after(wanted, refusal, (Duration::ZERO, Duration::ZERO)) {
                        Some(pause) => tokio::time::sleep(pause).await,
                        None => return Err(self.give_up(wanted)),
                    }
                }
                other => return other,
            }
        }
    }
}

/// The log lines of a wait: the first refusal, then every change of reason
/// and every [`REPORT_EVERY`]. Servers out of reach are a warning (shown
/// with `--quiet`); a busy claim is news only.
#[derive(Default)]
struct Report {
    last: Option<(RefusalKind, Instant)>,
}

impl Report {
    fn note(
        &mut self,
        wanted: &str,
        refusal: &Refusal,
        bound: Option<Duration>,
        pause: Duration,
        waited: Duration,
    ) {
        let now = Instant::now();
        let changed = match self.last {
            None => true,
            Some((kind, _)) => kind != refusal.kind,
        };
        let due = changed || self.last.is_some_and(|(_, at)| now - at >= REPORT_EVERY);
        if !due {
            // Every attempt between the lines above, for an operator who
            // asked for them.
            log::debug!(
                "{}; retrying in {} (waiting for {wanted})",
                refusal.message,
                crate::base::duration::measured(pause)
            );
            return;
        }
        self.last = Some((refusal.kind, now));
        let message = &refusal.message;
        let line = if changed {
            let until = match bound {
                None => "as long as it takes".to_string(),
                Some(b) => format!("up to {}", crate::base::duration::measured(b)),
            };
            let pause = crate::base::duration::measured(pause);
            format!("{message}; waiting for {wanted} ({until}); retrying in {pause}")
        } else {
            let waited = crate::base::duration::measured(waited);
            format!("still waiting for {wanted} ({waited} so far): {message}")
        };
        match refusal.kind {
            RefusalKind::Busy => log::info!("{line}"),
            _ => log::warn!("{line}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn what_passes_is_retried_until_the_bound_and_the_rest_ends_at_once() {
        let mut tries = 0;
        let mut patience = Patience::new(Some(Duration::from_secs(3)));
        let out: Result<()> = patience
            .retry("the thing", async |_| {
                tries += 1;
                Err(Error::Unavailable("down".into()))
            })
            .await;
        match out {
            Err(Error::Unavailable(m)) => assert!(m.contains("gave up after waiting 3s"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(tries > 3, "{tries}");

        let mut tries = 0;
        let out: Result<()> = Patience::new(None)
            .retry("the thing", async |_| {
                tries += 1;
                Err(Error::Refused("wrong password".into()))
            })
            .await;
        assert!(matches!(out, Err(Error::Refused(_))));
        assert_eq!(tries, 1);
    }

    #[tokio::test(start_paused = true)]
    async fn an_attempt_in_flight_is_cut_off_at_the_bound() {
        let started = Instant::now();
        let out: Result<()> = Patience::new(Some(Duration::from_secs(3)))
            .retry("the thing", async |left| {
                assert!(left.is_some());
                tokio::time::sleep(Duration::from_secs(2)).await;
                Err(Error::Unavailable("no answer within 2s".into()))
            })
            .await;
        assert!(matches!(out, Err(Error::Unavailable(_))), "{out:?}");
        assert_eq!(started.elapsed(), Duration::from_secs(3));
    }

    #[tokio::test(start_paused = true)]
    async fn work_is_never_cut_off_only_the_wait_for_the_server() {
        let mut patience = Patience::new(Some(Duration::from_secs(3)));
        let (mut dials, mut runs) = (0, 0);
        let out = patience
            .retry_work(
                "the thing",
                async |_| {
                    dials += 1;
                    Ok(())
                },
                async |()| {
                    runs += 1;
                    if runs == 1 {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        return Err(Error::Unavailable("dropped".into()));
                    }
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    Ok(runs)
                },
            )
            .await;
        // The first run failed within the bound and was done again, and the
        // second one was let finish, past the bound.
        assert_eq!(out.unwrap(), 2);
        assert_eq!(dials, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_zero_bound_is_one_attempt_let_finish() {
        let mut tries = 0;
        let out: Result<()> = Patience::new(Some(Duration::ZERO))
            .retry("the thing", async |left| {
                tries += 1;
                assert_eq!(left, None);
                tokio::time::sleep(Duration::from_secs(2)).await;
                Err(Error::Unavailable("down".into()))
            })
            .await;
        match out {
            Err(Error::Unavailable(m)) => assert!(m.ends_with("; not waiting"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(tries, 1);
    }
}
