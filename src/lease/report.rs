//! `stats`: what a pool looks like, by the server's clock, in one read-only
//! script, so that every figure is of the same instant.
//!
//! It costs what is leased, not what the pool holds: the leased ids are the
//! top of the sorted set (their scores are after `TIME`), so their number is
//! a `ZCOUNT` and the remaining leases' shortest, median and longest are
//! reads by rank, each O(log n); only the holders' clock records are read
//! one per leased id. Those stay in the same script (and its one reply)
//! rather than in pages: a picture whose clock offsets were read later than
//! its counts would not be one picture, and a pool's leased ids are its
//! running workers, which one reply carries (about 40 bytes each).
//!
//! A sharded pool is read shard by shard, each at its own server's instant
//! (in a Cluster, shards are on different masters, whose clocks differ):
//! counters and counts add up, and the median lease is taken over every
//! shard's leases (each shard sends them, as its clock records).

use super::clock_guard::ClockRecord;
use super::keys::PoolKeys;
use super::layout::Layout;
use super::script::{self, pool_error};
use super::worker_id::WorkerId;
use crate::error::Result;
use crate::store::Store;
use serde::Serialize;

/// The figures of `yaraus stats`; the first thirteen are the Go tool's.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Stats {
    pub client_id_count: i64,
    pub client_get_id_count: i64,
    pub client_get_id_success: i64,
    pub get_id_no_available_id: i64,
    pub extend_ttl_count: i64,
    pub extend_ttl_success: i64,
    pub extend_ttl_ownership_error: i64,
    pub extend_ttl_expire_warning: i64,
    pub unusing_ids: i64,
    pub using_ids: i64,
    pub using_ttl_max: f64,
    pub using_ttl_mid: f64,
    pub using_ttl_min: f64,
    /// Writes that fewer than a majority of the connected replicas
    /// confirmed in time (counted when `--min-replicas` did not make them fail).
    pub wait_shortfall: i64,
    /// The pool's range, when recorded.
    pub min: Option<u64>,
    pub max: Option<u64>,
    /// Renewals that found their host's wall clock stepped back.
    pub clock_step_back: i64,
    /// Each leased id's holder's last measured clock offset.
    pub clock_offsets: Vec<HolderClock>,
    /// A sharded pool's shards, each with its own figures (absent for a
    /// pool that is not sharded).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardFigures>,
}

/// One shard's ids, for `stats` of a sharded pool.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ShardFigures {
    /// The shard's ids key.
    pub key: String,
    pub unusing_ids: i64,
    pub using_ids: i64,
}

/// A holder's clock, as its last lease or renewal measured it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct HolderClock {
    pub id: u64,
    /// Its wall clock minus the server's, milliseconds (`null`: not
    /// measured yet).
    pub offset_ms: Option<i64>,
    /// The measurement's error bound, milliseconds.
    pub error_ms: Option<i64>,
}

impl HolderClock {
    pub(super) fn of(id: u64, record: &ClockRecord) -> HolderClock {
        let measured = record.offset.error_ms >= 0;
        HolderClock {
            id,
            offset_ms: measured.then_some(record.offset.ms),
            error_ms: measured.then_some(record.offset.error_ms),
        }
    }
}

impl Stats {
    /// Every figure with its name, for other output formats.
    pub fn figures(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("client_id_count", self.client_id_count as f64),
            ("client_get_id_count", self.client_get_id_count as f64),
            ("client_get_id_success", self.client_get_id_success as f64),
            ("get_id_no_available_id", self.get_id_no_available_id as f64),
            ("extend_ttl_count", self.extend_ttl_count as f64),
            ("extend_ttl_success", self.extend_ttl_success as f64),
            (
                "extend_ttl_ownership_error",
                self.extend_ttl_ownership_error as f64,
            ),
            (
                "extend_ttl_expire_warning",
                self.extend_ttl_expire_warning as f64,
            ),
            ("unusing_ids", self.unusing_ids as f64),
            ("using_ids", self.using_ids as f64),
            ("using_ttl_max", self.using_ttl_max),
            ("using_ttl_mid", self.using_ttl_mid),
            ("using_ttl_min", self.using_ttl_min),
            ("wait_shortfall", self.wait_shortfall as f64),
            ("clock_step_back", self.clock_step_back as f64),
        ]
    }
}

/// Reads the pool's statistics: in one script, or one per shard.
pub async fn stats(store: &mut Store, keys: &PoolKeys) -> Result<Stats> {
    let layout = Layout::read(store, keys).await?;
    if !layout.is_sharded() {
        return Ok(pool_stats(store, keys, false).await?.0);
    }
    let mut parts = Vec::new();
    for shard in layout.shards.iter().filter(|s| !s.ranges.is_empty()) {
        parts.push(pool_stats(store, &shard.keys, true).await?);
    }
    if parts.is_empty() {
        return Err(crate::error::Error::State(format!(
            "the pool {} holds no id: run `yaraus init`",
            layout.name()
        )));
    }
    let mut merged = merge(parts);
    (merged.min, merged.max) = layout.range().unzip();
    Ok(merged)
}

