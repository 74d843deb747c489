//! Every majority counter of a namespace, read on every node: what
//! `yaraus health` reports and what a sweep heals.
//!
//! A counter is a sequence (`NS:seq:NAME`) or a lock's fencing counter
//! (`NS:fencing:KEY`, the hilo agent's lock among them): the same decimal
//! text, voted on the same way, marked and repaired by the same quarantine
//! ([`super::heal`]). A node that lost its data lost the key too, so the
//! names are found by `SCAN` on *every* node, and their union is read on
//! each: a counter a wiped node no longer has is still found on the others.
//! A counter lost on every node is gone from the census as from the nodes;
//! nothing can tell it from one that never was.
//!
//! The census writes nothing: it reads the counters with `census.lua`, the
//! read-only look of `read.lua` over a chunk of keys per call, and a
//! quarantine's end from the node's own clock (`TIME`), which is the clock
//! the repair obeys. Its cost is one `SCAN` of each node's keyspace (the
//! pattern filters on the server) and a script call per node and chunk of
//! counters, so it is for a sweep every few seconds, not for every call
//! (docs/benchmarks.md has its figures).

use super::script::CensusRead;
use super::view::NodeState;
use crate::error::Result;
use crate::store::{Node, Quorum, keys_under};
use crate::timing::sequence::QUARANTINE;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// Keys read per script call: a reply of a few tens of kilobytes, and a
/// node busy for well under a millisecond at a time.
const CHUNK: usize = 500;

/// Which counters a census reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `NS:seq:NAME`: the sequences of `yaraus seq`.
    Sequence,
    /// `NS:fencing:KEY`: the fencing counters of locks over several masters.
    Fencing,
}

impl Kind {
    /// Both kinds.
    pub const ALL: [Kind; 2] = [Kind::Sequence, Kind::Fencing];

    /// The key prefix of this kind in `namespace`.
    pub fn prefix(self, namespace: &str) -> String {
        match self {
            Kind::Sequence => format!("{namespace}:seq:"),
            Kind::Fencing => format!("{namespace}:fencing:"),
        }
    }

    /// Its `kind` label in metrics.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Sequence => "sequence",
            Kind::Fencing => "fencing",
        }
    }

    /// What a person calls it.
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Sequence => "sequence",
            Kind::Fencing => "fencing counter",
        }
    }
}

/// A counter's state on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// It holds the counter at this value, and votes.
    Holds(u64),
    /// Marked after a loss `age` ago; its quarantine ends after `left`, both
    /// on its clock (`left` zero: ripe, set again by the next pass).
    Quarantined { left: Duration, age: Duration },
    /// The key is missing: lost, not yet marked.
    Missing,
    /// `unborn:`: a read found it missing and left a mark for a creation
    /// (the exact state).
    Unborn(String),
    /// `creating:`: prepared for a creation that has not settled it (the
    /// exact state).
    Preparing(String),
    /// It holds something else: a key of another type, or garbage.
    Other(String),
    /// No answer, or it refused us.
    OutOfReach(String),
}

impl Place {
    /// Whether this node votes for the counter.
    pub fn holds(&self) -> bool {
        matches!(self, Place::Holds(_))
    }

    /// Its `state` label in metrics: what the node is to the counter
    /// (an unborn mark or a creation's state is a node without it).
    pub fn label(&self) -> &'static str {
        match self {
            Place::Holds(_) => "holding",
            Place::Quarantined { .. } => "quarantined",
            Place::Missing | Place::Unborn(_) | Place::Preparing(_) => "missing",
            Place::OutOfReach(_) => "unreachable",
            Place::Other(_) => "other",
        }
    }

    /// One or two words for a table.
    pub fn word(&self) -> String {
        match self {
            Place::Holds(v) => format!("holds {v}"),
            Place::Quarantined { left, .. } if left.is_zero() => "quarantined, ripe".into(),
            Place::Quarantined { left, .. } => format!(
                "quarantined, ripe in {}",
                crate::base::duration::shown(*left)
            ),
            Place::Missing => "missing".into(),
            Place::Unborn(_) => "unborn mark".into(),
            Place::Preparing(_) => "prepared for creation".into(),
            Place::Other(what) => format!("holds {what}"),
            Place::OutOfReach(why) => format!("out of reach: {why}"),
        }
    }
}

/// One counter on every node, in the quorum's order.
#[derive(Clone, Debug)]
pub struct Counter {
    pub kind: Kind,
    pub key: String,
    pub places: Vec<Place>,
}

/// Where a counter stands, from its places.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Every node holds it.
    Held,
    /// A majority holds it; the others heal by themselves (a quarantine) or
    /// answer again.
    Degraded,
    /// A majority of the nodes answered and fewer than a majority hold it,
    /// though some do: a majority lost it; only a person knows how far it went.
    Lost,
    /// No node holds it and none is out of reach: a creation that stopped
    /// half-way, or one in progress.
    Unsettled,
    /// Too few answered to say.
    OutOfReach,
}

impl Counter {
    /// How many nodes hold it.
    pub fn holders(&self) -> usize {
        self.places.iter().filter(|p| p.holds()).count()
    }

