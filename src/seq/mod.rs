//! The majority monotonic sequence: numbers that only grow, agreed on by a
//! majority of N independent Redis masters (antirez, "Is Redlock safe?" /
//! "Generating monotonically increasing IDs", after Paxos's first phase).
//!
//! Every node keeps a counter under the same key. A number is handed out
//! when a majority of the nodes accepted it with *set-if-less-than*: a node
//! stores the proposed value only when its counter is below it. That is the
//! whole safety argument, and it needs nothing else:
//!
//! * no number is handed out twice: two majorities share a node, and that node
//!   accepts a given value at most once;
//! * a number handed out after another one completed is larger: the earlier
//!   majority and the later one share a node whose counter already held the
//!   earlier value, and it accepted the later value only because it was above.
//!
//! Reading a majority first (antirez's step 1) only serves to *guess* a value
//! that will be accepted. So a round here proposes `floor + 1`, where `floor`
//! is the highest counter value seen so far: read from a majority on the
//! first call, and afterwards learned from the replies to earlier proposals
//! (a refusing node says what it holds). An uncontended call made after an
//! earlier one in the same process costs one round trip; a refused round
//! raises the floor and tries again after a random pause, until the caller's
//! deadline. Numbers may skip (a round accepted by a minority burns its value);
//! they never repeat or go back.
//!
//! Two things the algorithm assumes, enforced here:
//!
//! * a node must not forget an accepted value: each one is checked once for
//!   `appendonly yes` + `appendfsync always` (`CONFIG GET`), and refused
//!   otherwise, unless the [`Quorum`] was built without that requirement
//!   (`--no-fsync-check`);
//! * values are 64-bit: Lua's numbers are doubles that round above 2^53, so
//!   the scripts keep counters as decimal text and compare them digit by
//!   digit (`counter.lua`), and Rust parses them into `u64`.
//!
//! The scripts' counter logic is also used by the lock's acquire script (to
//! propose a fencing token in the same round trip as the `SET`), which is why
//! the prelude is exported to the rest of the crate as `COUNTER_LUA`.

use crate::claim::wait::random_below;
use crate::error::{Error, Result};
use crate::store::{Quorum, Replies, gather, reply};
use std::sync::LazyLock;
use std::time::Duration;
use tokio::time::Instant;

/// The counter helpers every script that touches a sequence counter starts with.
pub(crate) const COUNTER_LUA: &str = include_str!("counter.lua");

static PROPOSE: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(&[COUNTER_LUA, include_str!("propose.lua")].concat()));
static READ: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(&[COUNTER_LUA, include_str!("read.lua")].concat()));

/// Longest random pause between two refused rounds.
const MAX_BACKOFF: Duration = Duration::from_millis(200);

/// One named sequence. Holds what this process has learned about the
/// counters (the floor), not the nodes: pass the [`Quorum`] to each call, so
/// that a lock and its fencing sequence share connections.
#[derive(Clone, Debug)]
pub struct MajoritySequence {
    key: String,
    floor: Option<u64>,
}

/// A node's answer to a proposal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vote {
    /// The node stored the proposed value.
    pub accepted: bool,
    /// The node's counter after the vote.
    pub counter: u64,
}

