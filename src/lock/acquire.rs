//! Taking the lock: the attempts, the wait between them, the acquire
//! round on every master and the reading of its replies (counted in
//! `tally.rs`).

use super::held::{Attempt, HeldLock};
use super::kind::{self, Kind};
use super::locker::Locker;
use super::script::{FenceMode, millis_arg};
use super::tally::{NodeAcquire, Tally, Unkept};
use super::token::Token;
use crate::claim::{Claimant, Refusal, RefusalKind};
use crate::error::{Error, Result};
use crate::store::Replies;
use crate::store::reply::Answer;
use std::time::Duration;

impl Claimant for Locker {
    type Claim = HeldLock;

    fn wanted(&self) -> String {
        format!("the {}", self.what())
    }

    /// Each attempt has a token of its own: the release that follows a
    /// failed attempt may reach a slow master late, and must never delete
    /// what a later attempt wrote there.
    async fn attempt(&mut self) -> Result<Attempt> {
        let token = Token::generate()?;
        self.attempt_token = Some(token.clone());
        self.try_acquire(&token).await
    }

    /// An interrupted attempt is dropped at once: its token says what to
    /// free, and freeing it is bounded.
    fn settle_within(&self) -> Duration {
        Duration::ZERO
    }

    async fn undo_interrupted(&mut self) {
        if let Some(token) = self.attempt_token.take() {
            let bound = self.round_timeout() * 2;
            let _ = tokio::time::timeout(bound, self.release_round(&token, None, &[])).await;
        }
    }

    fn pause(&self) -> (Duration, Duration) {
        self.pause
    }

    /// Subscribes to the wake channel on every master (claim/wake.rs).
    async fn arm_wakeups(&mut self) -> bool {
        let stores = self.quorum.nodes_mut().iter_mut().map(|n| &*n.store());
        self.wakeups.arm(stores).await
    }

    fn woken(&mut self) -> impl std::future::Future<Output = ()> {
        self.wakeups.woken()
    }

    fn disarm_wakeups(&mut self) {
        self.wakeups.disarm();
    }

    /// Checked again just before use: a pause of ours (SIGSTOP, swap)
    /// between the acquisition and now must not hand out a stale lock.
    fn check(&self, held: &HeldLock) -> Result<(), String> {
        if held.fresh_enough() {
            return Ok(());
        }
        Err(format!(
            "only {} of its validity left by the time it could be used",
            crate::base::duration::shown(held.remaining())
        ))
    }
}

impl Locker {
    /// Tries to take the lock until it is ours, `wait` runs out (`None`:
    /// forever; zero: one attempt), or `cancel` resolves: the wait loop of
    /// [`crate::claim::wait`], which undoes an interrupted attempt.
    pub async fn acquire(
        &mut self,
        wait: Option<Duration>,
        cancel: impl std::future::Future<Output = Error>,
    ) -> Result<HeldLock> {
        // Only a writer that will try again leaves a mark among shared
        // holders: one that gives up at once must not hold them back.
        self.waiting_mark = match (self.kind, wait) {
            (Kind::Lock, Some(w)) if w.is_zero() => None,
            (Kind::Lock, _) => Some(kind::writer_mark(&Token::generate()?)),
            _ => None,
        };
        let held = crate::claim::wait_for(self, wait, cancel).await;
        if let Some(mark) = self.waiting_mark.take()
            && held.is_err()
        {
            self.withdraw_mark(&mark).await;
        }
        held
    }

    /// Takes back the mark of a writer that stopped waiting, so that shared
    /// holders need not wait for it to expire. Best effort: it expires by
    /// itself.
    async fn withdraw_mark(&mut self, mark: &str) {
        let key = self.key.as_str();
        let wake = self.wakeups.channel();
        self.quorum
            .round(|node| async move {
                node.prepare().await?;
                let (invocation, unqueued) =
                    wake.with_queue(true, |queue| kind::withdraw_mark(key, mark, wake, queue));
                node.script_or::<redis::Value>(&invocation, || unqueued.take())
                    .await
            })
            .all()
            .await;
    }

    /// One attempt, with `token`: the Redlock round (and, with several
    /// masters, a fencing round if the vote in it did not settle). Anything
    /// taken is released again unless the attempt succeeds. `Err` only for
    /// faults that retrying cannot cure (a key of another type on a majority,
    /// a node that does not fsync, a broken fencing counter, a refused
    /// password).
    pub async fn try_acquire(&mut self, token: &Token) -> Result<Attempt> {
        let n = self.quorum.len();
        let mode = self.kind.fence_mode(n, || proposal(self.fencing.guess()));
        let mut tally = Tally::start(self.ttl, n);
        let replies = self.acquire_round(token, mode).await;
        tally.count(&self.quorum.labels(), replies, mode, &self.key);
        if let Some(counter) = tally.seen {
            self.fencing.observe(counter);
        }
        if matches!(mode, FenceMode::Propose(_)) && tally.without_counter > 0 {
            self.heal_pending |= self.fencing.take_heal_turn();
        }
        match self.keep(&mut tally, mode).await {
            Ok(fencing_token) => Ok(Attempt::Acquired(Box::new(HeldLock {
                locker: self.clone(),
                token: token.clone(),
                fencing_token,
                deadline: tally.deadline(),
                taken_on: tally.taken,
            }))),
            // The one place a failed attempt is undone.
            Err(unkept) => {
                self.undo_failed(token, mode, tally.replaced()).await;
                self.heal_if_pending().await;
                unkept.into_attempt()
            }
        }
    }

