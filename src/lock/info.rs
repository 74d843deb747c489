//! `yaraus lock --info`: what every master knows about a lock, as JSON.
//!
//! One read-only script per node (`inspect.lua`) returns the key's type,
//! value, remaining time and the fencing counter, so that the picture of a
//! node is taken at one instant. The holder's host, pid and age come from the
//! token itself (see [`super::token`]); a token of another tool shows as a
//! value without a holder. The lock counts as held when a majority of the
//! masters hold the same token, which is exactly when nobody else can take it.

use super::kind::{Kind, WRITER_WAITING};
use super::locker::Locker;
use super::script::Inspect;
use super::token::{Holder, Token};
use crate::error::Result;
use crate::store::reply::Answer;
use serde::Serialize;

/// The whole picture of one lock.
#[derive(Clone, Debug, Serialize)]
pub struct LockInfo {
    pub name: String,
    pub key: String,
    pub fencing_key: String,
    pub masters: usize,
    pub majority: usize,
    /// How many masters answered.
    pub answered: usize,
    /// A majority of the masters hold the same token, or have shared
    /// holders.
    pub held: bool,
    /// That token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Who took it, when the token is a yaraus token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holder: Option<Holder>,
    /// The highest fencing counter among the masters that answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fencing_counter: Option<u64>,
    pub nodes: Vec<NodeInfo>,
}

/// What one master knows.
#[derive(Clone, Debug, Serialize)]
pub struct NodeInfo {
    /// The URL, password hidden.
    pub redis: String,
    /// `free`, `held` (a lock), `shared` (shared holders, `lock -s`),
    /// `semaphore`, `other_type`, `unreachable`, or `refused` (a wrong
    /// password, or a command the ACL denies).
    pub state: &'static str,
    /// The holder's token (a lock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holder: Option<Holder>,
    /// Time since the holder took the lock (yaraus tokens only; holder's clock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_ms: Option<u64>,
    /// Time left before the key expires; -1 when it never does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fencing_counter: Option<u64>,
    /// A semaphore's holders, or a lock's shared holders.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holders: Option<Vec<SemaphoreHolder>>,
    /// Exclusive holders waiting for the shared holders to leave (their
    /// marks, which hold back new shared holders).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waiting_writers: Vec<SemaphoreHolder>,
    /// The type of a key that is neither a lock nor a semaphore.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One holder of a semaphore.
#[derive(Clone, Debug, Serialize)]
pub struct SemaphoreHolder {
    pub token: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holder: Option<Holder>,
    pub ttl_ms: i64,
}

impl Locker {
    /// What every master knows about the lock now.
    pub async fn inspect(&mut self) -> LockInfo {
        inspect(self).await
    }
}

async fn inspect(locker: &mut Locker) -> LockInfo {
    let labels = locker.quorum.labels();
    let (key, fence_key) = (locker.key.as_str(), locker.fencing.key());
    let zset_state = match locker.kind {
        Kind::Semaphore { .. } => "semaphore",
        Kind::Lock | Kind::Shared => "shared",
    };
    let replies = locker
        .quorum
        .round(|node| async move {
            let invocation = Inspect { key, fence_key }.invocation();
            let reply: redis::Value = node.script(&invocation).await?;
            parse_node(node.answer(reply)?, zset_state)
        })
        .all()
        .await;
    let nodes: Vec<NodeInfo> = labels
        .iter()
        .zip(replies)
        .map(|(label, reply)| match reply {
            Ok(node) => node,
            Err(e @ crate::error::Error::Refused(_)) => NodeInfo {
                state: "refused",
                ..unreachable_node(label, e.to_string())
            },
            Err(e) => unreachable_node(label, e.to_string()),
        })
        .collect();

    let majority = locker.quorum.majority();
    let answered = nodes
        .iter()
        .filter(|n| !matches!(n.state, "unreachable" | "refused"))
        .count();
    let mut token = None;
    for candidate in nodes.iter().filter_map(|n| n.token.as_ref()) {
        let count = nodes
            .iter()
            .filter(|n| n.token.as_ref() == Some(candidate))
            .count();
        if count >= majority {
            token = Some(candidate.clone());
            break;
        }
    }
    let shared = nodes
        .iter()
        .filter(|n| n.state == "shared" && n.holders.as_ref().is_some_and(|h| !h.is_empty()))
        .count();
    LockInfo {
        name: locker.name.clone(),
        key: locker.key.clone(),
        fencing_key: locker.fencing.key().to_string(),
        masters: nodes.len(),
        majority,
        answered,
        held: token.is_some() || shared >= majority,
        holder: token.as_ref().and_then(|t| Token::holder_of(t.as_bytes())),
        token,
        fencing_counter: nodes.iter().filter_map(|n| n.fencing_counter).max(),
        nodes,
    }
}

fn unreachable_node(label: &str, error: String) -> NodeInfo {
    NodeInfo {
        redis: label.to_string(),
        state: "unreachable",
        token: None,
        holder: None,
        age_ms: None,
        ttl_ms: None,
        fencing_counter: None,
        holders: None,
        waiting_writers: Vec::new(),
        key_type: None,
        error: Some(error),
    }
}

/// `zset_state`: what a sorted set at the key is (`semaphore`, `shared`).
fn parse_node(answer: Answer, zset_state: &'static str) -> Result<NodeInfo> {
    let kind: String = answer.get(0)?;
    let value: Vec<u8> = answer.get(1)?;
    let pttl: i64 = answer.get(2)?;
    let counter: String = answer.get(3)?;
    let now_ms: i64 = answer.get(4)?;
    let mut node = unreachable_node(&answer.label, String::new());
    node.error = None;
    node.fencing_counter = counter.parse().ok();
    match kind.as_str() {
        "none" => node.state = "free",
        "string" => {
            node.state = "held";
            node.holder = Token::holder_of(&value);
            node.age_ms = node.holder.as_ref().map(|h| h.age().as_millis() as u64);
            node.token = Some(String::from_utf8_lossy(&value).into_owned());
            node.ttl_ms = Some(pttl);
        }
        "zset" => {
            node.state = zset_state;
            node.ttl_ms = Some(pttl);
            let mut holders = Vec::new();
            // Pairs from item 5; an odd one left over is no pair.
            for i in (5..answer.len().saturating_sub(1)).step_by(2) {
                let token: Vec<u8> = answer.get(i).unwrap_or_default();
                let expiry: String = answer.get(i + 1).unwrap_or_default();
                let expiry: i64 = expiry.parse().unwrap_or(now_ms);
                if expiry <= now_ms {
                    continue; // expired, not purged yet: nobody holds it
                }
                let token = String::from_utf8_lossy(&token).into_owned();
                let (list, token) = match token.strip_prefix(WRITER_WAITING) {
                    Some(writer) => (&mut node.waiting_writers, writer.to_string()),
                    None => (&mut holders, token),
                };
                list.push(SemaphoreHolder {
                    holder: Token::holder_of(token.as_bytes()),
                    token,
                    ttl_ms: (expiry - now_ms).max(0),
                });
            }
            node.holders = Some(holders);
        }
        other => {
            node.state = "other_type";
            node.key_type = Some(other.to_string());
        }
    }
    Ok(node)
}
