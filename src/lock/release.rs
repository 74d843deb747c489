//! Giving the lock back: the release round on every master, and what its
//! replies mean for the lock (the quorum arithmetic).

use super::*;

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
        let replies = self.release_round(token).await;
        self.heal_if_pending().await;
        let labels = self.quorum.labels();
        let mut released = Released {
            freed: 0,
            answered: 0,
            masters: labels.len(),
            problems: Vec::new(),
        };
        for (label, reply) in labels.iter().zip(replies) {
            match reply {
                Some(Ok(freed)) => {
                    released.answered += 1;
                    released.freed += usize::from(freed);
                }
                Some(Err(e)) => released.problems.push(e.to_string()),
                None => released
                    .problems
                    .push(format!("Redis at {label} had not answered")),
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

    /// Gives back a failed attempt: the lock wherever it is ours, and our
    /// fencing vote wherever it stood and nothing has moved the counter
    /// since (`replaced`: per node, the counter the vote replaced).
    pub(super) async fn give_back(
        &mut self,
        token: &Token,
        mode: FenceMode,
        replaced: &[Option<u64>],
    ) {
        let votes = match mode {
            FenceMode::Propose(ours) => Some((ours, replaced)),
            FenceMode::Increment => None,
        };
        self.free_round(token, votes).await;
    }

    /// Frees the lock wherever `token` holds it. Replies: per node, whether
    /// it freed the lock.
    pub(super) async fn release_round(&mut self, token: &Token) -> Replies<bool> {
        self.free_round(token, None).await
    }

    /// Frees the lock wherever `token` holds it; with `votes` (our proposal,
    /// and per node the counter it replaced), also withdraws the vote where
    /// it stood (withdraw.lua). Replies: per node, whether it freed the lock.
    async fn free_round(
        &mut self,
        token: &Token,
        votes: Option<(u64, &[Option<u64>])>,
    ) -> Replies<bool> {
        let labels = self.quorum.labels();
        let limit = self.quorum.round_timeout();
        let (key, fence_key, kind) = (self.key.as_str(), self.fencing.key(), self.kind);
        let futures: Vec<_> = self
            .quorum
            .nodes_mut()
            .iter_mut()
            .enumerate()
            .map(|(i, node)| async move {
                let withdraw = votes.and_then(|(ours, replaced)| {
                    replaced
                        .get(i)
                        .copied()
                        .flatten()
                        .map(|before| (ours, before))
                });
                let invocation = kind.release(key, fence_key, token, withdraw);
                let reply: redis::Value = node.script(&invocation).await?;
                freed_and_lacking(node.label(), reply)
            })
            .collect();
        // Every node gets its full request timeout, where a round elsewhere
        // settles on a majority plus a grace period. A straggler dropped
        // then may never be sent its release at all (redis-rs skips a
        // request whose caller is gone), and the key would sit there until
        // its ttl; waiting costs only this process's exit, not the next
        // holder, who needs just the majority freed.
        let replies = gather(futures, &labels, limit, |_| false).await;
        // Every master answers a release (or is given its full timeout), so
        // a master restarted empty is seen here, where an acquire round
        // that settled on a majority may not have heard it.
        let lacking = replies.iter().any(|r| matches!(r, Some(Ok((_, true)))));
        if lacking && self.kind == Kind::Lock && self.quorum.len() > 1 {
            self.heal_pending |= self.fencing.take_heal_turn();
        }
        replies
            .into_iter()
            .map(|r| r.map(|r| r.map(|(freed, _)| freed)))
            .collect()
    }
}

/// A release script's reply: whether it freed the lock, and whether the
/// fencing counter was missing there (a semaphore's script says only the
/// first).
fn freed_and_lacking(label: &str, reply: redis::Value) -> Result<(bool, bool)> {
    match reply {
        redis::Value::Int(freed) => Ok((freed == 1, false)),
        other => {
            let items = reply::items(label, other)?;
            let freed: i64 = reply::field(label, &items, 0)?;
            let lacks: i64 = reply::field(label, &items, 1)?;
            Ok((freed == 1, lacks == 1))
        }
    }
}
