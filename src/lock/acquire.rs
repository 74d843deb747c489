//! Taking the lock: the attempts, the wait between them, the acquire
//! round on every master and the reading of its replies.

use super::*;

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

impl Locker {
    /// Tries to take the lock until it is ours, `wait` runs out (`None`:
    /// forever; zero: one attempt), or `cancel` resolves. On cancel, whatever
    /// an attempt in flight may have taken is released and `cancel`'s error
    /// is returned.
    ///
    /// Each attempt has a token of its own: the release that follows a
    /// failed attempt may reach a slow master late, and must never delete
    /// what a later attempt wrote there.
    pub async fn acquire(
        &mut self,
        wait: Option<Duration>,
        cancel: impl Future<Output = Error>,
    ) -> Result<HeldLock> {
        let give_up = wait.map(|w| Instant::now() + w);
        let mut cancel = std::pin::pin!(cancel);
        let mut report = WaitReport::default();
        loop {
            let token = Token::generate()?;
            let attempt = tokio::select! {
                biased;
                e = &mut cancel => Err(e),
                a = self.try_acquire(&token) => Ok(a),
            };
            let refusal = match attempt {
                Ok(Ok(Attempt::Acquired(held))) => return Ok(*held),
                Ok(Ok(Attempt::Refused(refusal))) => refusal,
                Ok(Err(fatal)) => return Err(fatal),
                Err(interrupted) => {
                    let _ =
                        tokio::time::timeout(self.round_timeout() * 2, self.release_round(&token))
                            .await;
                    return Err(interrupted);
                }
            };
            let now = Instant::now();
            let mut pause = random_between(RETRY_PAUSE.0, RETRY_PAUSE.1);
            if let Some(limit) = give_up {
                if now >= limit {
                    return Err(refusal.into_error(wait));
                }
                pause = pause.min(limit - now);
            }
            report.note(&self.what(), &refusal, wait);
            let interrupted = tokio::select! {
                biased;
                e = &mut cancel => Some(e),
                _ = tokio::time::sleep(pause) => None,
            };
            if let Some(e) = interrupted {
                return Err(e);
            }
        }
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
        let mode = match (self.kind, n) {
            (Kind::Semaphore { .. }, _) | (_, 1) => FenceMode::Increment,
            _ => FenceMode::Propose(proposal(self.fencing.guess())),
        };
        let start = Instant::now();
        let boot_start = BootInstant::now();
        let replies = self.acquire_round(token, mode).await;
        let validity = self.ttl.saturating_sub(drift(self.ttl));
        let validity_end = start + validity;
        let labels = self.quorum.labels();

        let mut taken = 0;
        let mut voted = 0;
        let mut fence_from_increment = None;
        let mut busy: Vec<(String, Vec<u8>, i64, Option<i64>)> = Vec::new();
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
                    busy.push((label.clone(), holder, ttl_ms, holders));
                }
                Some(Ok(NodeAcquire::WrongType(kind))) => {
                    wrong.push(format!("{label} holds a {kind} at {}", self.key))
                }
                Some(Err(e @ Error::State(_))) => fatal = Some(e),
                Some(Err(e)) if is_permanent(&e) => fatal = Some(e),
                Some(Err(e)) => failed.push(e.to_string()),
            }
        }
        if let Some(e) = fatal {
            self.give_back(token, mode, &replaced).await;
            return Err(e);
        }
        if wrong.len() > n - m {
            self.give_back(token, mode, &replaced).await;
            let expected = match self.kind {
                Kind::Lock => "a string (a lock's token)",
                Kind::Semaphore { .. } => "a sorted set (a semaphore)",
            };
            return Err(Error::State(format!(
                "cannot take the {}: {}, where {expected} was expected; another program uses \
                 that key (pick another name, or --prefix), or the holders disagree on --limit",
                self.what(),
                wrong.join(", ")
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
                    .next(&mut self.quorum, fence_deadline.max(Instant::now()))
                    .await
                {
                    Ok(f) => f,
                    Err(e @ Error::State(_)) => {
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
        busy: &[(String, Vec<u8>, i64, Option<i64>)],
        failed: &[String],
        wrong: &[String],
    ) -> Refusal {
        let expiry = |ttl_ms: i64| match ttl_ms {
            -1 => " and has no expiry: it will never be freed by itself (delete the key if its \
                   holder is gone)"
                .to_string(),
            ms if ms >= 0 => format!(
                ", expires in {}",
                humantime::format_duration(rounded(Duration::from_millis(ms as u64)))
            ),
            _ => String::new(),
        };
        let held_by = busy
            .first()
            .map(|(_, holder, ttl_ms, holders)| match self.kind {
                Kind::Semaphore { limit } => format!(
                    "every place of the {} is taken ({} holders; the first frees in {})",
                    self.what(),
                    holders.unwrap_or(limit as i64),
                    humantime::format_duration(rounded(Duration::from_millis(
                        (*ttl_ms).max(0) as u64
                    )))
                ),
                Kind::Lock => format!(
                    "{} is busy: held by {}{}",
                    self.what(),
                    describe_holder(holder),
                    expiry(*ttl_ms)
                ),
            });
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
                    .map(|(l, ..)| l.as_str())
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
                let script: &redis::Script = match kind {
                    Kind::Lock => &ACQUIRE,
                    Kind::Semaphore { .. } => &SEMAPHORE_ACQUIRE,
                };
                let mut invocation = script.prepare_invoke();
                invocation
                    .key(key)
                    .key(fence_key)
                    .arg(token.as_str())
                    .arg(ttl_ms);
                match (kind, mode) {
                    (Kind::Semaphore { limit }, _) => invocation.arg(limit),
                    (Kind::Lock, FenceMode::Increment) => invocation.arg("incr").arg(""),
                    (Kind::Lock, FenceMode::Propose(v)) => {
                        invocation.arg("propose").arg(v.to_string())
                    }
                };
                let reply: redis::Value = node.script(&invocation).await?;
                parse_acquire(node.label(), reply)
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

/// The log lines of a wait: the first refusal, then every change of reason
/// and every [`WAIT_REPORT_EVERY`].
#[derive(Default)]
struct WaitReport {
    last: Option<(RefusalKind, Instant)>,
}

impl WaitReport {
    fn note(&mut self, what: &str, refusal: &Refusal, wait: Option<Duration>) {
        let now = Instant::now();
        let due = match self.last {
            None => true,
            Some((kind, at)) => kind != refusal.kind || now - at >= WAIT_REPORT_EVERY,
        };
        if !due {
            return;
        }
        let first = self.last.is_none();
        self.last = Some((refusal.kind, now));
        let until = match wait {
            None => "as long as it takes".to_string(),
            Some(w) => format!("up to {}", humantime::format_duration(rounded(w))),
        };
        match refusal.kind {
            RefusalKind::Busy if first => {
                crate::info!("{}; waiting for the {what} ({until})", refusal.message)
            }
            RefusalKind::Busy => crate::info!("still waiting: {}", refusal.message),
            _ => crate::warn!("{}; retrying ({until})", refusal.message),
        }
    }
}

fn parse_acquire(label: &str, reply: redis::Value) -> Result<NodeAcquire> {
    let items = reply_items(label, reply)?;
    let code: i64 = field(label, &items, 0)?;
    match code {
        1 => Ok(NodeAcquire::Taken {
            voted: field::<i64>(label, &items, 1)? == 1,
            counter: parse_counter(label, &field::<String>(label, &items, 2)?)?,
            before: if items.len() > 3 {
                Some(parse_counter(label, &field::<String>(label, &items, 3)?)?)
            } else {
                None
            },
        }),
        0 => Ok(NodeAcquire::Held {
            holder: field(label, &items, 1)?,
            ttl_ms: field(label, &items, 2)?,
            counter: parse_counter(label, &field::<String>(label, &items, 3)?)?,
            holders: if items.len() > 4 {
                Some(field(label, &items, 4)?)
            } else {
                None
            },
        }),
        2 => Ok(NodeAcquire::WrongType(field(label, &items, 1)?)),
        _ => Err(unexpected(label, code)),
    }
}
