//! Reading everything yaraus keeps in a namespace, on every node.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::hilo::{HiloKeys, shard_statuses};
use crate::lease::{self, Stats};
use crate::seq::census::{Census, Kind};
use crate::store::{Fitness, Quorum, Replication, keys_under};
use serde::Serialize;
use std::collections::BTreeSet;

/// One node, as a fresh check found it.
#[derive(Clone, Debug)]
pub struct NodeReport {
    pub redis: String,
    pub fitness: Fitness,
}

/// A hilo sequence's high-water mark on every shard, in node order
/// (`Err`: the shard did not answer).
#[derive(Clone, Debug)]
pub struct ShardMark {
    pub name: String,
    pub marks: Vec<std::result::Result<Option<u64>, String>>,
}

impl ShardMark {
    /// The shards that answered without the mark, by index.
    pub fn lacking(&self) -> Vec<usize> {
        (0..self.marks.len())
            .filter(|&i| matches!(self.marks[i], Ok(None)))
            .collect()
    }
}

/// The worker-id pool of a single server.
#[derive(Clone, Debug, Serialize)]
pub struct PoolReport {
    pub key: String,
    /// `None`: no pool in this namespace, or it could not be read.
    pub stats: Option<Stats>,
    /// Why a pool that is there could not be read (a key of another type).
    pub problem: Option<String>,
}

/// Everything a survey read.
#[derive(Clone, Debug)]
pub struct Survey {
    pub namespace: String,
    pub nodes: Vec<NodeReport>,
    /// Sequences and fencing counters on every node (none on a Cluster,
    /// whose keys one `SCAN` cannot list), as a sweep would heal them.
    pub census: Census,
    pub shards: Vec<ShardMark>,
    /// With a single server only.
    pub pool: Option<PoolReport>,
    /// Each node's replication (`Err`: why it could not be read).
    pub replication: Vec<std::result::Result<Replication, String>>,
}

impl Survey {
    /// Reads every node of `quorum` (the servers of `ctx`). Writes nothing.
    /// An error only for what no node can answer (a key of another type is
    /// a finding, not an error).
    pub async fn take(ctx: &Context, quorum: &mut Quorum) -> Result<Survey> {
        let labels = quorum.labels();
        let fitness = quorum
            .round(|node| async move { Ok(node.recheck().await) })
            .all()
            .await;
        let nodes = labels
            .iter()
            .zip(fitness)
            .map(|(label, fitness)| NodeReport {
                redis: label.clone(),
                fitness: fitness.unwrap_or_else(|e| Fitness::Down(e.to_string())),
            })
            .collect();
        let cluster = ctx.targets().iter().any(|t| t.is_cluster());
        let census = if cluster {
            Census {
                labels: quorum.labels(),
                majority: quorum.majority(),
                counters: Vec::new(),
                unlisted: Vec::new(),
            }
        } else {
            Census::take(quorum, ctx.namespace(), &Kind::ALL).await?
        };
        let shards = if cluster {
            Vec::new()
        } else {
            hilo_marks(quorum, ctx.namespace()).await?
        };
        let pool = match ctx.targets() {
            [_] => Some(pool(ctx).await?),
            _ => None,
        };
        // In a Cluster, the replicas of the master of the pool's slot.
        let key = pool.as_ref().map_or(String::new(), |p| p.key.clone());
        let replication = quorum
            .round(|node| {
                let key = key.clone();
                async move { node.store().replication(&key).await }
            })
            .all()
            .await
            .into_iter()
            .map(|r| r.map_err(|e| e.to_string()))
            .collect();
        Ok(Survey {
            namespace: ctx.namespace().to_string(),
            nodes,
            census,
            shards,
            pool,
            replication,
        })
    }

    /// The nodes' labels, in order.
    pub fn labels(&self) -> Vec<&str> {
        self.nodes.iter().map(|n| n.redis.as_str()).collect()
    }
}

/// The high-water mark of every hilo sequence of `namespace` on every
/// shard: the names are the union of what each shard lists.
async fn hilo_marks(quorum: &mut Quorum, namespace: &str) -> Result<Vec<ShardMark>> {
    let prefix = format!("{namespace}:hilo:{{");
    let listed = quorum
        .round(|node| {
            let prefix = prefix.clone();
            async move { keys_under(node.store(), &prefix).await }
        })
        .all()
        .await;
    let names: BTreeSet<String> = listed
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|key| {
            let name = key.strip_prefix(&prefix)?.strip_suffix('}')?;
            (!name.contains('}')).then(|| name.to_string())
        })
        .collect();
    let mut marks = Vec::new();
    for name in names {
        let Ok(keys) = HiloKeys::new(namespace, &name) else {
            continue;
        };
        let statuses = shard_statuses(quorum, &keys).await;
        marks.push(ShardMark {
            name,
            marks: statuses
                .into_iter()
                .map(|s| s.map(|s| s.hwm).map_err(|e| e.to_string()))
                .collect(),
        });
    }
    Ok(marks)
}

/// The pool of the one server of `ctx`, if there is one.
async fn pool(ctx: &Context) -> Result<PoolReport> {
    let pool = ctx.pool()?;
    let mut store = pool.connect().await?;
    let key = pool.keys.ids.clone();
    let exists: bool = store.query(redis::cmd("EXISTS").arg(&key)).await?;
    if !exists {
        return Ok(PoolReport {
            key,
            stats: None,
            problem: None,
        });
    }
    let (stats, problem) = match lease::stats(&mut store, &pool.keys).await {
        Ok(stats) => (Some(stats), None),
        Err(e @ Error::State(_)) => (None, Some(e.to_string())),
        Err(e) => return Err(e),
    };
    Ok(PoolReport {
        key,
        stats,
        problem,
    })
}
