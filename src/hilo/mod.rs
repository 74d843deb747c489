//! Distributed hi-lo: ids handed out in blocks from windows that live on
//! several independent Redis shards, so that any shard that answers can
//! serve a block and no two blocks ever overlap (the design of
//! "Designing a Distributed Hi-Lo Strategy", 2008, made safe where it says
//! it is not).
//!
//! Each shard holds, per sequence, a few *windows* `[start, end)` with a
//! cursor; a [`Reserver`] takes a block from the open window with the
//! lowest start in one script (`reserve.lua`). Only the [`Agent`] opens
//! windows, each above a *high-water mark* (hwm) below which every id may
//! belong to a window somewhere. Bounds are 20-digit zero-padded decimal
//! text ([`wire()`]): ids are 64-bit and Lua's numbers are not, while padded
//! text compares, in Lua and in a sorted set, as the numbers do.
//!
//! No window is opened twice because an agent run goes on to its next
//! phase only when **every** shard accepted the last, each one script per
//! shard: *fence* (the shard takes the run's fence unless it holds a newer
//! one, and replies its hwm), *raise* (every shard still fenced by the run
//! records the new hwm), *create* (each window opened on its shard if the
//! fence is still the run's). A shard's fence changes only when another run
//! fences it, so two runs' fence-to-raise spans on a shard that kept the
//! mark do not interleave, and the later run opens its windows above the
//! earlier's. Neither the agent's lock nor clocks carry safety; a shard
//! restarted empty refuses the runs that fenced it before, and its lost
//! windows cost ids, never duplicates. `tests/hilo_model/` checks it.
//!
//! What must hold outside: a shard keeps every acknowledged write, or loses
//! everything (never an *old* copy of its windows), and some shard always
//! holds the latest mark.
//!
//! Keys, the argument step by step, sizing and losses: docs/hilo.md.

mod agent;
mod allocator;
mod keys;
mod metrics;
mod reserve;
pub mod script;
mod status;
mod wire;

pub use agent::{Agent, AgentOptions, AgentRun};
pub use allocator::{Allocator, AllocatorOptions};
pub use keys::HiloKeys;
pub use metrics::AgentMetrics;
pub use reserve::{Block, Reserver};
pub use status::{ShardStatus, Window, shard_status, shard_statuses};
pub use wire::wire;
