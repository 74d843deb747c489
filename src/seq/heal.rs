//! The quarantined repair of a node that lost a sequence's counter.
//!
//! A node restarted empty (a disk replaced, an AOF lost) no longer votes:
//! it may have accepted values it no longer remembers. Setting it again *at
//! once*, even to the highest counter a majority holds, is wrong: a
//! proposal it accepted just before the loss may still be on its way to
//! another node, and its round would count that old vote together with the
//! repaired node's second acceptance of the same value. What makes a repair
//! safe is time (the Redlock text's answer to restarts without persistence:
//! keep a restarted node out for longer than anything that used it can
//! still be in flight):
//!
//! 1. every round counts votes for at most
//!    [`ROUND_LIFETIME`](crate::timing::sequence::ROUND_LIFETIME) on its
//!    proposer's boot clock (`MajoritySequence::round`; the lock's fencing
//!    vote likewise);
//! 2. a read that counted a majority of holders and found a node without
//!    the counter *marks* it, by compare-and-set of the exact state it read:
//!    `healing:<ms>:<token>`, `<ms>` the node's own clock (`TIME`). A mark
//!    is not a counter: the node still does not vote;
//! 3. once [`QUARANTINE`] has passed *on that node's clock* (checked by the
//!    node when it executes the request), a caller that has just read the
//!    counter from a majority of the nodes holding it sets the marked node
//!    to that highest value, by compare-and-set of the exact mark it read.
//!
//! Every round that got a vote from the node before its loss started before
//! the loss, so before the mark, and has stopped counting by the end of the
//! quarantine, whatever the clocks say, as long as their *rates* stay within
//! the drift bound ([`crate::timing::sequence`]). A value handed out by a
//! majority that the node was not in (it was marked) is remembered by some
//! node of every later majority. A node lost again wipes its mark, so a
//! repair decided before the second loss never lands after it: it starts
//! over. The model checker (`tests/seq_model/`) explores the rule with
//! clocks and drift, and finds a value handed out twice when the quarantine
//! is shorter than a round, when the repair reads fewer than a majority, or
//! when a vote is counted after the lifetime.
//!
//! Healing never fails the call that does it: a node that does not answer,
//! or a mark that changed meanwhile, is left for the next caller.

use super::HEAL;
use super::view::View;
use crate::base::random::random_hex;
use crate::error::Result;
use crate::store::{Quorum, gather};
use crate::timing::sequence::QUARANTINE;

/// Random bytes of a mark's token: unique across markers.
const TOKEN_BYTES: usize = 16;

/// What a heal pass did to one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Healed {
    /// Found without the counter: its quarantine starts now.
    Marked,
    /// Its quarantine is over: it holds this value again, and votes.
    Repaired(u64),
    /// Marked earlier; this much of its quarantine is left, on its clock.
    Quarantined(std::time::Duration),
}

/// One pass over the nodes of `key`: reads every node; if a majority holds
/// the counter, marks the nodes found without it and repairs those whose
/// quarantine is over. Returns what changed, by node label. An error only
/// for a fatal read (a key of another type, a node not durable).
pub async fn heal(quorum: &mut Quorum, key: &str) -> Result<Vec<(String, Healed)>> {
    let view = View::read_all(quorum, key).await?;
    let Some(highest) = view.highest_of_a_majority() else {
        // Too few holders: a repair could not be told the highest value.
        return Ok(Vec::new());
    };
    let lacking = view.lacking();
    if lacking.is_empty() {
        return Ok(Vec::new());
    }
    let token = random_hex::<TOKEN_BYTES>("a quarantine mark")?;
    let (highest, quarantine_ms) = (highest.to_string(), QUARANTINE.as_millis().to_string());
    let labels = quorum.labels();
    let limit = quorum.round_timeout();
    let futures: Vec<_> = quorum
        .nodes_mut()
        .iter_mut()
        .enumerate()
        .map(|(i, node)| {
            let state = lacking
                .iter()
                .find(|(j, _)| *j == i)
                .map(|(_, s)| s.clone());
            let (token, highest, quarantine_ms) = (&token, &highest, &quarantine_ms);
            async move {
                let Some(state) = state else {
                    return Ok(None);
                };
                let args: Vec<&str> = if state.starts_with("healing:") {
                    vec!["repair", &state, highest, quarantine_ms]
                } else if state.is_empty() || state.starts_with("unborn:") {
                    vec!["mark", &state, token]
                } else {
                    // A creation's claim beside holders: not ours to touch.
                    return Ok(None);
                };
                let answer = node.ask(&HEAL, key, &args).await?;
                Ok(match (args[0], answer.code) {
                    ("mark", 1) => Some(Healed::Marked),
                    ("repair", 1) => Some(Healed::Repaired(answer.counter(1)?)),
                    ("repair", 2) => Some(Healed::Quarantined(std::time::Duration::from_millis(
                        answer.counter(1)?,
                    ))),
                    (_, 0) => None,
                    _ => return Err(answer.unknown()),
                })
            }
        })
        .collect();
    let replies = gather(futures, &labels, limit, |_| false).await;
    Ok(labels
        .iter()
        .zip(replies)
        .filter_map(|(label, reply)| match reply {
            Some(Ok(Some(healed))) => Some((label.clone(), healed)),
            _ => None,
        })
        .collect())
}

/// Says what a heal pass did, a line a node.
pub fn report(key: &str, healed: &[(String, Healed)]) {
    for (label, what) in healed {
        match what {
            Healed::Marked => crate::warn!(
                "{label} does not hold the counter {key} (restarted empty?): quarantined for {}, \
                 then set again from a majority by the next caller",
                humantime::format_duration(QUARANTINE)
            ),
            Healed::Repaired(v) => crate::info!(
                "{label}: {key} set again to {v} from a majority after its quarantine; it votes \
                 again"
            ),
            Healed::Quarantined(_) => {}
        }
    }
}
