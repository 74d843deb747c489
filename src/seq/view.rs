//! Reading a sequence from every node, and what a set of answers allows.
//!
//! A read asks every node at once and stops as soon as a majority of them
//! *hold* the counter: that majority gives the floor. When fewer do, the
//! answers decide between three things, and [`View::verdict`] is the one
//! place that decides:
//!
//! * every node answered and the answers allow a creation (see
//!   [`View::creation`]): create, then read again;
//! * every node answered and none holds it, on a read-only look: the
//!   sequence does not exist;
//! * anything else: unavailable, naming the nodes that cannot vote and the
//!   way out. A node without the counter may be one that lost it, and the
//!   answers cannot tell; guessing there is how a number comes out twice.

use super::script::Read;
use crate::error::{Error, Result};
use crate::store::{Quorum, Replies};
use std::sync::Arc;

/// A sequence's state on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeState {
    /// The node holds the counter, at this value.
    Counter(u64),
    /// It does not. The exact state: a placeholder (`unborn:<hex>`, the mark
    /// of a read that found the key missing; `creating:<hex>`, a node
    /// prepared for the creation `<hex>`; `healing:<ms>:<hex>`, a node in
    /// quarantine, `heal.rs`), or empty for a missing key seen by a
    /// read-only look.
    Lacks(String),
}

impl NodeState {
    /// The state as the node stores it, for a compare-and-set.
    pub fn stored(&self) -> String {
        match self {
            NodeState::Counter(v) => v.to_string(),
            NodeState::Lacks(s) => s.clone(),
        }
    }
}

/// The answers of one read.
pub struct View {
    labels: Arc<[String]>,
    replies: Replies<NodeState>,
    majority: usize,
}

/// How long a read waits.
#[derive(Clone, Copy, Debug)]
pub enum Until {
    /// Until a majority of the nodes holds the counter: enough for a floor.
    MajorityHolds,
    /// For every answer (up to the round's bound): a heal pass needs to see
    /// the nodes without the counter, which a read that stops at a majority
    /// of holders may not have heard.
    Everyone,
}

/// What a [`View`] allows.
pub enum Verdict {
    /// A majority holds the counter; no number handed out is above this.
    Floor(u64),
    /// Every node answered and may be raised to 0 by the creation of this
    /// id (through `creating:<hex>`).
    Create(String),
    /// Every node answered and none holds the counter: no such sequence.
    Absent,
    /// Every node answered: a creation stopped half-way, prepared on a
    /// majority; these nodes (index, exact `creating:<ms>:<id>`) are rolled
    /// back to marks once each says it is ripe ([`stopped`]).
    RollBack(Vec<(usize, String)>),
}

impl View {
    /// Reads `key` on every node, until a majority holds the counter
    /// ([`read_until`](Self::read_until)).
    pub async fn read(quorum: &mut Quorum, key: &str, mark: &str) -> Result<View> {
        Self::read_until(quorum, key, mark, Until::MajorityHolds).await
    }

    /// Reads `key` on every node until `until`. `mark` (hex) is left where
    /// the key is missing, as `unborn:<mark>`; an empty `mark` writes
    /// nothing.
    pub async fn read_until(
        quorum: &mut Quorum,
        key: &str,
        mark: &str,
        until: Until,
    ) -> Result<View> {
        quorum.prepare_all().await?;
        let m = quorum.majority();
        let labels = quorum.labels();
        let replies = quorum
            .round(
                |node| async move { node_state(node.ask(&Read { key, mark }.invocation()).await?) },
            )
            .until(|replies| match until {
                Until::MajorityHolds => {
                    replies
                        .iter()
                        .filter(|r| matches!(r, Some(Ok(NodeState::Counter(_)))))
                        .count()
                        >= m
                }
                Until::Everyone => false,
            })
            .await;
        Ok(View {
            labels,
            replies,
            majority: m,
        })
    }

    /// The highest counter, when a majority of all the nodes answered
    /// holding it: at least every value handed out before the read began.
    pub fn highest_of_a_majority(&self) -> Option<u64> {
        let held: Vec<u64> = self
            .replies
            .iter()
            .filter_map(|r| match r {
                Some(Ok(NodeState::Counter(v))) => Some(*v),
                _ => None,
            })
            .collect();
        (held.len() >= self.majority).then(|| held.into_iter().max().unwrap_or(0))
    }

