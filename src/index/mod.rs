//! Distributed peer indexing (`yaraus index`): every replica of a fleet
//! learns `(index, replicas)` once per interval, and its command runs only
//! under a pair that agrees with every other replica's.
//!
//! The seed's algorithm: at the start of interval `n` (plus the replica's
//! constant skew) each replica INCRs `NS:index:{NAME}:<n>`; its pair for
//! `n` is its rank in `n-1` and the count of `n-1`, so the pairs of one
//! interval are a partition. `tick.lua` adds what the seed leaves out: a
//! tick of `n` is refused once a later interval was ticked (*sealing*: the
//! count read is final, and clocks decide liveness, never safety), and a
//! retried tick gets its rank back (ranks kept per client).
//!
//! A transition is safe because a command lives only while contiguous
//! ticks vouch for it: its deadline (on the boot clock, enforced by the
//! watchdog) is [`Timing::validity`] after the send of the last tick that
//! found its pair unchanged, and a tick that fails or finds it changed
//! vouches for nothing more. A new command starts under its pair for `m`
//! only once every replica of `m-1` is *settled* for `m` (runs nothing but
//! its pair for `m`: kept, stopped with its whole tree gone, or none), a
//! validity plus drift has passed since this replica's tick of `m-1`
//! (whatever a silent replica ran has reached its deadline), and its own
//! deadline is still ahead. The argument, case by case, is in
//! docs/index.md, "The argument"; `tests/index_model/` checks it
//! exhaustively on a small model.
//!
//! * [`Timing`] (in [`crate::timing::index`], with the other timing rules):
//!   interval numbers, tick instants, validity;
//! * [`IndexKeys`]: the keys; [`Index`] (`tick.rs`): the scripts (`tick.lua`,
//!   `confirm.lua`) as one replica runs them, and [`Pair`], what they hand out;
//! * [`Replica`]: the ticks, waiting for a pair to start under at the
//!   barrier its [`History`] reads; [`Slot`]: a running command's pair,
//!   kept by [`crate::claim::Keeper`] like any other claim;
//! * [`status`]: what `--status` reports.
//!
//! [`Timing`]: crate::timing::index::Timing
//! [`Timing::validity`]: crate::timing::index::Timing::validity

mod history;
mod keys;
mod pair;
mod replica;
pub mod script;
mod slot;
pub mod status;
mod tick;

pub use history::History;
pub use keys::IndexKeys;
pub use pair::Pair;
pub use replica::Replica;
pub use slot::Slot;
pub use tick::{Index, Tick, TickOutcome, check_type};
