//! Distributed locks over one or N independent Redis masters, with fencing
//! tokens: what `yaraus lock` holds while its command runs.
//!
//! The lock is the key `NAME` holding a random token (`SET NX PX ttl`),
//! extended and deleted only by that token's holder: the convention of
//! redis-py's `Lock`, redsync and node-redlock, so that their locks and
//! ours exclude each other and yaraus never touches a key that is not its
//! own.
//!
//! With N masters it is Redlock: the acquire script goes to every master
//! at once, and the lock is ours with a majority and validity left (ttl −
//! elapsed − drift, elapsed from *before* the first request). One code path
//! serves both: a single master is a quorum of one. Two rules go beyond the
//! Redlock text, each for a bug seen in other implementations: an
//! acquisition counts only with half the ttl left once the lock *and its
//! fencing token* are in hand, and an extension that finds our key missing
//! on a node sets it again, so that a majority heals instead of wearing
//! away one restart at a time.
//!
//! The fencing token is an `INCR` in the acquire script on one master; on
//! N, the vote of the majority sequence ([`crate::seq`]) rides in the
//! acquire script, applied only where the `SET` succeeded. That is safe
//! because two holders' accepting majorities share a node where both took
//! the lock, in order, so the later one's vote was accepted there only
//! above the earlier one's token. Counters must survive a crash, hence
//! `appendfsync always` on N masters.
//!
//! Semaphores (`limit > 1`) and shared holders (`-s`) are sorted sets on one
//! master: counts do not add up over a quorum. A shared place and the
//! exclusive lock of the same name are one key changed only by scripts, so
//! they exclude each other; a waiting writer leaves a mark that holds new
//! shared holders back (writers go first).
//!
//! The design, its sources and its limits: docs/lock.md, "Semantics" and
//! "Shared locks".

mod acquire;
mod extend;
mod held;
mod info;
mod kind;
mod leftovers;
mod locker;
mod release;
pub mod script;
mod tally;
mod token;

pub use held::{Attempt, HeldLock};
pub use info::{LockInfo, NodeInfo, SemaphoreHolder};
pub use locker::{LockOptions, Locker};
pub use release::{ReleaseVerdict, Released};
pub use token::{Holder, Token, describe_holder, host};
