//! `yaraus index NAME --status`: the last few intervals as JSON, read-only.
//!
//! For monitoring: who took part in each interval kept (the keys expire
//! after [`crate::timing::index::KEEP`] intervals), who confirmed each transition,
//! and the pairs of the current interval: every replica of the interval
//! before, with the index and replica count it runs under now.

use super::keys::IndexKeys;
use crate::error::Result;
use crate::store::Store;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Reads the index's keys; `None` when it has no recent interval.
pub async fn read(store: &mut Store, keys: &IndexKeys) -> Result<Option<Value>> {
    let (interval, last): (Option<u64>, Option<u64>) = store
        .query(
            redis::cmd("HMGET")
                .arg(keys.config())
                .arg("interval")
                .arg("last"),
        )
        .await?;
    let (Some(interval), Some(last)) = (interval, last) else {
        return Ok(None);
    };
    let first = last
        .saturating_sub(u64::from(crate::timing::index::KEEP) - 1)
        .max(1);
    let mut pipe = redis::pipe();
    for n in first..=last {
        pipe.get(keys.count(n))
            .hgetall(keys.who(n))
            .smembers(keys.transition(n));
    }
    type Interval = (Option<u64>, BTreeMap<String, u64>, Vec<String>);
    let rows: Vec<Interval> = store.pipeline(&pipe).await?;
    let mut intervals = Vec::new();
    let mut by_number = BTreeMap::new();
    for (n, (count, who, mut confirmed)) in (first..=last).zip(rows) {
        if count.is_none() && who.is_empty() {
            continue;
        }
        confirmed.sort();
        intervals.push(json!({
            "interval": n,
            "replicas": count,
            "members": who,
            "transition_confirmed": confirmed,
        }));
        by_number.insert(n, (count, who));
    }
    // The pairs of `last` come from `last - 1`, whose count no longer moves.
    let pairs: Vec<Value> = match by_number.get(&(last - 1)) {
        Some((Some(count), who)) => {
            let mut members: Vec<(&String, &u64)> = who.iter().collect();
            members.sort_by_key(|(_, rank)| **rank);
            members
                .into_iter()
                .map(|(client, rank)| {
                    json!({"client": client, "index": rank - 1, "replicas": count})
                })
                .collect()
        }
        _ => Vec::new(),
    };
    Ok(Some(json!({
        "name": keys.name(),
        "interval_ms": interval,
        "current": last,
        "pairs": pairs,
        "intervals": intervals,
    })))
}