    /// Whether the lock the round took can be kept: a majority, then its
    /// fencing token, then enough validity left. Gives nothing back.
    async fn keep(&mut self, tally: &mut Tally, mode: FenceMode) -> Result<u64, Unkept> {
        tally.verdict(self)?;
        for (node, w) in &tally.wrong {
            log::warn!(node = node.as_str(); "{}: {w}; the other masters make a majority", self.what());
        }
        let fencing_token = match tally.fence(mode, self.quorum.majority()) {
            Some(f) => f,
            None => self
                .fencing
                .next_at_least(&mut self.quorum, tally.fence_deadline(), proposal(None))
                .await
                .map_err(|e| {
                    if e.is_fatal() {
                        return Unkept::Fatal(e);
                    }
                    Unkept::Refused(Refusal {
                        kind: RefusalKind::Unreachable,
                        message: format!(
                            "took the {} but could not get its fencing token in time: {e}",
                            self.what()
                        ),
                    })
                })?,
        };
        tally.too_slow(&self.what(), self.quorum.len())?;
        Ok(fencing_token)
    }

    async fn acquire_round(&mut self, token: &Token, mode: FenceMode) -> Replies<NodeAcquire> {
        let n = self.quorum.len();
        let m = self.quorum.majority();
        let (key, fence_key, kind) = (self.key.as_str(), self.fencing.key(), self.kind);
        let ttl_ms = millis_arg(self.ttl);
        let mark_ms = millis_arg(kind::writer_mark_ttl(self.quorum.round_timeout()));
        let wakeups = &self.wakeups;
        let wake = wakeups.channel();
        let mark = self.waiting_mark.as_deref().map(|mark| (mark, mark_ms));
        let round = self.quorum.round(|node| async move {
            node.prepare().await?;
            // Refused by a user's ACL without the queue: the same attempt
            // without its place (claim/wake.rs).
            let (invocation, unqueued) = wake.with_queue(wakeups.queues(), |queue| {
                let queued = queue.and_then(|queue| wakeups.queued(queue));
                let waiting = kind::Waiting { mark, queued };
                kind.acquire(key, fence_key, token, ttl_ms, mode, waiting)
            });
            let reply: redis::Value = node.script_or(&invocation, || unqueued.take()).await?;
            let acquired = parse_acquire(node.answer(reply)?)?;
            if matches!(acquired, NodeAcquire::Taken { .. }) {
                node.confirm(key).await?;
            }
            Ok(acquired)
        });
        round
            .until(|replies| {
                let (mut good, mut taken, mut refused, mut unvoted) = (0, 0, 0, 0);
                for reply in replies.iter().flatten() {
                    match reply {
                        Ok(NodeAcquire::Taken { voted, .. }) => {
                            taken += 1;
                            if *voted {
                                good += 1;
                            } else {
                                unvoted += 1;
                            }
                        }
                        _ => refused += 1,
                    }
                }
                good >= m || refused > n - m || (taken >= m && refused + unvoted > n - m)
            })
            .await
    }
}

/// The fencing token to vote for with several masters: one more than the
/// highest counter this process has seen, and at least the wall clock in
/// microseconds since the epoch. The clock is what lets a process that has
/// seen nothing yet (every `yaraus lock` is one) settle its token in the
/// acquire round: the previous holder voted for its own clock, which, give or
/// take clock skew, is behind ours. It is only a guess: safety rests on the
/// set-if-less-than vote, and a guess that loses (a clock behind, or a
/// counter raised some other way) costs one more round, never a wrong token.
fn proposal(seen: Option<u64>) -> u64 {
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
    seen.unwrap_or(1).max(clock)
}

fn parse_acquire(answer: Answer) -> Result<NodeAcquire> {
    match answer.code()? {
        1 => Ok(NodeAcquire::Taken {
            voted: answer.get::<i64>(1)? == 1,
            counter: answer.counter(2)?,
            before: if answer.len() > 3 {
                Some(answer.counter(3)?)
            } else {
                None
            },
        }),
        0 => Ok(NodeAcquire::Held {
            holder: answer.get(1)?,
            ttl_ms: answer.get(2)?,
            counter: answer.counter(3)?,
            holders: answer.optional(4)?,
        }),
        2 => Ok(NodeAcquire::WrongType(answer.get(1)?)),
        _ => Err(answer.unknown()),
    }
}
