//! One named sequence ([`MajoritySequence`]): its rounds of proposals to
//! every node, the floor it learns from their replies, and when it reads,
//! creates or heals (the design: the module docs of `seq`, and
//! docs/seq.md).

use super::create;
use super::heal;
use super::script::Propose;
use super::view::{Verdict, View};
use crate::base::BootInstant;
use crate::base::random::{random_below, random_hex};
use crate::error::{Error, Result};
use crate::store::{Quorum, Replies};
use crate::timing::sequence::{FIRST_ROUND_PAUSE, HEAL_EVERY, MAX_ROUND_PAUSE, ROUND_LIFETIME};
use std::ops::RangeInclusive;
use tokio::time::Instant;

/// Random bytes in a read's mark (`unborn:<hex>`): unique across readers.
const MARK_BYTES: usize = 16;

/// One named sequence. Holds what this process has learned about the
/// counters (the floor), not the nodes: pass the [`Quorum`] to each call, so
/// that a lock and its fencing sequence share connections.
#[derive(Clone, Debug)]
pub struct MajoritySequence {
    key: String,
    /// How an operator sets the counter on a node that lacks it, for errors.
    recovery: String,
    floor: Option<u64>,
    /// No heal pass before this instant ([`HEAL_EVERY`]).
    heal_after: Option<BootInstant>,
}

/// A node's answer to a proposal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vote {
    /// The node stored the proposed value.
    Accepted(u64),
    /// The node's counter is already at or above it: what it holds.
    Refused(u64),
    /// The node does not have the counter (never had it, or lost it): it
    /// does not vote.
    Missing,
}

impl MajoritySequence {
    /// The sequence whose counter lives at `key` on every node.
    pub fn new(key: impl Into<String>) -> MajoritySequence {
        let key = key.into();
        MajoritySequence {
            recovery: format!("SET {key} VALUE on it"),
            key,
            floor: None,
            heal_after: None,
        }
    }

