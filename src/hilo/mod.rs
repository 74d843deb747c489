//! Distributed hi-lo: ids handed out in blocks from windows that live on
//! several independent Redis shards, so that any shard that answers can
//! serve a block and no two blocks ever overlap (the design of
//! "Designing a Distributed Hi-Lo Strategy", 2008, made safe where it says
//! it is not).
//!
//! # Model
//!
//! Each shard holds, per sequence, a few *windows* `[start, end)` with a
//! cursor `next`; a window is open while `next < end`. A reserver takes a
//! block from the open window with the lowest start ([`Reserver`], one Lua
//! script: advance `next` by the batch, never beyond `end`). Only the agent
//! ([`Agent`]) creates windows, each above a *high-water mark* (hwm): every
//! id below it may belong to a window somewhere.
//!
//! # Keys (on every shard; `{NAME}` is a Cluster hash tag)
//!
//! | key | type | content |
//! | --- | --- | --- |
//! | `ns:hilo:{NAME}` | hash | `hwm`, `fence` (the last agent run's), `size` (window size), `reserved` (ids handed out here), `created` (windows opened here) |
//! | `ns:hilo:{NAME}:open` | sorted set | every score 0; member = the start of an open window |
//! | `ns:hilo:{NAME}:windows` | hash | start → `"END NEXT"` |
//! | `ns:hilo:{NAME}:agent` | string | the agent's lock ([`crate::lock`], over the shards as masters) |
//!
//! Every bound is 20-digit zero-padded decimal text ([`wire`]): ids are
//! 64-bit and Lua's numbers are exact only to 2^53, while padded text
//! compares, in Lua and in a sorted set's lexical order, as the numbers do.
//! `reserve.lua` adds and subtracts such texts digit by digit.
//!
//! # Why no window is ever created twice
//!
//! The blog post reconstructs the hwm from the shards and admits the flaw:
//! the shard with the highest window must be reachable. Writing the hwm to
//! every shard is not enough on its own either: two agents that both read
//! the same hwm create the same window on two shards. An agent's run
//! therefore has three phases, each one script per shard, and goes on to
//! the next phase only when **every** shard accepted the last:
//!
//! 1. **fence** (`fence.lua`): the shard takes this run's fence (its lock's
//!    fencing token and a random nonce) unless it holds a newer one, and
//!    replies its hwm and open windows;
//! 2. **raise** (`raise.lua`): with `new` = the highest hwm of the replies +
//!    the ids of the windows to create, every shard whose fence is still
//!    ours records `hwm ≥ new`;
//! 3. **create** (`create.lua`): each window `[a, b)` in `[hwm, new)` is
//!    opened on its shard if the shard's fence is still ours and its hwm is
//!    at least `b`.
//!
//! Take two runs R1, R2 that both created windows, and a shard x that kept
//! R1's mark until R2 fenced it (there is one as long as some shard always
//! holds a mark at least as high as the highest that every shard
//! acknowledged; see below). Both fenced and raised x, and a
//! fence changes only by another run's fence, so R1's fence-to-raise span
//! on x and R2's do not interleave: say R1's came first. R1 raised x to its
//! `new` before R2 fenced x, so R2's reply from x carried that hwm, and R2's
//! windows all lie above R1's. The lock (Redlock over the shards) makes the
//! runs take turns; safety does not rest on it, nor on clocks or the order
//! of fencing tokens: a run that loses its turn is refused, not obeyed.
//! A shard restarted empty has lost its fence, so it refuses every run that
//! fenced it before; its windows are gone, which costs ids, never
//! duplicates. The model checker in `tests/hilo_model/` explores every
//! interleaving of two runs with lost replies, delayed requests and a shard
//! restarted empty, and shows that raise and its fence check are needed.
//! It also shows that create's fence check, and the order of the fencing
//! tokens, buy progress, not safety: kept for defence in depth and so that
//! some run always succeeds.
//!
//! What must hold outside: a shard either keeps every acknowledged write
//! (`appendonly yes`, `appendfsync always`: checked, as for [`crate::seq`])
//! or loses everything (no persistence at all, with `--allow-volatile`). A
//! shard that comes back with an *old* copy of its windows (RDB snapshots,
//! `appendfsync everysec`) would hand out their ids again. And some shard
//! must always hold the latest mark: with N shards, N − 1 losses are
//! survived, N are not, even one at a time, unless an agent run copies the
//! mark back to the empty shards in between.

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
