//! `list`: every id of a pool, or only the leased ones, in id order, by
//! the server's clock.
//!
//! The whole pool is walked in chunks of ids, asking for their scores and
//! owners with `ZMSCORE` and `HMGET`, several requests in flight at once on
//! one connection (chunks.rs), and each row is handed to the
//! caller as it arrives, so listing millions of ids costs neither one round
//! trip per id (as the Go tool did) nor memory that grows with the pool.
//!
//! `--using` costs what is leased, not what the pool holds: the leased ids
//! are those scored after the listing's `TIME`, found by a range query on
//! the score in pages (`leased.lua`, a page never longer than
//! [`LEASED_PAGE`] ids plus the ties of its last score), then read by the
//! same chunked requests as the walk, in id order. Their numbers are kept
//! (8 bytes each) to be sorted: leases are found in expiry order and listed
//! in id order. When half the pool or more is leased, the walk is no
//! dearer and needs no such memory, so it is used instead.
//!
//! Either way a row says what its id's score said when its chunk was read,
//! against the one `TIME` read at the start: a page cursor on the score only
//! moves up, and a lease renewed during the listing only moves up too, so
//! an id leased throughout is listed exactly once (a duplicate found twice
//! is dropped by the sort), as the walk lists it.
//!
//! The chunks are read as chunks.rs says: a listing fails only when no
//! chunk has come for the response timeout while it waited for one.
//!
//! A sharded pool (layout.rs) is listed run by run of its layout, in id
//! order, each run from its shard and judged by its shard's server's
//! `TIME` (in a Cluster, shards are on different masters, whose clocks
//! differ); `--using` finds each shard's leased ids as above.

use super::chunks::Chunks;
use super::clock_guard::ClockRecord;
use super::keys::PoolKeys;
use super::layout::Layout;
use super::range::measure;
use super::report::HolderClock;
use super::script::{Leased, pool_error};
use super::worker_id::WorkerId;
use crate::error::{Error, Result};
use crate::store::Store;
use serde::Serialize;
use std::time::{Duration, UNIX_EPOCH};

/// Leased ids per page of the range query on the score.
const LEASED_PAGE: usize = 5_000;
/// Which ids a listing shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// Every id of the pool.
    All,
    /// Only the ids leased at the listing's start (score after `TIME`).
    Using,
}

/// One id of `yaraus list`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ListEntry {
    /// Who holds it, or held it last; `null` if nobody ever did.
    pub client_id: Option<String>,
    pub id: u64,
    /// When its lease ends (or ended), RFC 3339, from the server's clock;
    /// `null` if it was never leased (its score is still init's 0, which
    /// as a date would read 1970 and look like a lease long expired).
    pub expire_at: Option<String>,
    /// Whether it is leased now.
    pub using: bool,
    /// Seconds left on the lease; 0 when free.
    pub ttl: f64,
    /// Its (last) holder's clock minus the server's, milliseconds, as last
    /// measured; `null` if never.
    pub clock_offset_ms: Option<i64>,
    /// That measurement's error bound, milliseconds.
    pub clock_error_ms: Option<i64>,
}

impl ListEntry {
    /// The id `id`, whose score is `score`, at the server's time `now`.
    fn at(
        id: u64,
        score: f64,
        owner: Option<String>,
        clock: Option<String>,
        now: f64,
    ) -> ListEntry {
        let using = score > now;
        let clock = clock
            .as_deref()
            .and_then(ClockRecord::parse)
            .map(|r| HolderClock::of(id, &r));
        ListEntry {
            clock_offset_ms: clock.as_ref().and_then(|c| c.offset_ms),
            clock_error_ms: clock.as_ref().and_then(|c| c.error_ms),
            client_id: owner,
            id,
            expire_at: (score > 0.0).then(|| rfc3339(score)),
            using,
            ttl: if using {
                ((score - now) * 1000.0).round() / 1000.0
            } else {
                0.0
            },
        }
    }
}

/// Streams the ids of the pool that `which` names, in id order, to `emit`.
pub async fn list(
    store: &mut Store,
    keys: &PoolKeys,
    which: Listing,
    mut emit: impl FnMut(ListEntry) -> std::io::Result<()>,
) -> Result<()> {
    let layout = Layout::read(store, keys).await?;
    if layout.is_sharded() {
        return list_shards(store, &layout, which, &mut emit).await;
    }
    let (now, clocks) = check_pool(store, keys).await?;
    let bounds: (Option<u64>, Option<u64>) = store
        .query(redis::cmd("HMGET").arg(&keys.stats).arg("min").arg("max"))
        .await?;
    let leased = match which {
        Listing::Using => leased_ids(store, keys, now, bounds).await?,
        Listing::All => None,
    };
    let chunks = match leased {
        Some(ids) => Chunks::request(store, keys, ids.into_iter(), clocks).await?,
        None => {
            let (min, max) = match bounds {
                (Some(min), Some(max)) => (min, max),
                _ => measure(store, keys).await?,
            };
            Chunks::request(store, keys, min..=max, clocks).await?
        }
    };
    emit_rows(store, chunks, now, which, &mut emit).await?;
    Ok(())
}

