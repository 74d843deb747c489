//! Every timing rule, in one place, each named with its reason.
//!
//! The user gives a handful of durations (`timeout`, a lease's `expire`,
//! `interval` and `delay`, a lock's `ttl`, `kill_after`, an index's
//! `interval` and `skew`); everything else yaraus waits for is derived from
//! them, or named, here, so that one can read why a limit is what it is.
//! Every named duration of the library lives here (`tests/layers.rs` checks
//! it), one file per domain or concern, each with its why; the README's
//! table of timing rules is their index, with each value.
//!
//! * [`Timeouts`] (timeouts.rs): every wait on Redis, from the user's `timeout`;
//! * [`drift`]: how much of a ttl a holder may count on; [`kill_after`]:
//!   the time a command gets to stop, inside the claim;
//! * [`lock`], [`lease`], [`index`], [`sequence`], [`hilo`]: each domain's;
//! * [`retry`]: riding out what passes; [`wake`]: waiters woken by a
//!   release; [`clock_guard`]: the worker id's clock guard;
//! * [`supervise`]: the watchdog's own; [`serve`]: `seq serve`'s;
//!   [`listen`]: the listening ports'.
//!
//! A rule that a value breaks is a [`TimingError`] (error.rs, its words in
//! message.rs), which carries the values and names the settings
//! ([`crate::base::setting::Setting`]); the front end decides how a setting
//! is spelled (the binary: its flags). As a crate [`crate::error::Error`] it
//! is a usage error (exit 2). This module imports nothing of the crate but
//! the bottom layer, so that every layer may use it.

pub mod clock_guard;
pub mod drift;
mod error;
pub mod health;
pub mod hilo;
pub mod index;
pub mod kill_after;
pub mod lease;
pub mod listen;
pub mod lock;
mod message;
pub mod retry;
pub mod sequence;
pub mod serve;
pub mod supervise;
mod timeouts;
pub mod wake;

pub use error::TimingError;
pub use timeouts::Timeouts;