    /// The nodes that answered without the counter: index and exact state.
    pub fn lacking(&self) -> Vec<(usize, String)> {
        self.replies
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match r {
                Some(Ok(NodeState::Lacks(state))) => Some((i, state.clone())),
                _ => None,
            })
            .collect()
    }

    /// The states of the nodes that answered, in node order (every node's,
    /// when the verdict is a creation).
    pub fn states(&self) -> Vec<NodeState> {
        self.replies
            .iter()
            .filter_map(|r| match r {
                Some(Ok(state)) => Some(state.clone()),
                _ => None,
            })
            .collect()
    }

    /// What these answers allow for the sequence at `key`, whose lost nodes
    /// are set again by `recovery` (for the error) (a creation only
    /// if `may_create`: the read marked missing keys); a fatal error (wrong
    /// type, a node not durable) as it is; [`Error::Unavailable`] when they
    /// allow nothing.
    pub fn verdict(self, key: &str, recovery: &str, may_create: bool) -> Result<Verdict> {
        let n = self.replies.len();
        let m = self.majority;
        let mut holders = Vec::new();
        let mut lacking = Vec::new();
        let mut states = Vec::new();
        let mut problems = Vec::new();
        for (label, reply) in self.labels.iter().zip(self.replies) {
            match reply {
                None => {}
                Some(Ok(state)) => {
                    match state {
                        NodeState::Counter(v) => holders.push(v),
                        NodeState::Lacks(_) => lacking.push(label.as_str()),
                    }
                    states.push(state);
                }
                Some(Err(e)) if e.is_fatal() => return Err(e),
                Some(Err(e)) => problems.push(e.to_string()),
            }
        }
        if holders.len() >= m {
            return Ok(Verdict::Floor(holders.into_iter().max().unwrap_or(0)));
        }
        let everyone = states.len() == n;
        if everyone
            && may_create
            && let Some(id) = creation(&states)
        {
            return Ok(Verdict::Create(id));
        }
        if everyone
            && may_create
            && let Some(prepared) = stopped(&states, m)
        {
            return Ok(Verdict::RollBack(prepared));
        }
        if everyone && holders.is_empty() {
            if !may_create {
                return Ok(Verdict::Absent);
            }
            return Err(Error::Unavailable(format!(
                "the sequence {key} is being created, or a creation stopped half-way with \
                 fewer than a majority of the nodes prepared for it, which is also what a \
                 majority that lost the sequence can leave: set every node with {recovery}, \
                 VALUE above every number handed out (0 if it was never used)"
            )));
        }
        Err(unavailable(
            key,
            recovery,
            n,
            m,
            holders.is_empty(),
            &lacking,
            &problems,
        ))
    }
}

/// What a node's answer to `read.lua` says it holds.
fn node_state(answer: crate::store::reply::Answer) -> Result<NodeState> {
    match answer.code()? {
        1 => Ok(NodeState::Counter(answer.counter(1)?)),
        0 => Ok(NodeState::Lacks(answer.text(1)?)),
        _ => Err(answer.unknown()),
    }
}

/// The id of the creation by which the nodes of `states` (every node's
/// answer to one read that marked missing keys) may be created at 0, if
/// they may: only when every node holds a mark (`unborn:…`), under the id
/// of this view (`view_id`), which creators that read the same states
/// share.
///
/// Anything else is refused: holders beside marks or prepared nodes are
/// what a node that lost its data looks like, and prepared nodes are a
/// creation in progress, or one that stopped half-way, which is rolled
/// back ([`stopped`]) rather than finished. The model (`tests/seq_model`)
/// shows why looser rules are unsafe: adopting the greatest creation id
/// seen lets a half-failed creation prepare a node that had lost its data;
/// finishing a creation beside a holder lets a late preparation from a
/// failed first step pass for a creation that never succeeded, and 0 is
/// written beside a holder of 1.
pub fn creation(states: &[NodeState]) -> Option<String> {
    let marks = states
        .iter()
        .all(|s| matches!(s, NodeState::Lacks(s) if s.starts_with("unborn:")));
    marks.then(|| view_id(states))
}

/// The prepared nodes (index, exact state) of a creation that may have
/// stopped half-way, when `states` (every node's answer) allow rolling
/// them back: no holder, every node a mark or prepared, and a majority of
/// `majority` prepared for one creation or rolled back from it. Each is
/// rolled back only once it says its creation quarantine is over.
///
/// One prepared node beside marks is left alone: it is also what a
/// majority that lost a sequence leaves of a creation whose settle missed
/// that node, and rolling it back would create the sequence again at 0
/// (the model's `after_a_majority_loss_one_prepared_node_is_left_for_a_person`).
pub fn stopped(states: &[NodeState], majority: usize) -> Option<Vec<(usize, String)>> {
    let mut prepared = Vec::new();
    let mut of = Vec::new();
    for (i, state) in states.iter().enumerate() {
        let NodeState::Lacks(s) = state else {
            return None;
        };
        let parts: Vec<&str> = s.split(':').collect();
        match parts.as_slice() {
            ["creating", _, id] => {
                prepared.push((i, s.clone()));
                of.push(*id);
            }
            ["unborn", _, id] => of.push(*id),
            ["unborn", _] => {}
            _ => return None,
        }
    }
    let most = prepared
        .iter()
        .map(|(_, s)| {
            let id = s.rsplit(':').next().unwrap_or_default();
            of.iter().filter(|&&o| o == id).count()
        })
        .max()?;
    (most >= majority).then_some(prepared)
}