/// The figures of a sharded pool from its shards' (with each shard's
/// using ids' ttls).
fn merge(parts: Vec<(Stats, Vec<f64>)>) -> Stats {
    let mut ttls: Vec<f64> = parts.iter().flat_map(|(_, t)| t.iter().copied()).collect();
    ttls.sort_by(f64::total_cmp);
    let mid = match ttls.len() {
        0 => 0.0,
        n if n % 2 == 1 => ttls[n / 2],
        n => ((ttls[n / 2 - 1] + ttls[n / 2]) / 2.0 * 1000.0).round() / 1000.0,
    };
    let (mut all, _) = parts[0].clone();
    all.using_ttl_mid = mid;
    all.using_ttl_min = ttls.first().copied().unwrap_or(0.0);
    all.using_ttl_max = ttls.last().copied().unwrap_or(0.0);
    all.shards = Vec::new();
    for (i, (part, _)) in parts.into_iter().enumerate() {
        all.shards.extend(part.shards);
        if i == 0 {
            continue;
        }
        for (sum, add) in [
            (&mut all.client_id_count, part.client_id_count),
            (&mut all.client_get_id_count, part.client_get_id_count),
            (&mut all.client_get_id_success, part.client_get_id_success),
            (&mut all.get_id_no_available_id, part.get_id_no_available_id),
            (&mut all.extend_ttl_count, part.extend_ttl_count),
            (&mut all.extend_ttl_success, part.extend_ttl_success),
            (
                &mut all.extend_ttl_ownership_error,
                part.extend_ttl_ownership_error,
            ),
            (
                &mut all.extend_ttl_expire_warning,
                part.extend_ttl_expire_warning,
            ),
            (&mut all.unusing_ids, part.unusing_ids),
            (&mut all.using_ids, part.using_ids),
            (&mut all.wait_shortfall, part.wait_shortfall),
            (&mut all.clock_step_back, part.clock_step_back),
        ] {
            *sum += add;
        }
        all.clock_offsets.extend(part.clock_offsets);
    }
    all.clock_offsets.sort_by_key(|c| c.id);
    all
}

/// Reads one pool's (one shard's) statistics in one script; with `ttls`,
/// each using id's ttl too, and the shard's own figures in `shards`.
async fn pool_stats(store: &mut Store, keys: &PoolKeys, ttls: bool) -> Result<(Stats, Vec<f64>)> {
    let script = script::Stats { keys };
    let invocation = match ttls {
        true => script.with_ttls(),
        false => script.invocation(),
    };
    let reply = match store.script::<redis::Value>(&invocation).await? {
        Ok(r) => store.answer(r)?,
        Err(e) => return Err(pool_error(store, &e)),
    };
    let counters: Vec<(String, String)> = reply.get(1)?;
    let (free, using): (i64, i64) = (reply.get(2)?, reply.get(3)?);
    let (min, mid, max): (String, String, String) = (reply.get(4)?, reply.get(5)?, reply.get(6)?);
    let clocks: Vec<(String, String)> = reply.get(7)?;
    let ttls: Vec<f64> = match ttls {
        true => reply
            .get::<Vec<String>>(8)?
            .iter()
            .map(|t| secs(t))
            .collect(),
        false => Vec::new(),
    };
    let get = |name: &str| -> i64 {
        counters
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0)
    };
    let bound = |name: &str| -> Option<u64> {
        counters
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.parse().ok())
    };
    let shards = match reply.len() > 8 {
        true => vec![ShardFigures {
            key: keys.ids.clone(),
            unusing_ids: free,
            using_ids: using,
        }],
        false => Vec::new(),
    };
    let stats = Stats {
        client_id_count: get("client_id_count"),
        client_get_id_count: get("get_id_count"),
        client_get_id_success: get("get_id_success"),
        get_id_no_available_id: get("get_id_no_available_id"),
        extend_ttl_count: get("extend_ttl_count"),
        extend_ttl_success: get("extend_ttl_success"),
        extend_ttl_ownership_error: get("extend_ttl_ownership_error"),
        extend_ttl_expire_warning: get("extend_ttl_expire_warning"),
        unusing_ids: free,
        using_ids: using,
        using_ttl_max: secs(&max),
        using_ttl_mid: secs(&mid),
        using_ttl_min: secs(&min),
        wait_shortfall: get("wait_shortfall"),
        min: bound("min"),
        max: bound("max"),
        clock_step_back: get("clock_step_back"),
        clock_offsets: clocks
            .iter()
            .filter_map(|(id, record)| {
                let id = WorkerId::decode(id)?.0;
                Some(HolderClock::of(id, &ClockRecord::parse(record)?))
            })
            .collect(),
        shards,
    };
    Ok((stats, ttls))
}

fn secs(s: &str) -> f64 {
    s.parse::<f64>().unwrap_or(0.0)
}
