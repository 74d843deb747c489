//! Extending the lock, and healing masters that lost it.

use super::locker::Locker;
use super::script::millis_arg;
use super::token::{Token, describe_holder};
use crate::claim::RenewError;
use crate::error::{Error, Result};
use crate::store::Replies;
use crate::store::reply::Answer;
use crate::timing::drift::validity;
use std::time::Duration;

/// One node's reply to the extend script.
#[derive(Debug)]
enum NodeExtend {
    Extended,
    SetAgain,
    Missing,
    Taken(Vec<u8>),
    WrongType(String),
}

/// The replies of one extend round, counted.
#[derive(Default)]
struct Extension {
    /// Masters where the lock was extended.
    ours: usize,
    /// Masters where our token is no longer there, each with why.
    gone: Vec<String>,
    /// Masters that had lost the key and were given our token again.
    set_again: Vec<String>,
    failed: Vec<String>,
}

impl Extension {
    fn count(labels: &[String], replies: Replies<NodeExtend>) -> Extension {
        let mut tally = Extension::default();
        for (label, reply) in labels.iter().zip(replies) {
            match reply {
                None => {}
                Some(Ok(NodeExtend::Extended)) => tally.ours += 1,
                Some(Ok(NodeExtend::SetAgain)) => {
                    tally.set_again.push(label.clone());
                    tally
                        .gone
                        .push(format!("{label}: our token is gone (deleted, or expired)"));
                }
                Some(Ok(NodeExtend::Missing)) => tally
                    .gone
                    .push(format!("{label}: our token is gone (deleted, or expired)")),
                Some(Ok(NodeExtend::Taken(holder))) => tally
                    .gone
                    .push(format!("{label}: now held by {}", describe_holder(&holder))),
                Some(Ok(NodeExtend::WrongType(t))) => {
                    tally.gone.push(format!("{label}: the key is now a {t}"))
                }
                Some(Err(e)) => tally.failed.push(e.to_string()),
            }
        }
        tally
    }

    /// Why the lock is lost (its token gone from a majority).
    fn lost(&self, key: &str, n: usize) -> String {
        if n == 1 {
            let detail = self
                .gone
                .iter()
                .map(|g| g.split_once(": ").map_or(g.as_str(), |(_, why)| why))
                .collect::<Vec<_>>();
            return format!(
                "the key {key} no longer holds our token: {}",
                detail.join("; ")
            );
        }
        format!(
            "our token is gone from {} of {n} masters: {}",
            self.gone.len(),
            self.gone.join("; ")
        )
    }

    /// Why the round settled nothing (too few answers either way).
    fn shortfall(self, n: usize, m: usize) -> Error {
        let mut why = self.gone;
        why.extend(self.failed);
        Error::Unavailable(format!(
            "extended on {} of {n} masters, {m} needed: {}",
            self.ours,
            why.join("; ")
        ))
    }
}

impl Locker {
    /// Extends the lock held with `token` to a full ttl on every master,
    /// setting the token again where a node lost the key. Returns the
    /// validity (ttl − drift) counted from before the requests were sent.
    pub async fn extend(&mut self, token: &Token) -> Result<Duration, RenewError> {
        let n = self.quorum.len();
        let m = self.quorum.majority();
        let replies = self.extend_round(token).await;
        let tally = Extension::count(&self.quorum.labels(), replies);
        if tally.ours >= m {
            if !tally.set_again.is_empty() {
                log::info!(
                    "{}: set our token again on {}, which had lost it",
                    self.what(),
                    tally.set_again.join(", ")
                );
            }
            return Ok(validity(self.ttl));
        }
        if tally.gone.len() >= m {
            if !tally.set_again.is_empty() {
                self.release_round(token, None, &[]).await;
            }
            return Err(RenewError::Lost(tally.lost(&self.key, n)));
        }
        Err(RenewError::Failed(tally.shortfall(n, m)))
    }

    /// The extend script on every master, until a majority settles it
    /// either way.
    async fn extend_round(&mut self, token: &Token) -> Replies<NodeExtend> {
        let n = self.quorum.len();
        let m = self.quorum.majority();
        let (key, kind) = (self.key.as_str(), self.kind);
        let ttl_ms = millis_arg(self.ttl);
        let round = self.quorum.round(|node| async move {
            let invocation = kind.extend(key, token, ttl_ms, n);
            let reply: redis::Value = node.script(&invocation).await?;
            let extended = parse_extend(node.answer(reply)?)?;
            if matches!(extended, NodeExtend::Extended) {
                node.confirm(key).await?;
            }
            Ok(extended)
        });
        round
            .until(|replies| {
                let ours = replies
                    .iter()
                    .filter(|r| matches!(r, Some(Ok(NodeExtend::Extended))))
                    .count();
                let gone = replies
                    .iter()
                    .filter(|r| matches!(r, Some(Ok(e)) if !matches!(e, NodeExtend::Extended)))
                    .count();
                ours >= m || gone >= m
            })
            .await
    }
}

fn parse_extend(answer: Answer) -> Result<NodeExtend> {
    match answer.code()? {
        1 => Ok(NodeExtend::Extended),
        2 => Ok(NodeExtend::SetAgain),
        3 => Ok(NodeExtend::Missing),
        0 => Ok(NodeExtend::Taken(answer.get(1)?)),
        4 => Ok(NodeExtend::WrongType(answer.get(1)?)),
        _ => Err(answer.unknown()),
    }
}