/// 128 bits that name a read's states: the id of a creation from them.
/// Equal views give equal ids (creators that read the same states help
/// each other); different views, different ids.
fn view_id(states: &[NodeState]) -> String {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let half = |salt: u8| {
        // DefaultHasher::new() has fixed keys: the same in every process.
        let mut h = DefaultHasher::new();
        salt.hash(&mut h);
        for state in states {
            state.stored().hash(&mut h);
        }
        h.finish()
    };
    format!("{:016x}{:016x}", half(1), half(2))
}

/// The error for answers that allow nothing: too few holders, and why.
fn unavailable(
    key: &str,
    recovery: &str,
    n: usize,
    m: usize,
    nobody_holds: bool,
    lacking: &[&str],
    problems: &[String],
) -> Error {
    let mut why = problems.to_vec();
    if nobody_holds {
        why.push(format!(
            "no node that answered holds it, and creating a sequence needs an answer from \
             every node ({n})"
        ));
    } else if !lacking.is_empty() {
        why.push(format!(
            "{} {} not hold the counter (restarted empty, or never had it) and cannot vote \
             until it is set again, which happens by itself {} after a majority of the nodes \
             holding it answer; only if a majority lost it at once: {recovery}, VALUE above \
             every number handed out",
            lacking.join(", "),
            if lacking.len() == 1 { "does" } else { "do" },
            crate::base::duration::shown(crate::timing::sequence::QUARANTINE),
        ));
    }
    Error::Unavailable(format!(
        "cannot hear from a majority ({m} of {n}) of the Redis masters holding the sequence \
         {key}; unavailable rather than risk a number twice: {}",
        why.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lacks(s: &str) -> NodeState {
        NodeState::Lacks(s.into())
    }

    #[test]
    fn a_new_sequence_is_created_under_the_id_of_its_view() {
        let states = [lacks("unborn:0a"), lacks("unborn:0b"), lacks("unborn:0a")];
        let id = creation(&states).unwrap();
        assert_eq!(id.len(), 32);
        assert_eq!(
            creation(&states.clone()),
            Some(id.clone()),
            "same view, same id"
        );
        let other = [lacks("unborn:0a"), lacks("unborn:0c"), lacks("unborn:0a")];
        assert_ne!(creation(&other), Some(id));
    }

    #[test]
    fn a_creation_prepared_everywhere_is_rolled_back_not_finished() {
        let all = [
            lacks("creating:1000:0c"),
            lacks("creating:1001:0c"),
            lacks("creating:1002:0c"),
        ];
        assert_eq!(creation(&all), None);
        assert_eq!(stopped(&all, 2).map(|p| p.len()), Some(3));
    }

    #[test]
    fn a_creation_prepared_on_a_majority_is_rolled_back_and_a_lone_one_is_not() {
        let stuck = [
            lacks("unborn:ff"),
            lacks("creating:1000:0c"),
            lacks("creating:1000:0c"),
        ];
        assert_eq!(
            stopped(&stuck, 2),
            Some(vec![
                (1, "creating:1000:0c".into()),
                (2, "creating:1000:0c".into())
            ])
        );
        // Half rolled back: the tagged mark counts for its creation.
        let half = [
            lacks("unborn:ff"),
            lacks("unborn:aa:0c"),
            lacks("creating:1000:0c"),
        ];
        assert_eq!(
            stopped(&half, 2),
            Some(vec![(2, "creating:1000:0c".into())])
        );
        let lone = [
            lacks("creating:1000:0c"),
            lacks("unborn:aa"),
            lacks("unborn:bb"),
        ];
        assert_eq!(stopped(&lone, 2), None);
        let beside_a_holder = [
            NodeState::Counter(0),
            lacks("creating:1000:0c"),
            lacks("creating:1000:0c"),
        ];
        assert_eq!(stopped(&beside_a_holder, 2), None);
        // Marks tagged by a rollback create like any mark.
        let marks = [
            lacks("unborn:ff"),
            lacks("unborn:aa:0c"),
            lacks("unborn:bb:0c"),
        ];
        assert!(creation(&marks).is_some());
    }

    #[test]
    fn a_prepared_node_beside_a_mark_or_a_holder_is_never_finished_nor_adopted() {
        for states in [
            [
                lacks("unborn:ff"),
                lacks("creating:0c"),
                lacks("creating:0c"),
            ],
            [
                NodeState::Counter(0),
                lacks("creating:0c"),
                lacks("creating:0c"),
            ],
            [
                NodeState::Counter(1),
                lacks("creating:0c"),
                lacks("creating:0c"),
            ],
        ] {
            assert_eq!(creation(&states), None, "{states:?}");
        }
    }

    #[test]
    fn holders_beside_a_mark_or_mixed_creations_are_never_created() {
        for states in [
            [
                NodeState::Counter(0),
                lacks("unborn:0a"),
                lacks("creating:0c"),
            ],
            [
                NodeState::Counter(5),
                lacks("unborn:0a"),
                lacks("unborn:0a"),
            ],
            [
                NodeState::Counter(0),
                lacks("creating:0b"),
                lacks("creating:0c"),
            ],
            [lacks(""), lacks("unborn:0a"), lacks("unborn:0a")],
        ] {
            assert_eq!(creation(&states), None, "{states:?}");
        }
    }
}
