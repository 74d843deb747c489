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
//! 1. *prepare*: every node, from exactly the mark read to
//!    `creating:<ms>:<id>` (`<id>` the creation's, `<ms>` the node's clock;
//!    a node already prepared for that creation is only checked). A loss
//!    wipes the mark, so a step decided before a loss fails after it.
//!    Prepared nodes are still non-holders;
//! 2. *settle*: only when every node is prepared, and only if the marking
//!    read and the preparation ended within [`ROUND_LIFETIME`] of the
//!    read's start (the creator's clock), each from its prepared state to
//!    0, which the node does only while that state is younger than
//!    [`ROUND_LIFETIME`] on its clock. Every node then sat unchanged,
//!    holding nothing, from its read to its preparation, and those intervals
//!    share an instant: at that instant no node held the counter.
//!
//! A creation that stopped half-way (its creator killed between writes, a
//! settle lost, a node lost during it) is *rolled back*, not finished:
//! every prepared state of it was written after each of its creators began
//! its read, so every settle of it lands within two lifetimes of that
//! start, and [`CREATION_QUARANTINE`] on the node's clock outlasts both at
//! the drift bound. A read that finds no holder, a majority prepared for
//! one creation ([`super::view::stopped`]), and every prepared node saying
//! its quarantine is over, sets each to a fresh mark naming the creation
//! (`unborn:<hex>:<id>`), by compare-and-set of its exact state: none of
//! them can be settled any more, so no holder of 0 is left beside marks
//! (the dead end the model `tests/seq_model/birth/` finds with weaker
//! rules), and a creation from marks follows.
//!
//! The read and the ripe answers count only within [`ROUND_LIFETIME`] of
//! the read's start, as a creator's replies do. A mark the read saw must
//! mean that no settle of the creation landed there: a preparation that
//! replaced it came after the read began and within a lifetime of its
//! creator's read, a whole quarantine before any node of the creation is
//! ripe, so ripe answers within a lifetime of the read's start leave no
//! room for one. A read that straggled longer (a long `--timeout`) could
//! count a mark that a late preparation replaced and settled to 0 since,
//! and roll the others back beside that holder.
//!
//! Creators that read the same states choose the same creation id (the id
//! of the view) and a compare-and-set that finds its target already there
//! succeeds, so simultaneous first callers finish one creation together
//! instead of undoing each other's. Marks make their views the same: a read
//! marks only a missing key and returns what the key holds, so every reader
//! sees the first mark.

use super::script::Transition;
use super::view::NodeState;
use crate::base::BootInstant;
use crate::base::random::random_hex;
use crate::error::{Error, Result};
use crate::store::Quorum;
use crate::timing::sequence::{CREATION_QUARANTINE, ROUND_LIFETIME};
use std::time::Duration;

/// Creates the sequence at `key` from `states` (every node's answer to a
/// marking read begun at `read_at`, in node order; all marks) as the
/// creation `id`. `Ok(true)`: settled on every node; `Ok(false)`: not
/// every node could be prepared (another creator, or a node changed) or
/// not in time: read again.
pub async fn create(
    quorum: &mut Quorum,
    key: &str,
    states: &[NodeState],
    id: &str,
    read_at: BootInstant,
) -> Result<bool> {
    let prepared = format!("creating:{id}");
    let steps: Vec<(String, String)> = states
        .iter()
        .map(|state| (state.stored(), prepared.clone()))
        .collect();
    if !transition(quorum, key, &steps, None, true).await? {
        return Ok(false);
    }
    // A settle decided later could land after a rollback of this creation.
    if read_at.elapsed() > ROUND_LIFETIME {
        return Ok(false);
    }
    let settle: Vec<(String, String)> = states
        .iter()
        .map(|_| (prepared.clone(), "0".to_string()))
        .collect();
    transition(quorum, key, &settle, Some(ROUND_LIFETIME), false).await
}

/// Rolls back the `prepared` nodes (index, exact `creating:<ms>:<id>`) of a
/// creation that stopped half-way ([`super::view::stopped`]), once every one
/// of them says its [`CREATION_QUARANTINE`] is over: each to a fresh mark
/// naming the creation, if the marking read begun at `read_at` and those
/// answers fit within [`ROUND_LIFETIME`]. `Ok(true)`: every one rolled
/// back; `Ok(false)`: not yet (the longest wait left, if a node said so),
/// not in time, or a node changed: read again.
pub async fn roll_back(
    quorum: &mut Quorum,
    key: &str,
    prepared: &[(usize, String)],
    read_at: BootInstant,
) -> Result<(bool, Option<Duration>)> {
    let n = quorum.len();
    let step = |to: &dyn Fn(&str) -> String| -> Vec<Option<(String, String)>> {
        (0..n)
            .map(|i| {
                let (_, state) = prepared.iter().find(|(j, _)| *j == i)?;
                Some((state.clone(), to(state)))
            })
            .collect()
    };
    let ripe = step(&|state| state.to_string());
    let (all, left) = ask(quorum, key, &ripe).await;
    if !all {
        return Ok((false, left));
    }
    // A mark counted from an older read may have been prepared and settled
    // since (module docs).
    if read_at.elapsed() > ROUND_LIFETIME {
        return Ok((false, None));
    }
    let token = random_hex::<16>("a sequence mark")?;
    let undo = step(&|state| {
        let id = state.rsplit(':').next().unwrap_or_default();
        format!("unborn:{token}:{id}")
    });
    Ok(ask(quorum, key, &undo).await)
}

/// Sends each node its step (if any) with the creation quarantine; whether
/// every one was done, and the longest wait a node said was left.
async fn ask(
    quorum: &mut Quorum,
    key: &str,
    steps: &[Option<(String, String)>],
) -> (bool, Option<Duration>) {
    let replies = quorum
        .round_each(steps, |node, step| async move {
            let Some((from, to)) = step else {
                return Ok(Some(Duration::ZERO));
            };
            let bound = Some(CREATION_QUARANTINE);
            let answer = node
                .ask(
                    &Transition {
                        key,
                        from,
                        to,
                        bound,
                    }
                    .invocation(),
                )
                .await?;
            match answer.code()? {
                1 => Ok(Some(Duration::ZERO)),
                2 => Ok(Some(Duration::from_millis(answer.counter(1)?))),
                0 => Ok(None),
                _ => Err(answer.unknown()),
            }
        })
        .all()
        .await;
    let mut all = true;
    let mut left = None::<Duration>;
    for reply in replies {
        match reply {
            Ok(Some(wait)) if wait.is_zero() => {}
            Ok(Some(wait)) => {
                all = false;
                left = Some(left.map_or(wait, |l| l.max(wait)));
            }
            _ => all = false,
        }
    }
    (all, left)
}

/// Runs `steps[i]` (from, to) on node i, all at once, with `bound` (a
/// settle's). True when every step landed. `stop_early`: give up on the
/// first refusal (the creation is void anyway); otherwise wait for every
/// node, so that a settle reaches every node it can.
async fn transition(
    quorum: &mut Quorum,
    key: &str,
    steps: &[(String, String)],
    bound: Option<Duration>,
    stop_early: bool,
) -> Result<bool> {
    let replies = quorum
        .round_each(steps, |node, (from, to)| async move {
            let answer = node
                .ask(
                    &Transition {
                        key,
                        from,
                        to,
                        bound,
                    }
                    .invocation(),
                )
                .await?;
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
