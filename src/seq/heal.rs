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
//!    [`ROUND_LIFETIME`] on its
//!    proposer's boot clock (`MajoritySequence::round`; the lock's fencing
//!    vote likewise);
//! 2. a read that counted a majority of holders and found a node without
//!    the counter *marks* it, by compare-and-set of the exact state it read:
//!    `healing:<ms>:<token>`, `<ms>` the node's own clock (`TIME`). A mark
//!    is not a counter: the node still does not vote;
//! 3. once [`QUARANTINE`] has passed *on that node's clock* (the node says
//!    so when asked), a caller reads the counter from a majority of the
//!    nodes holding it, in a read *begun after that answer*, and sets the
//!    marked node to the highest value read, by compare-and-set of the
//!    exact mark (the node checks its clock again when it executes it).
//!
//! Every round that got a vote from the node before its loss started before
//! the loss, so before the mark, and has stopped counting by the end of the
//! quarantine, whatever the clocks say, as long as their *rates* stay within
//! the drift bound ([`crate::timing::sequence`]); the repair's read begins
//! after that, so whatever such a round made a majority accept, the read
//! sees. A value handed out by a
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

use super::script::{Heal, HealStep};
use super::view::{Until, View};
use crate::base::BootInstant;
use crate::base::random::random_hex;
use crate::error::Result;
use crate::store::Quorum;
use crate::timing::sequence::{QUARANTINE, ROUND_LIFETIME};
use std::time::Duration;

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
    Quarantined(Duration),
}

/// Per counter healed: its key, and what each node went through.
pub type Healings = Vec<(String, Vec<(String, Healed)>)>;

/// One pass over the nodes of `key`: reads every node; if a majority holds
/// the counter, marks the nodes found without it, and asks each marked node
/// whether its quarantine is over. Only then, for those that say so, a
/// *second* read, begun after they said it: the highest counter it finds
/// from a majority is what they are set to, if that read ended within a
/// round's lifetime. (A read begun before the end of the quarantine could
/// miss the late acceptance of a round that still counted a lost vote; the
/// model checker finds the value twice then.)
/// Returns what changed, by node label. An error only for a fatal read (a
/// key of another type, a node not durable).
pub async fn heal(quorum: &mut Quorum, key: &str) -> Result<Vec<(String, Healed)>> {
    let view = View::read_until(quorum, key, "", Until::Everyone).await?;
    if view.highest_of_a_majority().is_none() {
        // Too few holders: nothing can be set from a majority.
        return Ok(Vec::new());
    }
    let token = random_hex::<TOKEN_BYTES>("a quarantine mark")?;
    let first: Vec<Option<HealStep>> = requests(
        &view.lacking(),
        |state| {
            let state = state.to_string();
            if state.starts_with("healing:") {
                Some(HealStep::Ripe {
                    state,
                    quarantine: QUARANTINE,
                })
            } else if state.is_empty() || state.starts_with("unborn:") {
                Some(HealStep::Mark {
                    state,
                    token: token.clone(),
                })
            } else {
                // A node prepared for a creation, beside holders: not ours to touch.
                None
            }
        },
        quorum.len(),
    );
    let mut healed = Vec::new();
    let mut ripe = Vec::new();
    for (i, outcome) in ask_each(quorum, key, &first).await.into_iter().enumerate() {
        match outcome {
            Some(Step::Ripe(state)) => ripe.push((i, state)),
            Some(step) => healed.push((i, step.into())),
            None => {}
        }
    }
    // Like a round, the repair's read counts only within a round's
    // lifetime: the model checker explores reads that end within it.
    let started = BootInstant::now();
    let fresh = if ripe.is_empty() {
        None
    } else {
        Some(View::read_until(quorum, key, "", Until::Everyone).await?)
    };
    let in_time = started.elapsed() <= ROUND_LIFETIME;
    if let Some(fresh) = fresh.filter(|_| in_time) {
        if let Some(highest) = fresh.highest_of_a_majority() {
            let second = requests(
                &ripe,
                |state| {
                    Some(HealStep::Repair {
                        state: state.to_string(),
                        counter: highest,
                        quarantine: QUARANTINE,
                    })
                },
                quorum.len(),
            );
            for (i, outcome) in ask_each(quorum, key, &second).await.into_iter().enumerate() {
                if let Some(step) = outcome {
                    healed.push((i, step.into()));
                }
            }
        }
    }
    let labels = quorum.labels();
    Ok(healed
        .into_iter()
        .filter_map(|(i, h): (usize, Option<Healed>)| Some((labels[i].clone(), h?)))
        .collect())
}

