//! The majority monotonic sequence: numbers that only grow, agreed on by a
//! majority of N independent Redis masters (antirez, "Generating
//! monotonically increasing IDs", after Paxos's first phase).
//!
//! Every node keeps a counter under the same key. A number is handed out
//! when a majority of the nodes accepted it with *set-if-less-than*. Two
//! majorities share a node, which accepts a value at most once and only
//! above what it holds: so no number is handed out twice, and one handed
//! out after another completed is larger. That is the whole safety
//! argument; reading a majority first only *guesses* a value that will be
//! accepted, so a round proposes `floor + 1`, the floor read on the first
//! call and then learned from refusals. Numbers may skip; they never
//! repeat or go back.
//!
//! A node that lost its data (restarted empty) would accept values again,
//! so a missing key is *unknown*, never 0: such a node does not vote, nor
//! count towards a read majority; a new sequence is created only when every
//! node answered and none holds it, by a two-step compare-and-set of the
//! exact states read (`create.rs`); anything else without a majority of
//! holders is unavailable, never a guess. An emptied node is repaired only
//! after a quarantine that outlasts every round that could still count a
//! vote it cast before its loss ([`heal`]); a majority lost at once takes
//! an operator ([`set_floor`]).
//!
//! Nodes must not forget an accepted value: each is checked for
//! `appendfsync always` and a policy that never evicts the counter, unless
//! the [`crate::store::Quorum`] was built without that requirement
//! (`--allow-volatile`). Counters stay decimal text in Lua (whose numbers
//! are doubles) and are compared digit by digit, in a prelude the lock's
//! acquire script shares to vote for its fencing token
//! ([`crate::base::COUNTER_LUA`]).
//!
//! [`MajoritySequence`] (sequence.rs) runs the rounds; a majority's reading
//! is view.rs, a creation create.rs; the scripts' calls are script.rs, and
//! a name's checks and key name.rs. The design, the models that check it
//! and their findings: docs/seq.md.

pub mod census;
mod create;
mod floor;
pub mod heal;
mod name;
pub mod script;
mod sequence;
pub mod serve;
pub mod sweep;
mod sweep_metrics;
mod view;

pub use floor::{FloorOutcome, NodeFloor, set_floor};
pub use name::{MAX_NAME, SeqKeys, check_name};
pub use sequence::{MajoritySequence, Vote};
pub use sweep_metrics::SweepMetrics;
pub use view::{NodeState, creation, stopped};
