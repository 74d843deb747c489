//! Extending the lock, and healing masters that lost it.

use super::*;

/// One node's reply to the extend script.
#[derive(Debug)]
enum NodeExtend {
    Extended,
    SetAgain,
    Missing,
    Taken(Vec<u8>),
    WrongType(String),
}

impl Locker {
    /// Extends the lock held with `token` to a full ttl on every master,
    /// setting the token again where a node lost the key. Returns the
    /// validity (ttl − drift) counted from before the requests were sent.
    pub async fn extend(&mut self, token: &Token) -> Result<Duration, RenewError> {
        let n = self.quorum.len();
        let m = self.quorum.majority();
        let labels = self.quorum.labels();
        let limit = self.quorum.round_timeout();
        let (key, kind) = (self.key.as_str(), self.kind);
        let ttl_ms = millis_arg(self.ttl);
        let futures: Vec<_> = self
            .quorum
            .nodes_mut()
            .iter_mut()
            .map(|node| async move {
                let invocation = kind.extend(key, token, ttl_ms, n);
                let reply: redis::Value = node.script(&invocation).await?;
                let extended = parse_extend(node.label(), reply)?;
                if matches!(extended, NodeExtend::Extended) {
                    node.confirm(key).await?;
                }
                Ok(extended)
            })
            .collect();
        let replies = gather(futures, &labels, limit, |replies| {
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
        .await;

        let mut ours = 0;
        let mut gone = Vec::new();
        let mut set_again = Vec::new();
        let mut failed = Vec::new();
        for (label, reply) in labels.iter().zip(replies) {
            match reply {
                None => {}
                Some(Ok(NodeExtend::Extended)) => ours += 1,
                Some(Ok(NodeExtend::SetAgain)) => {
                    set_again.push(label.clone());
                    gone.push(format!("{label}: our token is gone (deleted, or expired)"));
                }
                Some(Ok(NodeExtend::Missing)) => {
                    gone.push(format!("{label}: our token is gone (deleted, or expired)"))
                }
                Some(Ok(NodeExtend::Taken(holder))) => {
                    gone.push(format!("{label}: now held by {}", describe_holder(&holder)))
                }
                Some(Ok(NodeExtend::WrongType(t))) => {
                    gone.push(format!("{label}: the key is now a {t}"))
                }
                Some(Err(e)) => failed.push(e.to_string()),
            }
        }
        if ours >= m {
            if !set_again.is_empty() {
                crate::info!(
                    "{}: set our token again on {}, which had lost it",
                    self.what(),
                    set_again.join(", ")
                );
            }
            return Ok(self.ttl.saturating_sub(drift(self.ttl)));
        }
        if gone.len() >= m {
            if !set_again.is_empty() {
                self.release_round(token).await;
            }
            let detail = gone
                .iter()
                .map(|g| g.split_once(": ").map_or(g.as_str(), |(_, why)| why))
                .collect::<Vec<_>>();
            return Err(RenewError::Lost(if n == 1 {
                format!(
                    "the key {} no longer holds our token: {}",
                    self.key,
                    detail.join("; ")
                )
            } else {
                format!(
                    "our token is gone from {} of {n} masters: {}",
                    gone.len(),
                    gone.join("; ")
                )
            }));
        }
        let mut why = gone;
        why.extend(failed);
        Err(RenewError::Failed(Error::Unavailable(format!(
            "extended on {ours} of {n} masters, {m} needed: {}",
            why.join("; ")
        ))))
    }
}

fn parse_extend(label: &str, reply: redis::Value) -> Result<NodeExtend> {
    let items = reply::items(label, reply)?;
    let code: i64 = reply::field(label, &items, 0)?;
    match code {
        1 => Ok(NodeExtend::Extended),
        2 => Ok(NodeExtend::SetAgain),
        3 => Ok(NodeExtend::Missing),
        0 => Ok(NodeExtend::Taken(reply::field(label, &items, 1)?)),
        4 => Ok(NodeExtend::WrongType(reply::field(label, &items, 1)?)),
        _ => Err(reply::unknown_code(label, code)),
    }
}
