//! The life of a claim, once for every kind of claim.
//!
//! A worker id, a lock, a semaphore place, an index slot: each is *taken*
//! (an attempt that either holds, is refused with a reason, or fails), taken
//! again after a pause while the caller is willing to wait, *kept* by
//! renewing it before its validity runs out, and *released*. Only the
//! first and the last depend on what is claimed; this module holds the rest:
//!
//! * [`Claimant`]: what a kind of claim must say — how to make one attempt,
//!   how to undo one that was interrupted, how long to pause between two;
//! * [`wait_for`]: the one wait loop (`--wait`, jittered
//!   pauses, a signal ending the wait cleanly, the "still waiting" report);
//! * [`Patience`]: the retry policy under it, which every other subcommand
//!   uses too: what passes is waited out up to the user's bound, what is
//!   misconfigured fails at once;
//! * [`mod@crate::timing::drift`]: how much of a ttl the holder may count on;
//! * [`Keeper`]: renews a held [`Claim`] in the background and knows its
//!   deadline; [`crate::supervise`] runs a command only while it holds.
//!
//! The kinds are [`crate::lease::Leaser`] (`yaraus run`) and
//! [`crate::lock::Locker`] (`yaraus lock`).

pub mod keeper;
pub mod retry;
pub mod wait;
pub mod wake;

pub use keeper::{Claim, Keeper, Loss, RenewError};
pub use retry::Patience;
pub use wait::wait_for;
pub use wake::{Channel, WAKE_LUA, Wakeups};

use crate::error::{Error, Result};
use std::future::Future;
use std::time::Duration;

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

/// Whether a release wakes the waiters (claim/wake.rs), and which.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WakePolicy {
    /// One waiter, the first in the claim's queue, where a release frees
    /// one (a lock, a semaphore place, a worker id); every waiter where it
    /// frees many (a shared lock).
    #[default]
    Queue,
    /// Every waiter, by every release: no queue.
    All,
    /// None: the waiters only poll.
    Off,
}

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
    /// [`wake`]): `true` when they were armed just now, in which
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
