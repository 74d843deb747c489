//! What a kind of claim must say to be waited for ([`Claimant`]): how to
//! make one attempt, how to undo one a signal interrupted, how long to
//! pause between two; and what an attempt comes to ([`Attempt`]): held, or
//! refused with a reason ([`Refusal`]) that tells the retry policy whether
//! to wait it out. Only these depend on what is claimed; the wait loop
//! (wait.rs) and the retry policy (retry.rs) are the same for every kind.

use super::keeper::Claim;
use crate::error::{Error, Result};
use std::future::Future;
use std::time::Duration;

/// Something that can try to take a claim of one kind.
pub trait Claimant {
    /// The claim a successful attempt holds.
    type Claim: Claim;

    /// What is wanted, for log lines: "the lock deploy", "a free id in
    /// yaraus:ids".
    fn wanted(&self) -> String;

    /// One attempt. `Err` only for faults that trying again cannot cure (a
    /// key of the wrong type, a refused password); a busy or unreachable
    /// server is a [`Refusal`]. A refused attempt has released whatever it
    /// took.
    fn attempt(&mut self) -> impl Future<Output = Result<Attempt<Self::Claim>>>;

    /// How long an attempt that a signal interrupted may still run, so that
    /// what it took can be released; zero: drop it at once and
    /// [`undo`](Self::undo_interrupted) it.
    fn settle_within(&self) -> Duration;

    /// Undoes the last attempt, dropped half-way (a signal ended the wait
    /// and it did not settle in time): releases what it may have taken.
    fn undo_interrupted(&mut self) -> impl Future<Output = ()>;

    /// The shortest and longest pause between two attempts; each pause is
    /// drawn between them, so that waiters do not retry in step.
    fn pause(&self) -> (Duration, Duration);

    /// Arms the wake-ups of a waiter after a busy refusal (see
    /// [`super::wake`]): `true` when they were armed just now, in which
    /// case the caller tries again at once instead of pausing, since a
    /// release before the subscription would not be heard. The default
    /// (a claim without wake-ups) arms nothing.
    fn arm_wakeups(&mut self) -> impl Future<Output = bool> {
        std::future::ready(false)
    }

    /// Resolves when the claim may have become free: a wake-up that ends
    /// the pause early. The default never resolves (the pause is the poll).
    fn woken(&mut self) -> impl Future<Output = ()> {
        std::future::pending()
    }

    /// Closes the subscriptions of [`arm_wakeups`](Self::arm_wakeups):
    /// the wait is over.
    fn disarm_wakeups(&mut self) {}

    /// Checked just before a claim is handed out: `Err(why)` when it can no
    /// longer be used (too little validity left after a pause of ours), in
    /// which case it is released and the wait goes on.
    fn check(&self, _held: &Self::Claim) -> Result<(), String> {
        Ok(())
    }
}

/// The outcome of one attempt that did not fail outright.
pub enum Attempt<H> {
    Acquired(Box<H>),
    Refused(Refusal),
}

/// Why an attempt did not get the claim (everything it took is released).
#[derive(Clone, Debug)]
pub struct Refusal {
    pub kind: RefusalKind,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusalKind {
    /// Someone else holds it (or contenders split the votes).
    Busy,
    /// Too few servers answered, or too few replicas confirmed.
    Unreachable,
    /// A majority said yes, but too late for the claim to be worth having.
    TooSlow,
}

impl Refusal {
    pub fn busy(message: impl Into<String>) -> Refusal {
        Refusal {
            kind: RefusalKind::Busy,
            message: message.into(),
        }
    }

    pub fn unreachable(message: impl Into<String>) -> Refusal {
        Refusal {
            kind: RefusalKind::Unreachable,
            message: message.into(),
        }
    }

    /// The error to report when no more attempts will be made. `waited`:
    /// how long the caller was willing to wait. Busy is
    /// [`Error::Exhausted`] (exit 75); the rest [`Error::Unavailable`].
    pub fn into_error(self, waited: Option<Duration>) -> Error {
        let suffix = match waited {
            Some(w) if w.is_zero() => String::from("; not waiting"),
            Some(w) => format!(
                "; gave up after waiting {}",
                crate::base::duration::measured(w)
            ),
            None => String::new(),
        };
        match self.kind {
            RefusalKind::Busy => Error::Exhausted(format!("{}{suffix}", self.message)),
            _ => Error::Unavailable(format!("{}{suffix}", self.message)),
        }
    }
}
