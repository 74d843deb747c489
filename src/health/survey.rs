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

/// The worker-id pool of a single server (or Cluster), over every shard of
/// a sharded one.
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
    /// The index names and lock queues of the namespace, per node.
    pub indexes_and_queues: Vec<Keyed>,
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
        let indexes_and_queues = keyed(quorum, ctx.namespace()).await;
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
            indexes_and_queues,
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

/// An index or a wake-up queue on one node: what `health` lists beside
/// the counters (they expire by themselves, so they are shown, not judged).
#[derive(Clone, Debug, Serialize)]
pub struct Keyed {
    pub redis: String,
    /// `index` (`NS:index:{NAME}`: its interval and last tick) or `queue`
    /// (`NS:queue:KEY`: how many wait).
    pub kind: &'static str,
    pub key: String,
    pub figures: Vec<(String, String)>,
}

/// The indexes and wake-up queues of `namespace` on every node.
async fn keyed(quorum: &mut Quorum, namespace: &str) -> Vec<Keyed> {
    let index = format!("{namespace}:index:{{");
    let queue = format!("{namespace}:queue:");
    let labels = quorum.labels();
    let found = quorum
        .round(|node| {
            let (index, queue) = (index.clone(), queue.clone());
            async move {
                let store = node.store();
                let mut found = Vec::new();
                for key in keys_under(store, &index).await? {
                    if key.ends_with('}') {
                        let (interval, last): (Option<String>, Option<String>) = store
                            .query(redis::cmd("HMGET").arg(&key).arg("interval").arg("last"))
                            .await?;
                        let figures = [("interval_ms", interval), ("last", last)]
                            .into_iter()
                            .filter_map(|(k, v)| Some((k.to_string(), v?)))
                            .collect();
                        found.push(("index", key, figures));
                    }
                }
                for key in keys_under(store, &queue).await? {
                    let waiting: u64 = store.query(redis::cmd("ZCARD").arg(&key)).await?;
                    found.push((
                        "queue",
                        key,
                        vec![("waiting".to_string(), waiting.to_string())],
                    ));
                }
                Ok(found)
            }
        })
        .all()
        .await;
    let mut out = Vec::new();
    for (label, found) in labels.iter().zip(found) {
        for (kind, key, figures) in found.unwrap_or_default() {
            out.push(Keyed {
                redis: label.clone(),
                kind,
                key,
                figures,
            });
        }
    }
    out
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
    // A sharded pool (read over every shard) is named by its layout.
    let key = match stats.as_ref().map_or(0, |s| s.shards.len()) {
        0 => key,
        n => format!("{} ({n} shards)", pool.keys.layout),
    };
    Ok(PoolReport {
        key,
        stats,
        problem,
    })
}