/// [`list`] of a sharded pool: its runs in id order, each from its shard.
async fn list_shards(
    store: &mut Store,
    layout: &Layout,
    which: Listing,
    emit: &mut impl FnMut(ListEntry) -> std::io::Result<()>,
) -> Result<()> {
    // Each shard's time, whether it has clock records, its leased ids.
    let mut read = Vec::new();
    for shard in &layout.shards {
        if shard.ranges.is_empty() {
            read.push((0.0, false, None));
            continue;
        }
        let (now, clocks) = check_pool(store, &shard.keys).await?;
        let leased = match which {
            Listing::Using => leased_ids(store, &shard.keys, now, (None, None)).await?,
            Listing::All => None,
        };
        read.push((now, clocks, leased));
    }
    let mut runs: Vec<(usize, std::ops::RangeInclusive<u64>)> = layout
        .shards
        .iter()
        .enumerate()
        .flat_map(|(k, s)| s.ranges.iter().map(move |r| (k, r.clone())))
        .collect();
    runs.sort_by_key(|(_, r)| *r.start());
    for (k, run) in runs {
        let (now, clocks, leased) = &read[k];
        let keys = &layout.shards[k].keys;
        let chunks = match leased {
            Some(ids) => {
                let ids: Vec<u64> = ids.iter().copied().filter(|id| run.contains(id)).collect();
                Chunks::request(store, keys, ids.into_iter(), *clocks).await?
            }
            None => Chunks::request(store, keys, run, *clocks).await?,
        };
        if !emit_rows(store, chunks, *now, which, emit).await? {
            break;
        }
    }
    Ok(())
}

/// Hands the rows of `chunks` to `emit`, judged at the server time `now`;
/// false when the reader closed the pipe (the listing ends there).
async fn emit_rows(
    store: &Store,
    mut chunks: Chunks,
    now: f64,
    which: Listing,
    emit: &mut impl FnMut(ListEntry) -> std::io::Result<()>,
) -> Result<bool> {
    while let Some((ids, scores, owners, clocks)) = chunks.next(store.target()).await? {
        let rows = ids.into_iter().zip(scores).zip(owners).zip(clocks);
        for (((id, score), owner), clock) in rows {
            let Some(score) = score else { continue };
            let entry = ListEntry::at(id, score, owner, clock, now);
            if which == Listing::Using && !entry.using {
                continue;
            }
            if let Err(e) = emit(entry) {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    return Ok(false);
                }
                return Err(Error::Redis(format!("cannot write the list: {e}")));
            }
        }
    }
    Ok(true)
}

/// The ids leased at `now`, sorted, within the pool's recorded range
/// (`bounds`: the walk lists no other); `None` when half the pool or more
/// is leased, where walking the pool is no dearer.
async fn leased_ids(
    store: &mut Store,
    keys: &PoolKeys,
    now: f64,
    bounds: (Option<u64>, Option<u64>),
) -> Result<Option<Vec<u64>>> {
    let (total, leased): (u64, u64) = store
        .pipeline(
            redis::pipe()
                .cmd("ZCARD")
                .arg(&keys.ids)
                .cmd("ZCOUNT")
                .arg(&keys.ids)
                .arg(format!("({now}"))
                .arg("+inf"),
        )
        .await?;
    if leased.saturating_mul(2) >= total && leased > 0 {
        return Ok(None);
    }
    let (min, max) = (bounds.0.unwrap_or(0), bounds.1.unwrap_or(u64::MAX));
    let mut ids = Vec::with_capacity(leased as usize);
    let mut from = now.to_string();
    loop {
        let invocation = Leased {
            keys,
            after: &from,
            page: LEASED_PAGE,
        }
        .invocation();
        let (more, last, members): (u8, String, Vec<String>) =
            match store.script(&invocation).await? {
                Ok(page) => page,
                Err(e) => return Err(pool_error(store, &e)),
            };
        ids.extend(
            members
                .iter()
                .filter_map(|m| WorkerId::decode(m))
                .map(|id| id.0)
                .filter(|id| (min..=max).contains(id)),
        );
        if more == 0 {
            break;
        }
        from = last;
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(Some(ids))
}

/// Checks that the pool's keys are what a pool holds; returns the server's
/// time, in Unix seconds, and whether the pool has clock records.
async fn check_pool(store: &mut Store, keys: &PoolKeys) -> Result<(f64, bool)> {
    type Head = (String, String, String, String, (u64, u64));
    let (ids_type, clients_type, stats_type, clock_type, time): Head = store
        .pipeline(
            redis::pipe()
                .cmd("TYPE")
                .arg(&keys.ids)
                .cmd("TYPE")
                .arg(&keys.clients)
                .cmd("TYPE")
                .arg(&keys.stats)
                .cmd("TYPE")
                .arg(&keys.clock)
                .cmd("TIME"),
        )
        .await?;
    match ids_type.as_str() {
        "zset" => {}
        "none" => {
            return Err(Error::State(format!(
                "the pool {} does not exist; create it with `yaraus init`",
                keys.ids
            )));
        }
        t => {
            return Err(Error::State(format!(
                "{} is a {t}, not the sorted set of a pool",
                keys.ids
            )));
        }
    }
    for (key, t) in [
        (&keys.clients, &clients_type),
        (&keys.stats, &stats_type),
        (&keys.clock, &clock_type),
    ] {
        if t != "none" && t != "hash" {
            return Err(Error::State(format!("{key} is a {t}, not a hash")));
        }
    }
    Ok((time.0 as f64 + time.1 as f64 / 1e6, clock_type == "hash"))
}

fn rfc3339(unix_secs: f64) -> String {
    let d = Duration::from_secs_f64(unix_secs.max(0.0));
    humantime::format_rfc3339_millis(UNIX_EPOCH + d).to_string()
}
