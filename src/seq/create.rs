//! Creating a sequence: from "no node holds it" to "every node holds 0",
//! without ever turning a node that lost its data back into a holder.
//!
//! The trap (found by the model in `tests/seq_model`): a creator reads that
//! no node holds the counter, and its `SET 0 if missing` reaches a node
//! *later*, after another creator's sequence handed out 1 there and the node
//! lost its data. The node now holds 0 next to one that still holds 0, and
//! 1 comes out again. A write decided on an old read must not land on a
//! node that changed since; "the key is missing" cannot tell, because a
//! loss makes it missing again.
//!
//! So a read leaves a unique mark where the key is missing (`unborn:<hex>`,
//! `read.lua`), and creation moves nodes only by compare-and-set of their
//! whole state (`transition.lua`), in two steps:
//!
//! 1. *prepare*: every node, from exactly the mark read to `creating:<hex>`
//!    (`<hex>` is the creation's id; a node already prepared for that
//!    creation is only checked unchanged). A loss wipes the mark, so a
//!    step decided before a loss fails after it. Prepared nodes are still
//!    non-holders: a creation prepared on some nodes and not others hands
//!    nothing out (and a creation stopped there stays stopped: see
//!    [`super::view::creation`] for why nobody else finishes it);
//! 2. *settle*: only when every node is prepared, each from
//!    `creating:<hex>` to 0. Every node then sat unchanged, holding
//!    nothing, from its read to its preparation, and those intervals share
//!    an instant (all reads came before all preparations): at that instant
//!    no node held the counter, so no number had been handed out that a
//!    majority still remembers.
//!
//! Creators that read the same states choose the same creation id (the id
//! of the view) and a compare-and-set that finds its target already there
//! succeeds, so simultaneous first callers finish one creation together
//! instead of undoing each other's. Marks make their views the same: a read
//! marks only a missing key and returns what the key holds, so every reader
//! sees the first mark.

use super::script::Transition;
use super::view::NodeState;
use crate::error::{Error, Result};
use crate::store::Quorum;

/// Creates the sequence at `key` from `states` (every node's answer to a
/// marking read, in node order; none a holder) as the creation `id`.
/// `Ok(true)`: settled on every node; `Ok(false)`: not every node could be
/// prepared (another creator, or a node changed): read again.
pub async fn create(
    quorum: &mut Quorum,
    key: &str,
    states: &[NodeState],
    id: &str,
) -> Result<bool> {
    let prepared = format!("creating:{id}");
    let steps: Vec<(String, String)> = states
        .iter()
        .map(|state| (state.stored(), prepared.clone()))
        .collect();
    if !transition(quorum, key, &steps, true).await? {
        return Ok(false);
    }
    let settle: Vec<(String, String)> = states
        .iter()
        .map(|_| (prepared.clone(), "0".to_string()))
        .collect();
    transition(quorum, key, &settle, false).await
}

/// Runs `steps[i]` (from, to) on node i, all at once.
/// True when every step landed. `stop_early`: give up on the first refusal
/// (the creation is void anyway); otherwise wait for every node, so that a
/// settle reaches every node it can.
async fn transition(
    quorum: &mut Quorum,
    key: &str,
    steps: &[(String, String)],
    stop_early: bool,
) -> Result<bool> {
    let replies = quorum
        .round_each(steps, |node, (from, to)| async move {
            let answer = node.ask(&Transition { key, from, to }.invocation()).await?;
            match answer.code()? {
                1 => Ok(true),
                0 => Ok(false),
                _ => Err(answer.unknown()),
            }
        })
        .until(|replies| stop_early && replies.iter().any(|r| matches!(r, Some(Ok(false)))))
        .await;
    let mut landed = true;
    let mut problems = Vec::new();
    for reply in replies {
        match reply {
            Some(Ok(true)) => {}
            Some(Ok(false)) | None => landed = false,
            Some(Err(e)) if e.is_fatal() => return Err(e),
            Some(Err(e)) => {
                landed = false;
                problems.push(e.to_string());
            }
        }
    }
    if !problems.is_empty() {
        return Err(Error::Unavailable(format!(
            "could not create the sequence {key}, which needs every node: {}",
            problems.join("; ")
        )));
    }
    Ok(landed)
}
