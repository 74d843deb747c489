//! Taking the lock: the attempts, the wait between them, the acquire
//! round on every master and the reading of its replies.

use super::*;
use crate::base::setting::Setting;

/// One node's reply to the acquire script.
#[derive(Debug)]
enum NodeAcquire {
    Taken {
        voted: bool,
        counter: u64,
        /// For an accepted proposal: the counter it replaced.
        before: Option<u64>,
    },
    Held {
        holder: Vec<u8>,
        ttl_ms: i64,
        counter: u64,
        holders: Option<i64>,
    },
    WrongType(String),
}

impl Claimant for Locker {
    type Held = HeldLock;

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

    async fn abandon(&mut self) {
        if let Some(token) = self.attempt_token.take() {
            let _ =
                tokio::time::timeout(self.round_timeout() * 2, self.release_round(&token)).await;
        }
    }

    fn pause(&self) -> (Duration, Duration) {
        RETRY_PAUSE
    }

    /// Checked again just before use: a pause of ours (SIGSTOP, swap)
    /// between the acquisition and now must not hand out a stale lock.
    fn check(&self, held: &HeldLock) -> Result<(), String> {
        if held.fresh_enough() {
            return Ok(());
        }
        Err(format!(
            "only {} of its validity left by the time it could be used",
            humantime::format_duration(millis(held.remaining()))
        ))
    }
}

impl Locker {
    /// Tries to take the lock until it is ours, `wait` runs out (`None`:
    /// forever; zero: one attempt), or `cancel` resolves: the wait loop of
    /// [`crate::claim::wait`], which gives back anything an interrupted
    /// attempt took.
    pub async fn acquire(
        &mut self,
        wait: Option<Duration>,
        cancel: impl std::future::Future<Output = Error>,
    ) -> Result<HeldLock> {
        crate::claim::wait_for(self, wait, cancel).await
    }

    /// One attempt, with `token`: the Redlock round (and, with several
    /// masters, a fencing round if the vote in it did not settle). Anything
    /// taken is released again unless the attempt succeeds. `Err` only for
    /// faults that retrying cannot cure (a key of another type on a majority,
    /// a node that does not fsync, a broken fencing counter, a refused
    /// password).
    pub async fn try_acquire(&mut self, token: &Token) -> Result<Attempt> {
        let n = self.quorum.len();
        let m = self.quorum.majority();
        let mode = self.kind.fence_mode(n, || proposal(self.fencing.guess()));
        let start = Instant::now();
        let boot_start = BootInstant::now();
        let replies = self.acquire_round(token, mode).await;
        let validity = self.ttl.saturating_sub(drift(self.ttl));
        let validity_end = start + validity;
        let labels = self.quorum.labels();

        let mut taken = 0;
        let mut voted = 0;
        let mut fence_from_increment = None;
        let mut busy: Vec<Busy> = Vec::new();
        let mut wrong: Vec<String> = Vec::new();
        let mut failed: Vec<String> = Vec::new();
        let mut fatal = None;
        // Where our proposal stood, the counter it replaced: a failed attempt
        // puts it back (see withdraw.lua).
        let mut replaced: Vec<Option<u64>> = vec![None; n];
        for (i, (label, reply)) in labels.iter().zip(replies).enumerate() {
            match reply {
                // Not waited for: the round was settled without it.
                None => {}
                Some(Ok(NodeAcquire::Taken {
                    voted: v,
                    counter,
                    before,
                })) => {
                    taken += 1;
                    if matches!(mode, FenceMode::Propose(_)) && v {
                        replaced[i] = before;
                    }
                    voted += usize::from(v);
                    self.fencing.observe(counter);
                    if matches!(mode, FenceMode::Increment) {
                        fence_from_increment = Some(counter);
                    }
                }
                Some(Ok(NodeAcquire::Held {
                    holder,
                    ttl_ms,
                    counter,
                    holders,
                })) => {
                    self.fencing.observe(counter);
                    busy.push(Busy {
                        node: label.clone(),
                        holder,
                        ttl_ms,
                        holders,
                    });
                }
                Some(Ok(NodeAcquire::WrongType(kind))) => {
                    wrong.push(format!("{label} holds a {kind} at {}", self.key))
                }
                Some(Err(e)) if e.is_fatal() => fatal = Some(e),
                Some(Err(e)) => failed.push(e.to_string()),
            }
        }
        if let Some(e) = fatal {
            self.give_back(token, mode, &replaced).await;
            return Err(e);
        }
        if wrong.len() > n - m {
            self.give_back(token, mode, &replaced).await;
            let expected = self.kind.expected();
            return Err(Error::State(format!(
                "cannot take the {}: {}, where {expected} was expected; another program uses \
                 that key (pick another name, or {}), or the holders disagree on {}",
                self.what(),
                wrong.join(", "),
                Setting::Prefix,
                Setting::Limit
            )));
        }
        if taken < m {
            self.give_back(token, mode, &replaced).await;
            return Ok(Attempt::Refused(self.refusal(n, m, &busy, &failed, &wrong)));
        }
        for w in &wrong {
            crate::warn!("{}: {w}; the other masters make a majority", self.what());
        }

        // The lock is ours; now its fencing token.
        let fence = match mode {
            FenceMode::Increment => fence_from_increment,
            FenceMode::Propose(guess) if voted >= m => Some(guess),
            _ => None,
        };
        let fencing_token = match fence {
            Some(f) => f,
            None => {
                let fence_deadline = validity_end.checked_sub(self.ttl / 2).unwrap_or(start);
                match self
                    .fencing
                    .next_at_least(
                        &mut self.quorum,
                        fence_deadline.max(Instant::now()),
                        proposal(None),
                    )
                    .await
                {
                    Ok(f) => f,
                    Err(e) if e.is_fatal() => {
                        self.give_back(token, mode, &replaced).await;
                        return Err(e);
                    }
                    Err(e) => {
                        self.give_back(token, mode, &replaced).await;
                        return Ok(Attempt::Refused(Refusal {
                            kind: RefusalKind::Unreachable,
                            message: format!(
                                "took the {} but could not get its fencing token in time: {e}",
                                self.what()
                            ),
                        }));
                    }
                }
            }
        };
        let now = Instant::now();
        if validity_end.saturating_duration_since(now) < self.ttl / 2 {
            self.give_back(token, mode, &replaced).await;
            return Ok(Attempt::Refused(Refusal {
                kind: RefusalKind::TooSlow,
                message: format!(
                    "took the {} on {taken} of {n} masters, but that took {} of its {} ttl, \
                     leaving too little to be safe",
                    self.what(),
                    humantime::format_duration(millis(now - start)),
                    humantime::format_duration(self.ttl)
                ),
            }));
        }
        Ok(Attempt::Acquired(Box::new(HeldLock {
            locker: self.clone(),
            token: token.clone(),
            fencing_token,
            deadline: boot_start + validity,
            taken_on: taken,
        })))
    }

