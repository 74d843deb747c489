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
//! text ([`wire`]): ids are 64-bit and Lua's numbers are not, while padded
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
mod metrics;
mod reserve;
mod script;
mod status;

pub use agent::{Agent, AgentOptions, AgentRun};
pub use allocator::{Allocator, AllocatorOptions};
pub use metrics::AgentMetrics;
pub use reserve::{Block, Reserver};
pub use status::{ShardStatus, Window, shard_status, shard_statuses};

use crate::error::{Error, Result};
use crate::store::reply::Answer;

/// The keys of one sequence (the same on every shard).
#[derive(Clone, Debug)]
pub struct HiloKeys {
    name: String,
    meta: String,
    open: String,
    windows: String,
}

impl HiloKeys {
    /// The keys of `name` in namespace `ns`; the name is checked first.
    pub fn new(ns: &str, name: &str) -> Result<HiloKeys> {
        crate::base::keys::check_tagged_name("hilo", name)?;
        let meta = format!("{ns}:hilo:{{{name}}}");
        Ok(HiloKeys {
            name: name.to_string(),
            open: format!("{meta}:open"),
            windows: format!("{meta}:windows"),
            meta,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Hash: hwm, fence, size, reserved, created.
    pub fn meta(&self) -> &str {
        &self.meta
    }

    /// The agent's lock: `ns:hilo:{NAME}:agent`.
    pub fn agent_lock(&self) -> String {
        format!("{}:agent", self.meta)
    }

    fn all(&self) -> [&str; 3] {
        [&self.meta, &self.open, &self.windows]
    }
}

/// An id as the scripts carry it: 20 digits, zero-padded.
pub fn wire(id: u64) -> String {
    format!("{id:020}")
}

/// A 20-digit text a script returned (or an empty one: absent).
fn parse_id(answer: &Answer, i: usize) -> Result<Option<u64>> {
    let text = answer.text(i)?;
    if text.is_empty() {
        return Ok(None);
    }
    answer.counter(i).map(Some)
}

/// The error of a script's reply code this module does not know, or of an
/// id it returned out of order.
fn garbled(label: &str, what: &str) -> Error {
    Error::Redis(format!(
        "Redis at {label} returned {what} for a hilo script; is another program writing \
         the sequence's keys?"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_travel_as_padded_text_that_sorts_as_numbers() {
        assert_eq!(wire(0), "00000000000000000000");
        assert_eq!(wire(u64::MAX), "18446744073709551615");
        let mut ids = [u64::MAX, 9_007_199_254_740_993, 10, 9, 1 << 53];
        let mut texts: Vec<String> = ids.iter().map(|&i| wire(i)).collect();
        ids.sort();
        texts.sort();
        assert_eq!(texts, ids.iter().map(|&i| wire(i)).collect::<Vec<_>>());
    }

    #[test]
    fn keys_share_one_hash_tag_and_names_are_checked() {
        let keys = HiloKeys::new("yaraus", "orders").unwrap();
        assert_eq!(
            keys.all(),
            [
                "yaraus:hilo:{orders}",
                "yaraus:hilo:{orders}:open",
                "yaraus:hilo:{orders}:windows"
            ]
        );
        assert_eq!(keys.agent_lock(), "yaraus:hilo:{orders}:agent");
        assert!(HiloKeys::new("yaraus", "").is_err());
        assert!(HiloKeys::new("yaraus", "a b").is_err());
        assert!(HiloKeys::new("yaraus", "a{b").is_err());
    }
}
