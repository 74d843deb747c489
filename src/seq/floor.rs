//! `yaraus seq set-floor`: the operator's way out after a disaster.
//!
//! When more than a minority of nodes lost a sequence, or a lost node must
//! vote again, no rule inside the sequence can know how far it had gone:
//! the operator can (logs, the largest id in the database). Raising every
//! node to at least that value makes each one a holder again, and a holder
//! only ever goes up. It never lowers a node, so running it again, or with
//! too small a value where the nodes still remember, is harmless; a value
//! below a number handed out that no remaining node remembers is the one
//! thing it cannot detect, which is why it is a command for people.
//!
//! It must reach every node: a node left without the counter still cannot
//! vote, so any node that did not answer is reported, and the caller exits
//! non-zero until a rerun reaches it.

use super::script::SetFloor;
use crate::error::Result;
use crate::store::Quorum;

/// What `set-floor` did on one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloorOutcome {
    /// The node did not hold the counter, or held less: it holds the floor now.
    Raised,
    /// The node already held this value, at or above the floor: unchanged.
    Above(u64),
}

/// One node's answer to `set-floor`.
#[derive(Debug)]
pub struct NodeFloor {
    pub label: String,
    pub outcome: Result<FloorOutcome>,
}

/// Raises the counter at `key` to at least `floor` on every node.
pub async fn set_floor(quorum: &mut Quorum, key: &str, floor: u64) -> Vec<NodeFloor> {
    let labels = quorum.labels();
    let replies = quorum
        .round(|node| async move {
            let answer = node.ask(&SetFloor { key, floor }.invocation()).await?;
            match answer.code()? {
                1 => Ok(FloorOutcome::Raised),
                0 => Ok(FloorOutcome::Above(answer.counter(1)?)),
                _ => Err(answer.unknown()),
            }
        })
        .all()
        .await;
    labels
        .iter()
        .zip(replies)
        .map(|(label, outcome)| NodeFloor {
            label: label.clone(),
            outcome,
        })
        .collect()
}