    /// Where it stands with `majority` votes needed.
    pub fn standing(&self, majority: usize) -> Standing {
        let holders = self.holders();
        let answered = self
            .places
            .iter()
            .filter(|p| !matches!(p, Place::OutOfReach(_)))
            .count();
        if holders == self.places.len() {
            Standing::Held
        } else if holders >= majority {
            Standing::Degraded
        } else if holders == 0 && answered == self.places.len() {
            Standing::Unsettled
        } else if answered - holders >= majority {
            // Enough nodes answered without it that no majority can hold it.
            Standing::Lost
        } else {
            Standing::OutOfReach
        }
    }

    /// Whether a heal pass has anything to do: a node that answered
    /// without it, beside a majority that holds it.
    pub fn wants_healing(&self, majority: usize) -> bool {
        self.holders() >= majority
            && self.places.iter().any(|p| {
                matches!(
                    p,
                    Place::Missing | Place::Unborn(_) | Place::Quarantined { .. }
                )
            })
    }

    /// Whether no node holds it and a creation stopped half-way on a
    /// majority, which the next call that reads every node rolls back once
    /// each prepared node is older than its creation quarantine, and then
    /// creates (`stopped` in view.rs).
    pub fn rolls_back_by_itself(&self, majority: usize) -> bool {
        let states: Option<Vec<NodeState>> = self
            .places
            .iter()
            .map(|p| match p {
                Place::Unborn(s) | Place::Preparing(s) => Some(NodeState::Lacks(s.clone())),
                // The call's own read marks a missing key first.
                Place::Missing => Some(NodeState::Lacks("unborn:0".into())),
                _ => None,
            })
            .collect();
        states.is_some_and(|states| {
            super::view::stopped(&states, majority).is_some_and(|prepared| !prepared.is_empty())
        })
    }

    /// The longest quarantine left among its nodes.
    pub fn ripe_in(&self) -> Option<Duration> {
        self.places
            .iter()
            .filter_map(|p| match p {
                Place::Quarantined { left, .. } => Some(*left),
                _ => None,
            })
            .max()
    }
}

/// Every counter of the kinds asked for, on every node.
#[derive(Clone, Debug)]
pub struct Census {
    pub labels: Arc<[String]>,
    pub majority: usize,
    pub counters: Vec<Counter>,
    /// Nodes whose keys could not be listed, with why: their counters are
    /// read anyway, but a counter only they hold is not found.
    pub unlisted: Vec<(String, String)>,
}

impl Census {
    /// Finds the counters of `kinds` in `namespace` on every node of
    /// `quorum` and reads each on every node. Writes nothing.
    pub async fn take(quorum: &mut Quorum, namespace: &str, kinds: &[Kind]) -> Result<Census> {
        let labels = quorum.labels();
        let mut keys: BTreeSet<(String, Kind)> = BTreeSet::new();
        let mut unlisted = Vec::new();
        for kind in kinds {
            let prefix = kind.prefix(namespace);
            let found = quorum
                .round(|node| {
                    let prefix = prefix.clone();
                    async move { keys_under(node.store(), &prefix).await }
                })
                .all()
                .await;
            for (label, listed) in labels.iter().zip(found) {
                match listed {
                    Ok(listed) => keys.extend(listed.into_iter().map(|key| (key, *kind))),
                    Err(e) => {
                        if !unlisted.iter().any(|(l, _)| l == label) {
                            unlisted.push((label.clone(), e.to_string()));
                        }
                    }
                }
            }
        }
        let mut census = Census::read(quorum, keys).await?;
        census.unlisted = unlisted;
        Ok(census)
    }

    /// Reads the counters `keys` (and only them) on every node, with no
    /// `SCAN`: for a caller that knows the counters it uses. A key no node
    /// that answered has in any form is left out, as a `SCAN` would not
    /// have found it (a lock that never ran has no counter yet). Writes
    /// nothing.
    pub async fn of_keys(quorum: &mut Quorum, keys: &[(Kind, String)]) -> Result<Census> {
        let keys = keys
            .iter()
            .map(|(kind, key)| (key.clone(), *kind))
            .collect();
        let mut census = Census::read(quorum, keys).await?;
        census.counters.retain(|c| {
            c.places
                .iter()
                .any(|p| !matches!(p, Place::Missing | Place::OutOfReach(_)))
        });
        Ok(census)
    }

    async fn read(quorum: &mut Quorum, keys: BTreeSet<(String, Kind)>) -> Result<Census> {
        let times = node_times(quorum).await;
        let (names, kinds): (Vec<String>, Vec<Kind>) = keys.into_iter().unzip();
        let names = &names;
        let per_node = quorum
            .round(|node| async move { read_node(node, names).await })
            .all()
            .await;
        let mut counters: Vec<Counter> = names
            .iter()
            .zip(kinds)
            .map(|(key, kind)| Counter {
                kind,
                key: key.clone(),
                places: Vec::with_capacity(per_node.len()),
            })
            .collect();
        for (states, now) in per_node.iter().zip(&times) {
            for (i, counter) in counters.iter_mut().enumerate() {
                counter.places.push(match states {
                    Ok(states) => place(&states[i], *now),
                    Err(e) => Place::OutOfReach(e.to_string()),
                });
            }
        }
        Ok(Census {
            labels: quorum.labels(),
            majority: quorum.majority(),
            counters,
            unlisted: Vec::new(),
        })
    }
}