    /// Sorts a failed attempt into busy / unreachable, with a message that
    /// says who holds the lock or which masters could not be reached.
    fn refusal(
        &self,
        n: usize,
        m: usize,
        busy: &[Busy],
        failed: &[String],
        wrong: &[String],
    ) -> Refusal {
        let held_by = busy.first().map(|b| self.kind.held_by(&self.what(), b));
        if busy.len() > n - m || (!busy.is_empty() && failed.len() <= n - m) {
            let mut message = held_by.unwrap_or_default();
            if n > 1 {
                message = format!(
                    "{message}; busy on {} of {n} masters{}{}",
                    busy.len(),
                    if failed.is_empty() {
                        String::new()
                    } else {
                        format!(", {} unreachable", failed.len())
                    },
                    if busy.len() <= n - m {
                        "; contenders split the votes"
                    } else {
                        ""
                    }
                );
            }
            return Refusal {
                kind: RefusalKind::Busy,
                message,
            };
        }
        let mut why: Vec<String> = failed.to_vec();
        why.extend(wrong.iter().cloned());
        if !busy.is_empty() {
            why.push(format!(
                "{} held it elsewhere",
                busy.iter()
                    .map(|b| b.node.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Refusal {
            kind: RefusalKind::Unreachable,
            message: if n == 1 {
                why.join("; ")
            } else {
                format!(
                    "cannot take the {}: {} of the {n} masters failed, and a majority ({m}) is needed: {}",
                    self.what(),
                    failed.len(),
                    why.join("; ")
                )
            },
        }
    }

    async fn acquire_round(&mut self, token: &Token, mode: FenceMode) -> Replies<NodeAcquire> {
        let n = self.quorum.len();
        let m = self.quorum.majority();
        let labels = self.quorum.labels();
        let limit = self.quorum.round_timeout();
        let (key, fence_key, kind) = (self.key.as_str(), self.fencing.key(), self.kind);
        let ttl_ms = millis_arg(self.ttl);
        let futures: Vec<_> = self
            .quorum
            .nodes_mut()
            .iter_mut()
            .map(|node| async move {
                node.prepare().await?;
                let invocation = kind.acquire(key, fence_key, token, ttl_ms, mode);
                let reply: redis::Value = node.script(&invocation).await?;
                let acquired = parse_acquire(node.label(), reply)?;
                if matches!(acquired, NodeAcquire::Taken { .. }) {
                    node.confirm(key).await?;
                }
                Ok(acquired)
            })
            .collect();
        gather(futures, &labels, limit, |replies| {
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

fn parse_acquire(label: &str, reply: redis::Value) -> Result<NodeAcquire> {
    let items = reply::items(label, reply)?;
    let code: i64 = reply::field(label, &items, 0)?;
    match code {
        1 => Ok(NodeAcquire::Taken {
            voted: reply::field::<i64>(label, &items, 1)? == 1,
            counter: reply::counter(label, &reply::field::<String>(label, &items, 2)?)?,
            before: if items.len() > 3 {
                Some(reply::counter(
                    label,
                    &reply::field::<String>(label, &items, 3)?,
                )?)
            } else {
                None
            },
        }),
        0 => Ok(NodeAcquire::Held {
            holder: reply::field(label, &items, 1)?,
            ttl_ms: reply::field(label, &items, 2)?,
            counter: reply::counter(label, &reply::field::<String>(label, &items, 3)?)?,
            holders: if items.len() > 4 {
                Some(reply::field(label, &items, 4)?)
            } else {
                None
            },
        }),
        2 => Ok(NodeAcquire::WrongType(reply::field(label, &items, 1)?)),
        _ => Err(reply::unknown_code(label, code)),
    }
}