    /// As [`new`](Self::new), for the sequence `yaraus seq` calls `name`:
    /// errors then name `yaraus seq set-floor` as the way out.
    pub fn named(name: &str, key: impl Into<String>) -> MajoritySequence {
        MajoritySequence {
            recovery: format!("`yaraus seq set-floor {name} VALUE`"),
            ..MajoritySequence::new(key)
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
        self.next_at_least(quorum, deadline, 0).await
    }

    /// `count` (at least 1) consecutive new numbers, in one round: each
    /// greater than every number handed out before this call started. A
    /// node accepts the block only if its counter is below the block's
    /// first number, so blocks never overlap.
    pub async fn next_block(
        &mut self,
        quorum: &mut Quorum,
        deadline: Instant,
        count: u64,
    ) -> Result<RangeInclusive<u64>> {
        self.next_block_at_least(quorum, deadline, 0, count).await
    }

    /// As [`next`](Self::next), proposing at least `at_least` (the lock
    /// passes its clock, so that its tokens stay clock-like even when a
    /// counter starts from nothing).
    pub async fn next_at_least(
        &mut self,
        quorum: &mut Quorum,
        deadline: Instant,
        at_least: u64,
    ) -> Result<u64> {
        Ok(*self
            .next_block_at_least(quorum, deadline, at_least, 1)
            .await?
            .start())
    }

    async fn next_block_at_least(
        &mut self,
        quorum: &mut Quorum,
        deadline: Instant,
        at_least: u64,
        count: u64,
    ) -> Result<RangeInclusive<u64>> {
        let mut pause = FIRST_ROUND_PAUSE;
        loop {
            let problem = match self.round(quorum, at_least, count).await {
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
            pause = (pause * 2).min(MAX_ROUND_PAUSE);
        }
    }

    /// One round: read a majority if nothing is known yet, then propose the
    /// block of `count` from `floor + 1` (or `at_least`) to every node.
    /// `Ok(None)`: refused (contention, or a stale floor that the replies
    /// have now raised).
    async fn round(
        &mut self,
        quorum: &mut Quorum,
        at_least: u64,
        count: u64,
    ) -> Result<Option<RangeInclusive<u64>>> {
        if self.floor.is_none() {
            match self.read_floor(quorum).await? {
                Some(highest) => self.observe(highest),
                None => return Ok(None),
            }
        }
        let first = self.guess().map(|g| g.max(at_least));
        let last = first.and_then(|f| f.checked_add(count.max(1) - 1));
        let (Some(first), Some(last)) = (first, last) else {
            return Err(Error::State(format!(
                "the sequence {} cannot give {count} more: it would pass \
                 18446744073709551615, the largest 64-bit value",
                self.key
            )));
        };
        let start = BootInstant::now();
        let votes = self.propose(quorum, first, last).await;
        // A vote counted after the round's lifetime could be a node's last
        // vote before it lost its data and was set again (heal.rs).
        let alive = start.elapsed() <= ROUND_LIFETIME;
        let n = quorum.len();
        let m = quorum.majority();
        let labels = quorum.labels();
        let mut accepted = 0;
        let mut voters = 0;
        let mut missing = Vec::new();
        let mut problems = Vec::new();
        for (label, vote) in labels.iter().zip(votes) {
            match vote {
                None => {}
                Some(Ok(Vote::Accepted(v))) => {
                    voters += 1;
                    accepted += usize::from(alive);
                    self.observe(v);
                }
                Some(Ok(Vote::Refused(v))) => {
                    voters += 1;
                    self.observe(v);
                }
                Some(Ok(Vote::Missing)) => missing.push(label.as_str()),
                Some(Err(e)) if e.is_fatal() => return Err(e),
                Some(Err(e)) => problems.push(e.to_string()),
            }
        }
        if !missing.is_empty() {
            self.heal_if_due(quorum).await;
        }
        if accepted >= m {
            return Ok(Some(first..=last));
        }
        if voters < m {
            if !missing.is_empty() {
                // The floor came from elsewhere (a lock's acquire reports 0
                // for a missing counter): read again, which also creates a
                // sequence that no node has yet.
                self.floor = None;
            }
            return Err(Error::Unavailable(format!(
                "cannot hear from a majority ({m} of {n}) of the Redis masters holding the \
                 sequence {}; unavailable rather than risk a number twice: {}",
                self.key,
                problems
                    .into_iter()
                    .chain((!missing.is_empty()).then(|| format!(
                        "{} {} not hold the counter",
                        missing.join(", "),
                        if missing.len() == 1 { "does" } else { "do" }
                    )))
                    .collect::<Vec<_>>()
                    .join("; ")
            )));
        }
        Ok(None)
    }

    /// The floor from a read of every node: `Some(highest)` when a majority
    /// holds the counter; `None` after creating (or helping to create) a new
    /// sequence, or when a creation was contended: read again.
    ///
    /// The first read writes nothing, so that a key of the wrong type on
    /// one node stops the call before it touched the others, and the usual
    /// case (a majority holds it) leaves no trace. Only when it cannot give
    /// a floor does a second read leave marks where the key is missing,
    /// which a creation needs.
    async fn read_floor(&mut self, quorum: &mut Quorum) -> Result<Option<u64>> {
        let look = View::read(quorum, &self.key, "").await?;
        let lacking = !look.lacking().is_empty();
        match look.verdict(&self.key, &self.recovery, false) {
            Ok(Verdict::Floor(highest)) => {
                if lacking {
                    self.heal_if_due(quorum).await;
                }
                return Ok(Some(highest));
            }
            Err(e) if e.is_fatal() => return Err(e),
            _ => {}
        }
        let mark = random_hex::<MARK_BYTES>("a sequence mark")?;
        let read_at = BootInstant::now();
        let view = View::read(quorum, &self.key, &mark).await?;
        let states = view.states();
        match view.verdict(&self.key, &self.recovery, true)? {
            Verdict::Floor(highest) => Ok(Some(highest)),
            Verdict::Create(id) => {
                create::create(quorum, &self.key, &states, &id, read_at).await?;
                Ok(None)
            }
            Verdict::RollBack(prepared) => {
                let (done, left) = create::roll_back(quorum, &self.key, &prepared, read_at).await?;
                if done {
                    log::warn!(
                        "{}: a creation that stopped half-way was rolled back; the sequence is \
                         created afresh",
                        self.key
                    );
                    return Ok(None);
                }
                Err(Error::Unavailable(format!(
                    "the sequence {} is being created, or a creation stopped half-way on a \
                     majority of the nodes, which is rolled back by itself {} after it was \
                     prepared{}",
                    self.key,
                    crate::base::duration::shown(crate::timing::sequence::CREATION_QUARANTINE),
                    left.map_or(String::new(), |l| format!(
                        " ({} left)",
                        crate::base::duration::shown(l)
                    ))
                )))
            }
            Verdict::Absent => Err(Error::Unavailable(format!(
                "the sequence {} could not be created: a node's key vanished during the read",
                self.key
            ))),
        }
    }

    /// The highest counter held by a majority of the nodes, read-only: at
    /// least every number handed out before this call. `None` when every
    /// node answered and none holds it (no such sequence);
    /// [`Error::Unavailable`] when fewer than a majority of holders answer.
    pub async fn current(&self, quorum: &mut Quorum) -> Result<Option<u64>> {
        let view = View::read(quorum, &self.key, "").await?;
        match view.verdict(&self.key, &self.recovery, false)? {
            Verdict::Floor(highest) => Ok(Some(highest)),
            Verdict::Absent => Ok(None),
            Verdict::Create(_) | Verdict::RollBack(_) => {
                unreachable!("a read-only look never creates")
            }
        }
    }

    /// Marks the nodes found without the counter, and sets again those whose
    /// quarantine is over ([`heal`]), at most once every [`HEAL_EVERY`]; what
    /// it did is logged, and a failure is left for the next pass.
    pub async fn heal_if_due(&mut self, quorum: &mut Quorum) {
        if self.take_heal_turn() {
            self.heal(quorum).await;
        }
    }

    /// Whether a heal pass is due now; if so, the next one is due only
    /// [`HEAL_EVERY`] later.
    pub fn take_heal_turn(&mut self) -> bool {
        if self.heal_after.is_some_and(|at| !at.has_passed()) {
            return false;
        }
        self.heal_after = Some(BootInstant::now() + HEAL_EVERY);
        true
    }

    /// One heal pass ([`heal::heal`]), what it did logged. A pass that
    /// fails is left for the next one, quietly: a node out of reach, or not
    /// durable, or a key of another type, is the caller's own error to
    /// report, and a heal pass never adds a line to it.
    pub async fn heal(&self, quorum: &mut Quorum) {
        if let Ok(healed) = heal::heal(quorum, &self.key).await {
            heal::report(&self.key, &healed);
        }
    }

    /// Sends `proposed` to every node; stops when a majority accepted or can
    /// no longer accept. Each node's counter after the vote raises the floor
    /// only through [`observe`](Self::observe), by the caller.
    ///
    /// Private: its votes count only within [`ROUND_LIFETIME`]
    /// of the round's start, which [`MajoritySequence::next`] and the others
    /// enforce and a raw caller could forget.
    async fn propose(&self, quorum: &mut Quorum, first: u64, last: u64) -> Replies<Vote> {
        let n = quorum.len();
        let m = quorum.majority();
        let key = self.key.as_str();
        let settled = |replies: &[Option<Result<Vote>>]| {
            let yes = replies
                .iter()
                .filter(|r| matches!(r, Some(Ok(Vote::Accepted(_)))))
                .count();
            let no = replies
                .iter()
                .filter(|r| matches!(r, Some(Ok(Vote::Refused(_) | Vote::Missing)) | Some(Err(_))))
                .count();
            yes >= m || no > n - m
        };
        quorum
            .round(|node| async move {
                let answer = node.ask(&Propose { key, first, last }.invocation()).await?;
                match answer.code()? {
                    1 => Ok(Vote::Accepted(answer.counter(1)?)),
                    0 => Ok(Vote::Refused(answer.counter(1)?)),
                    2 => Ok(Vote::Missing),
                    _ => Err(answer.unknown()),
                }
            })
            .within(ROUND_LIFETIME)
            .until(settled)
            .await
    }
}

#[cfg(test)]
mod tests {
    //! The sequence's own bookkeeping, without a node.

    use super::MajoritySequence;

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
