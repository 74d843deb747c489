//! `list`: every id of a pool, or only the leased ones, in id order, by
//! the server's clock.
//!
//! The whole pool is walked in chunks of ids, asking for their scores and
//! owners with `ZMSCORE` and `HMGET`; [`LIST_DEPTH`] chunk requests are in
//! flight at once on the one connection, and each row is handed to the
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
//! The chunk requests time out on *no progress*, not each on its own: the
//! listing fails ("did not answer in time", as any request does) only when
//! no chunk has come for the response timeout while it waited for one. A
//! request's own timeout starts when it is sent, and with 8 in flight the
//! listing that is to read their replies may meanwhile be writing rows,
//! blocked by a slow reader of its output, starved of CPU, swapped out or
//! stopped: replies the server sent in time were then read late and counted
//! against it (a debug build at load 8 stopped half-way through 2^16 ids).
//! So the chunks go through a connection of their own without redis-rs's
//! response timeout ([`Store::connection_without_timeout`], closed with the
//! listing), and the wait for the next chunk is bounded instead
//! ([`awake_wait`]), from when the listing starts waiting for it, that is
//! from the last chunk handed over. That bound counts time in ticks: a tick
//! that comes late, after a stop of the process, counts as one, so that the
//! replies that came during the stop are read before the server is blamed.
//!
//! A sharded pool (layout.rs) is listed run by run of its layout, in id
//! order, each run from its shard and judged by its shard's server's
//! `TIME` (in a Cluster, shards are on different masters, whose clocks
//! differ); `--using` finds each shard's leased ids as above.

use super::clock_guard::ClockRecord;
use super::init::measure;
use super::keys::PoolKeys;
use super::layout::Layout;
use super::report::HolderClock;
use super::script::{Leased, pool_error};
use super::worker_id::WorkerId;
use crate::error::{Error, Result};
use crate::store::{Store, Target, classify};
use serde::Serialize;
use std::time::{Duration, UNIX_EPOCH};
use tokio::task::JoinHandle;

/// Ids per list request.
const LIST_CHUNK: usize = 5_000;
/// List requests in flight at once.
const LIST_DEPTH: usize = 8;
/// Leased ids per page of the range query on the score.
const LEASED_PAGE: usize = 5_000;
/// Ticks of the wait for a chunk ([`awake_wait`]): a stop of the process
/// costs the server at most one of them.
const WAIT_TICKS: u32 = 10;

/// Scores, owners and clock records of one chunk of ids, with the ids.
type Chunk = (
    Vec<u64>,
    Vec<Option<f64>>,
    Vec<Option<String>>,
    Vec<Option<String>>,
);

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

/// The chunk requests of a listing: a task sends them, [`LIST_DEPTH`] at
/// once on a connection of the listing's own, and the listing takes their
/// replies in id order. Dropped, it stops them all, which closes the
/// connection.
struct Chunks {
    rx: tokio::sync::mpsc::Receiver<Request>,
    producer: JoinHandle<()>,
    /// The wait for a chunk without any coming: the response timeout.
    patience: Duration,
}

/// A chunk request's task, aborted if dropped before its reply is taken.
struct Request(JoinHandle<redis::RedisResult<Chunk>>);

impl Drop for Request {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Drop for Chunks {
    fn drop(&mut self) {
        // The requests queued are dropped with `rx`, the one the producer
        // holds with it.
        self.producer.abort();
    }
}

impl Chunks {
    /// Starts requesting the ids `ids` yields, and their clock records when
    /// the pool has any (`clocks`: a pool without is not asked for them).
    async fn request(
        store: &Store,
        keys: &PoolKeys,
        mut ids: impl Iterator<Item = u64> + Send + 'static,
        clocks: bool,
    ) -> Result<Chunks> {
        let (tx, rx) = tokio::sync::mpsc::channel(LIST_DEPTH);
        let conn = store.connection_without_timeout().await?;
        let keys = keys.clone();
        let producer = tokio::spawn(async move {
            loop {
                let chunk: Vec<u64> = ids.by_ref().take(LIST_CHUNK).collect();
                if chunk.is_empty() {
                    break;
                }
                let members: Vec<String> = chunk.iter().map(|&n| WorkerId(n).encode()).collect();
                let mut conn = conn.clone();
                let mut pipe = redis::pipe();
                pipe.cmd("ZMSCORE")
                    .arg(&keys.ids)
                    .arg(&members)
                    .cmd("HMGET")
                    .arg(&keys.clients)
                    .arg(&members);
                if clocks {
                    pipe.cmd("HMGET").arg(&keys.clock).arg(&members);
                }
                let request = Request(tokio::spawn(async move {
                    if clocks {
                        let reply: redis::RedisResult<_> = pipe.query_async(&mut conn).await;
                        reply.map(|(scores, owners, clocks)| (chunk, scores, owners, clocks))
                    } else {
                        let n = members.len();
                        let reply: redis::RedisResult<_> = pipe.query_async(&mut conn).await;
                        reply.map(|(scores, owners)| (chunk, scores, owners, vec![None; n]))
                    }
                }));
                if tx.send(request).await.is_err() {
                    break;
                }
            }
        });
        Ok(Chunks {
            rx,
            producer,
            patience: store.timeouts().response(),
        })
    }

