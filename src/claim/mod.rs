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
//!   and what an attempt comes to ([`Attempt`], [`Refusal`]);
//! * [`wait_for`]: the one wait loop (`--wait`, jittered
//!   pauses, a signal ending the wait cleanly, the "still waiting" report),
//!   polling or woken ([`wake`]) as [`WaitOptions`] say;
//! * [`Patience`]: the retry policy under it, which every other subcommand
//!   uses too: what passes is waited out up to the user's bound, what is
//!   misconfigured fails at once;
//! * [`mod@crate::timing::drift`]: how much of a ttl the holder may count on;
//! * [`Keeper`]: renews a held [`Claim`] in the background and knows its
//!   deadline; [`crate::supervise`] runs a command only while it holds.
//!
//! The kinds are [`crate::lease::Leaser`] (`yaraus run`) and
//! [`crate::lock::Locker`] (`yaraus lock`).

mod claimant;
pub mod keeper;
pub mod retry;
pub mod wait;
pub mod wake;

pub use claimant::{Attempt, Claimant, Refusal, RefusalKind};
pub use keeper::{Claim, Keeper, Loss, RenewError};
pub use retry::Patience;
pub use wait::{WaitOptions, wait_for};
pub use wake::{Channel, WAKE_LUA, WakePolicy, Wakeups};