impl MajoritySequence {
    /// The sequence whose counter lives at `key` on every node.
    pub fn new(key: impl Into<String>) -> MajoritySequence {
        MajoritySequence {
            key: key.into(),
            floor: None,
        }
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    /// The value the next round would propose, once something is known
    /// about the counters.
    pub fn guess(&self) -> Option<u64> {
        self.floor.and_then(|f| f.checked_add(1))
    }

    /// Records a counter value seen on some node (a reply to a proposal made
    /// elsewhere, e.g. by the lock's acquire script), raising the floor.
    pub fn observe(&mut self, counter: u64) {
        self.floor = Some(self.floor.map_or(counter, |f| f.max(counter)));
    }

    /// A new number, greater than every number this sequence handed out (to
    /// anyone) before this call started. Retries refused rounds until
    /// `deadline`; fails with [`Error::Unavailable`] when no majority could
    /// be reached in time, and with [`Error::State`] at once when a node is
    /// not durable or its counter key holds something else.
    pub async fn next(&mut self, quorum: &mut Quorum, deadline: Instant) -> Result<u64> {
        let mut pause = Duration::from_millis(2);
        loop {
            let problem = match self.round(quorum).await {
                Ok(Some(value)) => return Ok(value),
                Ok(None) => Error::Unavailable(format!(
                    "the sequence {} was contended: no value won a majority in time",
                    self.key
                )),
                Err(e) if e.is_fatal() => return Err(e),
                Err(e) => e,
            };
            let now = Instant::now();
            if now + pause >= deadline {
                return Err(problem);
            }
            tokio::time::sleep(random_below(pause)).await;
            pause = (pause * 2).min(MAX_BACKOFF);
        }
    }

    /// One round: read a majority if nothing is known yet, then propose
    /// `floor + 1` to every node. `Ok(None)`: refused (contention, or a stale
    /// floor that the replies have now raised).
    async fn round(&mut self, quorum: &mut Quorum) -> Result<Option<u64>> {
        if self.floor.is_none() {
            let highest = self.read_majority(quorum).await?;
            self.observe(highest);
        }
        let proposed = self.guess().ok_or_else(|| {
            Error::State(format!(
                "the sequence {} has reached 18446744073709551615, the largest 64-bit value",
                self.key
            ))
        })?;
        let votes = self.propose(quorum, proposed).await;
        let n = quorum.len();
        let m = quorum.majority();
        let mut accepted = 0;
        let mut answered = 0;
        let mut problems = Vec::new();
        for vote in votes.into_iter().flatten() {
            match vote {
                Ok(v) => {
                    answered += 1;
                    accepted += usize::from(v.accepted);
                    self.observe(v.counter);
                }
                Err(e) if e.is_fatal() => return Err(e),
                Err(e) => problems.push(e.to_string()),
            }
        }
        if accepted >= m {
            return Ok(Some(proposed));
        }
        if answered < m {
            return Err(Error::Unavailable(format!(
                "cannot reach a majority ({m} of {n}) of the Redis masters for the sequence {}: {}",
                self.key,
                problems.join("; ")
            )));
        }
        Ok(None)
    }

    /// Sends `proposed` to every node; stops when a majority accepted or can
    /// no longer accept. Each node's counter after the vote raises the floor
    /// only through [`observe`](Self::observe), by the caller.
    pub async fn propose(&self, quorum: &mut Quorum, proposed: u64) -> Replies<Vote> {
        let n = quorum.len();
        let m = quorum.majority();
        let labels = quorum.labels();
        let limit = quorum.round_timeout();
        let key = self.key.as_str();
        let value = proposed.to_string();
        let futures: Vec<_> = quorum
            .nodes_mut()
            .iter_mut()
            .map(|node| {
                let value = value.as_str();
                async move {
                    node.prepare().await?;
                    let mut invocation = PROPOSE.prepare_invoke();
                    invocation.key(key).arg(value);
                    let (accepted, counter): (i64, String) = node.script(&invocation).await?;
                    Ok(Vote {
                        accepted: accepted == 1,
                        counter: reply::counter(node.label(), &counter)?,
                    })
                }
            })
            .collect();
        gather(futures, &labels, limit, |replies| {
            let yes = replies
                .iter()
                .filter(|r| matches!(r, Some(Ok(v)) if v.accepted))
                .count();
            let no = replies
                .iter()
                .filter(|r| matches!(r, Some(Ok(v)) if !v.accepted) || matches!(r, Some(Err(_))))
                .count();
            yes >= m || no > n - m
        })
        .await
    }

    /// The highest counter among a majority of the nodes: no number handed
    /// out so far is above it.
    pub async fn read_majority(&self, quorum: &mut Quorum) -> Result<u64> {
        let n = quorum.len();
        let m = quorum.majority();
        let labels = quorum.labels();
        let limit = quorum.round_timeout();
        let key = self.key.as_str();
        let futures: Vec<_> = quorum
            .nodes_mut()
            .iter_mut()
            .map(|node| async move {
                node.prepare().await?;
                let mut invocation = READ.prepare_invoke();
                invocation.key(key);
                let counter: String = node.script(&invocation).await?;
                reply::counter(node.label(), &counter)
            })
            .collect();
        let replies = gather(futures, &labels, limit, |replies| {
            replies.iter().filter(|r| matches!(r, Some(Ok(_)))).count() >= m
        })
        .await;
        let mut highest = None::<u64>;
        let mut answered = 0;
        let mut problems = Vec::new();
        for reply in replies.into_iter().flatten() {
            match reply {
                Ok(v) => {
                    answered += 1;
                    highest = Some(highest.map_or(v, |h| h.max(v)));
                }
                Err(e) if e.is_fatal() => return Err(e),
                Err(e) => problems.push(e.to_string()),
            }
        }
        match highest {
            Some(h) if answered >= m => Ok(h),
            _ => Err(Error::Unavailable(format!(
                "cannot reach a majority ({m} of {n}) of the Redis masters for the sequence {}: {}",
                self.key,
                problems.join("; ")
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_only_rises() {
        let mut seq = MajoritySequence::new("k");
        assert_eq!(seq.guess(), None);
        seq.observe(7);
        seq.observe(3);
        assert_eq!(seq.guess(), Some(8));
        seq.observe(u64::MAX);
        assert_eq!(seq.guess(), None);
    }
}