    /// The next chunk; `None` after the last. Fails as a request that timed
    /// out does when none comes for the response timeout ([`awake_wait`]).
    async fn next(&mut self, target: &Target) -> Result<Option<Chunk>> {
        let rx = &mut self.rx;
        let reply = awake_wait(self.patience, async {
            let mut request = rx.recv().await?;
            Some((&mut request.0).await)
        });
        let reply = match reply.await {
            Some(Some(reply)) => reply,
            // The last chunk was handed over.
            Some(None) => return Ok(None),
            // None came in time.
            None => {
                let timed_out = std::io::Error::from(std::io::ErrorKind::TimedOut);
                return Err(classify(target, timed_out.into()));
            }
        };
        let reply = reply.map_err(|e| Error::Redis(format!("list request failed: {e}")))?;
        Ok(Some(reply.map_err(|e| classify(target, e))?))
    }
}

/// `wait`, or None when it has not ended after `patience` of this process
/// running: `patience` is counted in [`WAIT_TICKS`] ticks, and a tick that
/// comes late (the process was stopped, swapped out or starved of CPU
/// meanwhile) counts as one, so that what came during the stop is taken
/// before the wait gives up. Without a stop, it gives up after `patience`.
async fn awake_wait<T>(patience: Duration, wait: impl Future<Output = T>) -> Option<T> {
    let mut wait = std::pin::pin!(wait);
    for _ in 0..WAIT_TICKS {
        // `timeout` polls `wait` first: a late tick does not preempt it.
        if let Ok(done) = tokio::time::timeout(patience / WAIT_TICKS, &mut wait).await {
            return Some(done);
        }
    }
    None
}

fn rfc3339(unix_secs: f64) -> String {
    let d = Duration::from_secs_f64(unix_secs.max(0.0));
    humantime::format_rfc3339_millis(UNIX_EPOCH + d).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::time::Instant;

    /// Any patience will do: the tests run on tokio's paused clock.
    fn patience() -> Duration {
        Duration::from_secs(4)
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_that_never_ends_gives_up_after_its_patience() {
        let start = Instant::now();
        assert_eq!(
            awake_wait(patience(), std::future::pending::<()>()).await,
            None
        );
        assert_eq!(start.elapsed(), patience());
        assert_eq!(awake_wait(patience(), async { 7 }).await, Some(7));
    }

    /// The clock jumps past the patience while nothing runs (a stop of the
    /// process), and the reply came meanwhile: it is taken. One that never
    /// comes still ends the wait, the stop counting as one tick.
    #[tokio::test(start_paused = true)]
    async fn a_stop_of_the_process_costs_one_tick() {
        let tick = patience() / WAIT_TICKS;
        let (tx, rx) = tokio::sync::oneshot::channel();
        let waiter = tokio::spawn(awake_wait(patience(), rx));
        tokio::task::yield_now().await;
        tokio::time::advance(patience() * 2).await;
        // The waiter sees its late tick (due first) before the reply is read.
        tokio::time::sleep(tick / 2).await;
        tx.send(5).expect("the waiter gave up in the stop");
        assert_eq!(waiter.await.unwrap(), Some(Ok(5)));

        let waiter = tokio::spawn(awake_wait(patience(), std::future::pending::<()>()));
        tokio::task::yield_now().await;
        tokio::time::advance(patience() * 2).await;
        let resumed = Instant::now();
        assert_eq!(waiter.await.unwrap(), None);
        assert_eq!(resumed.elapsed(), patience() - tick);
    }
}
