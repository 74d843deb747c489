//! Where a deployment stands, read on every node: what `yaraus health`
//! prints and what its `--wait` waits for.
//!
//! Every other command answers from a majority and hides a minority's
//! trouble, which is right for a call and wrong for an operator about to
//! take the next node down. A [`Survey`] reads everything yaraus keeps in a
//! namespace on *every* node: each node's fitness (it answers, keeps every
//! write, takes our password), every majority counter (sequences and lock
//! fencing counters, `seq::census`), the high-water mark of every hilo
//! sequence on every shard, and on a single pool server the worker-id
//! pool. From it come [`Finding`]s, each degraded (available, but one more
//! loss away from trouble: a node that lacks something, a quarantine not
//! over) or lost (a majority lost something at once, or is out of reach:
//! a person must decide, and the finding says what), and one exit status.
//!
//! Reading writes nothing. Healing is the sweep's (`seq::sweep`): the
//! quarantined repair as built, nothing new in the safety argument. The
//! runbooks: docs/service.md ("Rolling maintenance").

mod finding;
mod survey;
mod verdict;

pub use finding::{Finding, Level, exit_code};
pub use survey::{Keyed, NodeReport, PoolReport, ShardMark, Survey};
