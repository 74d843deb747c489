//! Giving the lock back: the release round on every master, and what its
//! replies mean for the lock (the quorum arithmetic); and undoing a failed
//! attempt, which deletes again the
//! [`Leftovers`](super::leftovers::Leftovers) of earlier ones.

use super::kind::Kind;
use super::locker::Locker;
use super::script::FenceMode;
use super::token::Token;
use crate::claim::wake::Waking;
use crate::error::Result;
use crate::store::Node;

/// What a release did.
#[derive(Clone, Debug)]
pub struct Released {
    /// Nodes where our token was live and is now deleted.
    pub freed: usize,
    /// Nodes that answered.
    pub answered: usize,
    pub masters: usize,
    /// Why the others did not answer.
    pub problems: Vec<String>,
}

/// What a release means for the lock, by the quorum arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseVerdict {
    /// Freed on a majority: the lock is free.
    Freed,
    /// Freed on fewer than a majority, but the masters that did not answer
    /// could make one up: nobody can tell whether it is still held.
    Unknown { silent: usize },
    /// Freed on fewer than a majority even counting the silent masters: the
    /// token did not hold the lock (any more).
    NotHeld,
}

impl Released {
    /// The verdict for a lock whose majority is `majority`.
    pub fn verdict(&self, majority: usize) -> ReleaseVerdict {
        let silent = self.masters - self.answered;
        if self.freed >= majority {
            ReleaseVerdict::Freed
        } else if self.freed + silent >= majority {
            ReleaseVerdict::Unknown { silent }
        } else {
            ReleaseVerdict::NotHeld
        }
    }
}

impl Locker {
    /// Deletes the lock on every master where it holds `token` (never
    /// anyone else's key); then the fencing sequence's heal pass, if a
    /// master was found without its counter.
    pub async fn release(&mut self, token: &Token) -> Released {
        let replies = self.release_round(token, None, &[]).await;
        self.heal_if_pending().await;
        let mut released = Released {
            freed: 0,
            answered: 0,
            masters: self.quorum.len(),
            problems: Vec::new(),
        };
        for reply in replies {
            match reply {
                Ok(freed) => {
                    released.answered += 1;
                    released.freed += usize::from(freed);
                }
                Err(e) => released.problems.push(e.to_string()),
            }
        }
        released
    }

    /// The fencing sequence's heal pass (seq/heal.rs), if a round found a
    /// master without its counter. A release or a failed attempt runs it;
    /// so does a caller that keeps the lock and exits (`yaraus lock
    /// --acquire`).
    pub async fn heal_if_pending(&mut self) {
        if std::mem::take(&mut self.heal_pending) {
            self.fencing.heal(&mut self.quorum).await;
        }
    }

    /// Undoes a failed attempt: releases the lock wherever it is ours,
    /// withdraws our fencing vote wherever it stood and nothing has moved
    /// the counter since (`replaced`: per node, the counter the vote
    /// replaced), and releases the
    /// [`Leftovers`](super::leftovers::Leftovers) of earlier failed attempts,
    /// wherever they still are.
    pub(super) async fn undo_failed(
        &mut self,
        token: &Token,
        mode: FenceMode,
        replaced: &[Option<u64>],
    ) {
        let votes = match mode {
            FenceMode::Propose(ours) => Some((ours, replaced)),
            FenceMode::Increment => None,
        };
        let leftovers = self.leftovers.live();
        let replies = self.release_round(token, votes, &leftovers).await;
        // Written somewhere, or not known: it may be where this round did
        // not reach (a replica promoted since).
        if replies.iter().any(|r| !matches!(r, Ok(false))) {
            self.leftovers.keep(token, self.ttl);
        }
    }

    /// Frees the lock wherever `token` holds it; with `votes` (our proposal,
    /// and per node the counter it replaced), also withdraws the vote where
    /// it stood (undo.lua); then frees it wherever one of `leftovers`
    /// holds it. Replies: per node, whether it freed the lock for `token`.
    pub(super) async fn release_round(
        &mut self,
        token: &Token,
        votes: Option<(u64, &[Option<u64>])>,
        leftovers: &[Token],
    ) -> Vec<Result<bool>> {
        let (key, fence_key, kind) = (self.key.as_str(), self.fencing.key(), self.kind);
        let wake = self.wakeups.channel();
        let waker = self.wakeups.waker_arg();
        // Per node, the vote to withdraw there: ours, and what it replaced.
        let to_withdraw: Vec<Option<(u64, u64)>> = (0..self.quorum.len())
            .map(|i| {
                let (ours, replaced) = votes?;
                Some((ours, replaced.get(i).copied().flatten()?))
            })
            .collect();
        let round = self
            .quorum
            .round_each(to_withdraw, |node, vote| async move {
                // Refused by a user's ACL without the queue: the same
                // release without it (claim/wake.rs).
                let release = |token, vote| {
                    wake.with_queue(true, |queue| {
                        let waking = Waking {
                            channel: wake,
                            queue,
                            waker,
                        };
                        kind.release(key, fence_key, token, vote, waking)
                    })
                };
                let (invocation, unqueued) = release(token, vote);
                let reply: redis::Value = node.script_or(&invocation, || unqueued.take()).await?;
                // What they free does not change what this round says.
                for leftover in leftovers {
                    let (invocation, unqueued) = release(leftover, None);
                    if node
                        .script_or::<redis::Value>(&invocation, || unqueued.take())
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
                freed_and_lacking(node, reply)
            });
        // Every node gets its full request timeout, where a round elsewhere
        // settles on a majority plus a grace period. A straggler dropped
        // then may never be sent its release at all (redis-rs skips a
        // request whose caller is gone), and the key would sit there until
        // its ttl; waiting costs only this process's exit, not the next
        // holder, who needs just the majority freed.
        let replies = round.all().await;
        // Every master answers a release (or is given its full timeout), so
        // a master restarted empty is seen here, where an acquire round
        // that settled on a majority may not have heard it.
        let lacking = replies.iter().any(|r| matches!(r, Ok((_, true))));
        if lacking && self.kind == Kind::Lock && self.quorum.len() > 1 {
            self.heal_pending |= self.fencing.take_heal_turn();
        }
        replies
            .into_iter()
            .map(|r| r.map(|(freed, _)| freed))
            .collect()
    }
}

/// A release script's reply: whether it freed the lock, and whether the
/// fencing counter was missing there (a semaphore's script says only the
/// first).
fn freed_and_lacking(node: &Node, reply: redis::Value) -> Result<(bool, bool)> {
    match reply {
        redis::Value::Int(freed) => Ok((freed == 1, false)),
        other => {
            let answer = node.answer(other)?;
            Ok((answer.code()? == 1, answer.get::<i64>(1)? == 1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_verdicts_follow_the_quorum_arithmetic() {
        let r = |freed, answered| Released {
            freed,
            answered,
            masters: 3,
            problems: Vec::new(),
        };
        assert_eq!(r(2, 3).verdict(2), ReleaseVerdict::Freed);
        assert_eq!(r(1, 2).verdict(2), ReleaseVerdict::Unknown { silent: 1 });
        assert_eq!(r(0, 1).verdict(2), ReleaseVerdict::Unknown { silent: 2 });
        assert_eq!(r(1, 3).verdict(2), ReleaseVerdict::NotHeld);
        assert_eq!(r(0, 3).verdict(2), ReleaseVerdict::NotHeld);
    }
}
