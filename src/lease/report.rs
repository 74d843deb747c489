//! `stats` and `list`: what a pool looks like, by the server's clock.
//!
//! `stats` is one read-only script, so every figure is of the same instant.
//! `list` walks the pool's range in chunks of ids, asking for their scores
//! and owners with `ZMSCORE` and `HMGET`; many chunk requests are in flight
//! at once on the one connection, and entries are handed to the caller as
//! they arrive, so listing millions of ids costs neither one round trip per
//! id (as the Go tool did) nor one reply of hundreds of megabytes.

use super::clock::ClockRecord;
use super::{PoolKeys, WorkerId, pool_error};
use crate::error::{Error, Result};
use crate::store::Store;
use serde::Serialize;
use std::sync::LazyLock;
use std::time::{Duration, UNIX_EPOCH};
use tokio::task::JoinHandle;

static STATS: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("stats.lua")));

/// Ids per list request.
const LIST_CHUNK: u64 = 5_000;
/// List requests in flight at once.
const LIST_DEPTH: usize = 8;

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
    fn of(id: u64, record: &ClockRecord) -> HolderClock {
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

/// Reads the pool's statistics in one script.
pub async fn stats(store: &mut Store, keys: &PoolKeys) -> Result<Stats> {
    let mut invocation = STATS.prepare_invoke();
    invocation
        .key(&keys.ids)
        .key(&keys.stats)
        .key(&keys.clients)
        .key(&keys.clock);
    type Reply = (
        i64,
        Vec<(String, String)>,
        i64,
        i64,
        String,
        String,
        String,
        Vec<(String, String)>,
    );
    let (_now, counters, free, using, min, mid, max, clocks): Reply =
        match store.script(&invocation).await? {
            Ok(r) => r,
            Err(e) => return Err(pool_error(store, &e)),
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
    let secs = |s: &str| s.parse::<f64>().unwrap_or(0.0);
    Ok(Stats {
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
    })
}

/// Scores, owners and clock records of one chunk of ids.
type Chunk = (Vec<Option<f64>>, Vec<Option<String>>, Vec<Option<String>>);

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

/// Streams every id of the pool, in id order, to `emit`.
pub async fn list(
    store: &mut Store,
    keys: &PoolKeys,
    mut emit: impl FnMut(ListEntry) -> std::io::Result<()>,
) -> Result<()> {
    let (now, clocks) = check_pool(store, keys).await?;
    let bounds: (Option<u64>, Option<u64>) = store
        .query(redis::cmd("HMGET").arg(&keys.stats).arg("min").arg("max"))
        .await?;
    let (min, max) = match bounds {
        (Some(min), Some(max)) => (min, max),
        _ => super::init::measure(store, keys).await?,
    };
    let mut chunks = Chunks::request(store, keys, min, max, clocks).await?;
    while let Some((lo, (scores, owners, clocks))) = chunks.next(store).await? {
        let rows = scores.into_iter().zip(owners).zip(clocks);
        for (i, ((score, owner), clock)) in rows.enumerate() {
            let Some(score) = score else { continue };
            if let Err(e) = emit(ListEntry::at(lo + i as u64, score, owner, clock, now)) {
                chunks.producer.abort();
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    return Ok(());
                }
                return Err(Error::Redis(format!("cannot write the list: {e}")));
            }
        }
    }
    let _ = chunks.producer.await;
    Ok(())
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

/// The chunk requests of a listing: a task sends them, [`LIST_DEPTH`] at
/// once on the store's one connection, and the listing takes their replies
/// in id order.
struct Chunks {
    rx: tokio::sync::mpsc::Receiver<JoinHandle<(u64, redis::RedisResult<Chunk>)>>,
    producer: JoinHandle<()>,
}

impl Chunks {
    /// Starts requesting the ids `min..=max`, and their clock records when
    /// the pool has any (`clocks`: a pool without is not asked for them).
    async fn request(
        store: &mut Store,
        keys: &PoolKeys,
        min: u64,
        max: u64,
        clocks: bool,
    ) -> Result<Chunks> {
        let (tx, rx) = tokio::sync::mpsc::channel(LIST_DEPTH);
        let conn = store.connection().await?;
        let ids_key = keys.ids.clone();
        let clients_key = keys.clients.clone();
        let clock_key = keys.clock.clone();
        let producer = tokio::spawn(async move {
            let mut lo = min;
            loop {
                let hi = lo.saturating_add(LIST_CHUNK - 1).min(max);
                let members: Vec<String> = (lo..=hi).map(|n| WorkerId(n).encode()).collect();
                let mut conn = conn.clone();
                let mut pipe = redis::pipe();
                pipe.cmd("ZMSCORE")
                    .arg(&ids_key)
                    .arg(&members)
                    .cmd("HMGET")
                    .arg(&clients_key)
                    .arg(&members);
                if clocks {
                    pipe.cmd("HMGET").arg(&clock_key).arg(&members);
                }
                let request = tokio::spawn(async move {
                    let reply: redis::RedisResult<Chunk> = if clocks {
                        pipe.query_async(&mut conn).await
                    } else {
                        let n = members.len();
                        pipe.query_async(&mut conn)
                            .await
                            .map(|(scores, owners)| (scores, owners, vec![None; n]))
                    };
                    (lo, reply)
                });
                if tx.send(request).await.is_err() || hi == max {
                    break;
                }
                lo = hi + 1;
            }
        });
        Ok(Chunks { rx, producer })
    }

    /// The next chunk, with its first id; `None` after the last.
    async fn next(&mut self, store: &mut Store) -> Result<Option<(u64, Chunk)>> {
        let Some(request) = self.rx.recv().await else {
            return Ok(None);
        };
        let (lo, reply) = request
            .await
            .map_err(|e| Error::Redis(format!("list request failed: {e}")))?;
        Ok(Some((lo, reply.map_err(|e| store.fail(e))?)))
    }
}

fn rfc3339(unix_secs: f64) -> String {
    let d = Duration::from_secs_f64(unix_secs.max(0.0));
    humantime::format_rfc3339_millis(UNIX_EPOCH + d).to_string()
}