/// A node's answer for one key: the node's state, or why the key is not
/// a counter.
type Look = std::result::Result<NodeState, String>;

/// Every key of `keys` on `node`, a chunk per script call.
async fn read_node(node: &mut Node, keys: &[String]) -> Result<Vec<Look>> {
    let mut looks = Vec::with_capacity(keys.len());
    for chunk in keys.chunks(CHUNK) {
        let answer = node.ask(&CensusRead { keys: chunk }.invocation()).await?;
        if answer.len() != 2 * chunk.len() {
            return Err(answer.unknown());
        }
        for i in 0..chunk.len() {
            looks.push(match answer.get::<i64>(2 * i)? {
                1 => Ok(NodeState::Counter(answer.counter(2 * i + 1)?)),
                0 => Ok(NodeState::Lacks(answer.text(2 * i + 1)?)),
                _ => Err(answer.text(2 * i + 1)?),
            });
        }
    }
    Ok(looks)
}

/// Where one node's answer puts it; `now_ms`, the node's clock.
fn place(look: &Look, now_ms: Option<u64>) -> Place {
    match look {
        Err(why) => Place::Other(why.clone()),
        Ok(NodeState::Counter(v)) => Place::Holds(*v),
        Ok(NodeState::Lacks(state)) => lacking(state, now_ms),
    }
}

fn lacking(state: &str, now_ms: Option<u64>) -> Place {
    if state.is_empty() {
        Place::Missing
    } else if state.starts_with("unborn:") {
        Place::Unborn(state.to_string())
    } else if state.starts_with("creating:") {
        Place::Preparing(state.to_string())
    } else if let Some(since) = quarantined_since(state) {
        let ripe_at = since + QUARANTINE.as_millis() as u64;
        // Without the node's clock: as if it had just been marked.
        let (left, age) = now_ms.map_or((QUARANTINE, Duration::ZERO), |now| {
            (
                Duration::from_millis(ripe_at.saturating_sub(now)),
                Duration::from_millis(now.saturating_sub(since)),
            )
        });
        Place::Quarantined { left, age }
    } else {
        Place::Other(format!("'{state}'"))
    }
}

/// The node clock's milliseconds in a `healing:<ms>:<hex>` mark.
fn quarantined_since(state: &str) -> Option<u64> {
    let rest = state.strip_prefix("healing:")?;
    let (ms, token) = rest.split_once(':')?;
    (!token.is_empty() && token.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| ms.parse().ok())
        .flatten()
}

/// Each node's clock, milliseconds (`None`: it did not say).
async fn node_times(quorum: &mut Quorum) -> Vec<Option<u64>> {
    quorum
        .round(|node| async move {
            let (s, us): (u64, u64) = node.store().query(&redis::cmd("TIME")).await?;
            Ok(s * 1000 + us / 1000)
        })
        .all()
        .await
        .into_iter()
        .map(Result::ok)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter(places: Vec<Place>) -> Counter {
        Counter {
            kind: Kind::Sequence,
            key: "ns:seq:a".into(),
            places,
        }
    }

    #[test]
    fn standing_follows_the_majority_of_holders() {
        let out = || Place::OutOfReach("down".into());
        assert_eq!(
            counter(vec![Place::Holds(3); 3]).standing(2),
            Standing::Held
        );
        assert_eq!(
            counter(vec![Place::Holds(3), Place::Holds(3), Place::Missing]).standing(2),
            Standing::Degraded
        );
        assert_eq!(
            counter(vec![Place::Holds(3), Place::Missing, Place::Missing]).standing(2),
            Standing::Lost
        );
        assert_eq!(
            counter(vec![Place::Holds(3), Place::Missing, out()]).standing(2),
            Standing::OutOfReach
        );
        assert_eq!(
            counter(vec![
                Place::Unborn("unborn:aa".into()),
                Place::Preparing("creating:1:bb".into()),
                Place::Preparing("creating:1:bb".into()),
            ])
            .standing(2),
            Standing::Unsettled
        );
        assert_eq!(
            counter(vec![Place::Holds(3), out(), out()]).standing(2),
            Standing::OutOfReach
        );
    }

    #[test]
    fn a_mark_says_when_it_is_ripe_on_the_node_clock() {
        assert_eq!(
            lacking("healing:1000:ab", Some(4000)),
            Place::Quarantined {
                left: QUARANTINE - Duration::from_millis(3000),
                age: Duration::from_millis(3000)
            }
        );
        assert_eq!(
            lacking("healing:1000:ab", Some(1_000_000)),
            Place::Quarantined {
                left: Duration::ZERO,
                age: Duration::from_millis(999_000)
            }
        );
        assert_eq!(
            lacking("healing:x:ab", Some(0)),
            Place::Other("'healing:x:ab'".into())
        );
        assert_eq!(lacking("", None), Place::Missing);
    }
}