/// What one node answered to `heal.lua`.
enum Step {
    Marked,
    Ripe(String),
    Quarantined(Duration),
    Repaired(u64),
}

impl From<Step> for Option<Healed> {
    fn from(step: Step) -> Option<Healed> {
        match step {
            Step::Marked => Some(Healed::Marked),
            Step::Quarantined(left) => Some(Healed::Quarantined(left)),
            Step::Repaired(v) => Some(Healed::Repaired(v)),
            Step::Ripe(_) => None,
        }
    }
}

/// Per node, the request `of` makes of its state (the nodes of `states`
/// only).
fn requests(
    states: &[(usize, String)],
    of: impl Fn(&str) -> Option<HealStep>,
    nodes: usize,
) -> Vec<Option<HealStep>> {
    (0..nodes)
        .map(|i| {
            let (_, state) = states.iter().find(|(j, _)| *j == i)?;
            of(state)
        })
        .collect()
}

/// Sends each node its request (if any) at once; per node, what it said
/// (`None`: no request, no answer in time, or a state that had changed).
async fn ask_each(
    quorum: &mut Quorum,
    key: &str,
    requests: &[Option<HealStep>],
) -> Vec<Option<Step>> {
    quorum
        .round_each(requests, |node, request| async move {
            let Some(step) = request else {
                return Ok(None);
            };
            let answer = node.ask(&Heal { key, step }.invocation()).await?;
            Ok(match (step, answer.code()?) {
                (HealStep::Mark { .. }, 1) => Some(Step::Marked),
                (HealStep::Ripe { state, .. }, 1) => Some(Step::Ripe(state.clone())),
                (HealStep::Repair { .. }, 1) => Some(Step::Repaired(answer.counter(1)?)),
                (_, 2) => Some(Step::Quarantined(Duration::from_millis(answer.counter(1)?))),
                (_, 0) => None,
                _ => return Err(answer.unknown()),
            })
        })
        .all()
        .await
        .into_iter()
        .map(|reply| reply.ok().flatten())
        .collect()
}

/// Counters a node went through the same step for, past which one line
/// says them all (a wiped node lacks every counter at once).
const LINES_PER_STEP: usize = 3;

/// Says what the heal passes of a sweep did: a line per node and counter,
/// or, for more than a few counters of one node, a line per node and step.
pub fn report_all(healings: &Healings) {
    let mut by_node: Vec<(&str, Vec<&str>, Vec<&str>)> = Vec::new();
    for (key, healed) in healings {
        for (label, what) in healed {
            let at = match by_node.iter().position(|(l, _, _)| l == label) {
                Some(at) => at,
                None => {
                    by_node.push((label, Vec::new(), Vec::new()));
                    by_node.len() - 1
                }
            };
            match what {
                Healed::Marked => by_node[at].1.push(key),
                Healed::Repaired(_) => by_node[at].2.push(key),
                Healed::Quarantined(_) => {}
            }
        }
    }
    for (label, marked, repaired) in by_node {
        if marked.len() > LINES_PER_STEP {
            log::warn!(node = label;
                "{label} does not hold {} counters ({}, …; restarted empty?): quarantined for {}, \
                 then set again from a majority by a later call or sweep",
                marked.len(),
                marked[0],
                crate::base::duration::shown(QUARANTINE)
            );
        }
        if repaired.len() > LINES_PER_STEP {
            log::info!(node = label;
                "{label}: {} counters ({}, …) set again from a majority after their quarantine; \
                 it votes again",
                repaired.len(),
                repaired[0]
            );
        }
        let few = |keys: &[&str]| keys.len() <= LINES_PER_STEP;
        for (key, healed) in healings {
            let lines: Vec<(String, Healed)> = healed
                .iter()
                .filter(|(l, what)| {
                    l == label
                        && match what {
                            Healed::Marked => few(&marked),
                            Healed::Repaired(_) => few(&repaired),
                            Healed::Quarantined(_) => false,
                        }
                })
                .cloned()
                .collect();
            report(key, &lines);
        }
    }
}

/// Says what a heal pass did, a line a node.
pub fn report(key: &str, healed: &[(String, Healed)]) {
    for (label, what) in healed {
        match what {
            Healed::Marked => log::warn!(node = label.as_str();
                "{label} does not hold the counter {key} (restarted empty?): quarantined for {}, \
                 then set again from a majority by a later call or sweep",
                crate::base::duration::shown(QUARANTINE)
            ),
            Healed::Repaired(v) => log::info!(node = label.as_str();
                "{label}: {key} set again to {v} from a majority after its quarantine; it votes \
                 again"
            ),
            Healed::Quarantined(_) => {}
        }
    }
}
