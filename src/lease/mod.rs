//! The worker-ID pool: key layout, id encoding, and leasing one id
//! ([`Leaser`], which makes a [`Lease`]).
//!
//! The keyspace is the Go yaraus's, so both tools can share one pool while a
//! fleet migrates:
//!
//! | key | type | content |
//! | --- | --- | --- |
//! | `ns:ids` | sorted set | member = encoded id, score = lease expiry (Unix seconds, server time) |
//! | `ns:clients` | hash | encoded id → owner client id |
//! | `ns:stats` | hash | counters, and the pool's `min` and `max` |
//! | `ns:clock` | hash | encoded id → its clock guard's record ([`clock_guard`]; not the Go tool's) |
//!
//! An id is free when its score is not after the server's `TIME`. Leasing
//! takes the member with the lowest score, so the id that has been free the
//! longest goes first; the encoding (`A1`…`A9`, `B10`…) makes equal scores
//! sort by number, so the smallest id wins ties.
//!
//! A pool may be split into shards (`init --shards N`), each a pool of
//! these four keys under a prefix of its own, listed by a layout record
//! (`ns:layout`) that clients read: layout.rs.
//!
//! Acquire, renew and release are each one Lua script, timed by the server's
//! clock. A lease or renewal then waits for the replicas
//! ([`Store::confirm`], which learns their number once per connection,
//! outside the scripts, so that they need no `INFO`).
//!
//! [`Store::confirm`]: crate::store::Store::confirm

mod chunks;
pub mod clock_guard;
mod held;
mod init;
mod keys;
mod layout;
mod leaser;
mod list;
mod range;
mod recovery;
mod report;
pub mod script;
mod sharded_init;
mod waiting;
mod worker_id;

pub use clock_guard::ClockPolicy;
pub use held::Lease;
pub use init::{InitOutcome, MAX_POOL_SIZE, create_missing, init, validate_range};
pub use keys::PoolKeys;
pub use layout::{Layout, MAX_SHARDS, Shard};
pub use leaser::{Acquired, Leaser};
pub use list::{ListEntry, Listing, list};
pub use range::recorded_range;
pub use report::{HolderClock, ShardFigures, Stats, stats};
pub use sharded_init::{PoolInit, init_pool, validate_shards};
pub use worker_id::WorkerId;
