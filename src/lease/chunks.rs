//! The chunk requests of `list` (list.rs): the ids asked for in chunks,
//! their scores, owners and clock records read with `ZMSCORE` and `HMGET`,
//! [`LIST_DEPTH`] chunks in flight at once on a connection of their own.
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

use super::keys::PoolKeys;
use super::worker_id::WorkerId;
use crate::error::{Error, Result};
use crate::store::{Store, Target, classify};
use std::time::Duration;
use tokio::task::JoinHandle;

/// Ids per list request.
const LIST_CHUNK: usize = 5_000;
/// List requests in flight at once.
const LIST_DEPTH: usize = 8;
/// Ticks of the wait for a chunk ([`awake_wait`]): a stop of the process
/// costs the server at most one of them.
const WAIT_TICKS: u32 = 10;

/// Scores, owners and clock records of one chunk of ids, with the ids.
pub(super) type Chunk = (
    Vec<u64>,
    Vec<Option<f64>>,
    Vec<Option<String>>,
    Vec<Option<String>>,
);

/// The chunk requests of a listing: a task sends them, [`LIST_DEPTH`] at
/// once on a connection of the listing's own, and the listing takes their
/// replies in id order. Dropped, it stops them all, which closes the
/// connection.
pub(super) struct Chunks {
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
    pub(super) async fn request(
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
    pub(super) async fn next(&mut self, target: &Target) -> Result<Option<Chunk>> {
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
