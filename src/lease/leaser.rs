//! Taking a worker id from a pool: a [`Leaser`] makes one attempt at a
//! time ([`Leaser::try_lease`]: the acquire script, then the replicas'
//! confirmation), and keeps between attempts what the waiting run needs:
//! its client id, its measured clock offset, its wake-ups, and the ids its
//! failed attempts may still hold (`recovery.rs`).
//!
//! A sharded pool (layout.rs) is found out by its first attempt, which
//! tries the namespace's own pool: a string there (the layout's mark)
//! instead of a sorted set sends it to the layout record, and from then on
//! each attempt reads the record and tries the shards in turn from a random
//! one, so that a fleet spreads over them, until one has a free id. A pool
//! that is not sharded costs no more than it did: no request to the record.

use super::clock_guard::{ClockPolicy, ClockRecord, Offset, WallWatch, wall_ms};
use super::held::Lease;
use super::keys::PoolKeys;
use super::layout::{Layout, is_layout_mark};
use super::script::{self, is_uninit, pool_error};
use super::worker_id::WorkerId;
use crate::base::BootInstant;
use crate::base::random::random_index;
use crate::claim::{Claim, WaitOptions, Wakeups};
use crate::error::{Error, Result};
use crate::store::Store;
use crate::timing::drift::validity;
use crate::timing::lease::Timing;
use crate::timing::wake::waiter_keep;
use std::time::Duration;

/// Takes worker ids from one pool: the [`crate::claim::Claimant`] of `yaraus run`, shaped
/// like [`crate::lock::Locker`].
pub struct Leaser {
    pub(super) store: Store,
    /// The namespace's pool: its keys, or a sharded pool's marks.
    pub(super) keys: PoolKeys,
    /// The sharded pool's layout, once an attempt found the pool sharded.
    pub(super) layout: Option<Layout>,
    pub(super) clock: ClockPolicy,
    /// This host's last measured offset from the server of the pool (the
    /// shard) named, recorded with its next lease there (the first lease
    /// records none: error -1).
    pub(super) offset: Option<(String, Offset)>,
    pub(super) expire: Duration,
    pub(super) interval: Duration,
    /// Empty until the server made us one; later attempts reuse it (the Go
    /// tool burns a new client id per retry).
    pub(super) client_id: String,
    /// Whether "getting new id..." was said.
    pub(super) announced: bool,
    /// The pool's range, to re-create it with if it is gone.
    pub(super) recreate: Option<(u64, u64)>,
    /// Whether the pool's recorded range was compared with `recreate`.
    pub(super) range_checked: bool,
    /// Ids an attempt leased but the replicas did not confirm, released
    /// since, each until its lease would surely have run out: a replica
    /// promoted between the lease and the release still has it leased to
    /// us, and would keep it from everyone for `--expire`. Released again
    /// before every later attempt (only ever ours: the script checks the
    /// owner, and a later attempt that leases one again ends the wait).
    pub(super) leftovers: Vec<Leftover>,
    /// How it waits: the fallback poll, the wake-ups.
    pub(super) wait: WaitOptions,
    /// While it waits for a free id: its subscription to the pool's wake
    /// channel (claim/wake.rs).
    pub(super) wakeups: Wakeups,
}

/// An id a failed attempt leased and released, released again until its
/// lease would surely have run out (`Leaser::leftovers`).
#[derive(Clone, Debug)]
pub(super) struct Leftover {
    /// The pool (the shard) it was leased from.
    pub keys: PoolKeys,
    pub id: WorkerId,
    pub until: tokio::time::Instant,
    /// The clock record the attempt's lease found ('' for none).
    pub found: String,
}

/// What one attempt at the pool gave.
pub enum Acquired {
    /// An id, valid until its [`Lease::deadline`].
    Leased(Box<Lease>),
    /// Every id is leased; the first expires in `next_free`, at
    /// `expires_at` (Unix ms, the server's clock).
    Exhausted {
        next_free: Duration,
        expires_at: i64,
    },
    /// An id was leased but a majority of the replicas did not confirm it in
    /// time, so it was released again.
    NotReplicated { why: String },
}

impl Leaser {
    /// A leaser for the pool `keys` on `store`, with the lease length and
    /// retry interval of `timing` (which has been through the safeguards).
    pub fn new(store: Store, keys: PoolKeys, timing: &Timing) -> Leaser {
        let wait = WaitOptions::default();
        Leaser {
            wakeups: wakeups(
                std::slice::from_ref(&keys),
                &store,
                timing.interval(),
                &wait,
            ),
            wait,
            store,
            keys,
            layout: None,
            clock: ClockPolicy::default(),
            offset: None,
            expire: timing.expire(),
            interval: timing.interval(),
            client_id: String::new(),
            announced: false,
            recreate: None,
            range_checked: false,
            leftovers: Vec::new(),
        }
    }

    /// The same, re-creating the pool `min..=max` whenever it is gone (a
    /// Redis restarted without persistence) instead of failing: the grace
    /// delay that every lease waits before its command starts protects a
    /// previous holder whose record vanished with the pool, as it does any
    /// lost record. A pool that exists is left alone; one with another
    /// range is warned of.
    pub fn recreating(mut self, min: u64, max: u64) -> Leaser {
        self.recreate = Some((min, max));
        self
    }

    /// With this clock policy.
    pub fn clock(mut self, policy: ClockPolicy) -> Leaser {
        self.clock = policy;
        self
    }

    /// Waiting for a free id as `wait` says: its fallback poll, its
    /// wake-ups (the default: the pool's queue).
    pub fn waiting_as(mut self, wait: WaitOptions) -> Leaser {
        self.wait = wait;
        self.wakeups = self.pool_wakeups();
        self
    }

    /// The wake-ups of this pool: its own channel, or each shard's.
    fn pool_wakeups(&self) -> Wakeups {
        let channels = match &self.layout {
            Some(layout) => layout.pools().into_iter().cloned().collect(),
            None => vec![self.keys.clone()],
        };
        wakeups(&channels, &self.store, self.interval, &self.wait)
    }

    /// Tries once to lease an id.
    ///
    /// When the server has replicas and a majority of them does not confirm
    /// the lease in time, the lease is released and reported as
    /// [`Acquired::NotReplicated`]: an id held only by a master that may fail
    /// over is not held.
    pub async fn try_lease(&mut self) -> Result<Acquired> {
        // Asked before anything is written (and only once per connection):
        // a user the ACL denies INFO is refused with nothing leased.
        self.store.majority_wanted(&self.keys.ids).await?;
        self.release_leftovers().await;
        let layout = match self.layout.is_some() {
            true => self.read_layout().await?,
            false => None,
        };
        let layout = match layout {
            Some(layout) => layout,
            None if self.layout.is_some() => {
                return Err(Error::State(format!(
                    "the layout {} of the sharded pool is gone; run `yaraus init --shards N` \
                     as the pool was made",
                    self.keys.layout
                )));
            }
            None => {
                let base = self.keys.clone();
                self.check_range(None).await?;
                let e = match self.try_pool(&base, &[]).await? {
                    Ok(acquired) => return Ok(acquired),
                    Err(e) => e,
                };
                match is_layout_mark(&e) {
                    true => self.read_layout().await?,
                    false => None,
                }
                .ok_or_else(|| pool_error(&self.store, &e))?
            }
        };
        self.try_shards(layout).await
    }

    /// One attempt at a sharded pool: at each shard in turn, from a random
    /// one, until one leases; the soonest expiry of all when every one is
    /// full. A shard that is missing is passed over (an `init` building
    /// it, a master restarted empty: `run` given a range re-creates it).
    async fn try_shards(&mut self, layout: Layout) -> Result<Acquired> {
        self.check_range(layout.range()).await?;
        let shards: Vec<_> = layout
            .shards
            .iter()
            .filter(|s| !s.ranges.is_empty())
            .collect();
        let start = random_index(shards.len());
        let (mut soonest, mut missing) = (None, None);
        for i in 0..shards.len() {
            let shard = shards[(start + i) % shards.len()];
            match self.try_pool(&shard.keys, &shard.ranges).await? {
                Ok(Acquired::Exhausted {
                    next_free,
                    expires_at,
                }) => {
                    if soonest.is_none_or(|(soonest, _)| next_free < soonest) {
                        soonest = Some((next_free, expires_at));
                    }
                }
                Ok(acquired) => return Ok(acquired),
                Err(e) if is_uninit(&e) => missing = Some(e),
                Err(e) => return Err(pool_error(&self.store, &e)),
            }
        }
        match (soonest, missing) {
            (Some((next_free, expires_at)), _) => Ok(Acquired::Exhausted {
                next_free,
                expires_at,
            }),
            (None, Some(e)) => Err(pool_error(&self.store, &e)),
            (None, None) => Err(Error::State(format!(
                "the pool {} holds no id: run `yaraus init`",
                layout.name()
            ))),
        }
    }

    /// The pool in messages: its ids key, or its layout and shards.
    pub(super) fn pool_name(&self) -> String {
        self.layout
            .as_ref()
            .map_or_else(|| self.keys.ids.clone(), Layout::name)
    }

    /// The pool's layout, read again at each attempt (a resize changes
    /// its runs), `None` when the pool is not sharded; the wake-ups listen
    /// on each of its shards.
    async fn read_layout(&mut self) -> Result<Option<Layout>> {
        let layout = Layout::read(&mut self.store, &self.keys).await?;
        if !layout.is_sharded() {
            return Ok(None);
        }
        let same = self.layout.as_ref().is_some_and(|known| {
            let ids = |l: &Layout| {
                l.shards
                    .iter()
                    .map(|s| s.keys.ids.clone())
                    .collect::<Vec<_>>()
            };
            ids(known) == ids(&layout)
        });
        self.layout = Some(layout.clone());
        if !same {
            self.wakeups = self.pool_wakeups();
        }
        Ok(Some(layout))
    }

    /// Tries once to lease an id from the pool (the shard) `keys`, which
    /// holds the runs `runs` (none for a pool that is not sharded).
    /// `Ok(Err(e))`: the script refused it as a pool (missing, or a string
    /// where its ids should be), with nothing written.
    async fn try_pool(
        &mut self,
        keys: &PoolKeys,
        runs: &[std::ops::RangeInclusive<u64>],
    ) -> Result<std::result::Result<Acquired, redis::RedisError>> {
        // Taken before a re-creation too: the deadline only comes earlier.
        let watch = WallWatch::new();
        let sent = BootInstant::now();
        let sent_wall = wall_ms();
        let deadline = sent + validity(self.expire);
        let known = match &self.offset {
            Some((pool, offset)) if *pool == keys.ids => *offset,
            _ => Offset::UNKNOWN,
        };
        let horizon = watch.wall_at(deadline);
        // Refused by a user's ACL without the queue: the same attempt
        // without its place (claim/wake.rs).
        let (invocation, unqueued) = keys.wake.with_queue(self.wakeups.queues(), |queue| {
            self.acquire_script(keys, horizon, known, queue)
        });
        let reply = self
            .acquire(keys, runs, invocation, || unqueued.take())
            .await?;
        let (ok, client, member, expiry_ms, now_ms, record) = match reply {
            Ok(reply) => reply,
            Err(e) => return Ok(Err(e)),
        };
        let offset = Offset::measure(sent_wall, sent.elapsed(), now_ms);
        self.offset = Some((keys.ids.clone(), offset));
        self.client_id = client;
        if ok == 0 {
            let next_free = Duration::from_millis(expiry_ms.saturating_sub(now_ms).max(0) as u64);
            return Ok(Ok(Acquired::Exhausted {
                next_free,
                expires_at: expiry_ms,
            }));
        }
        let id = WorkerId::decode(&member).ok_or_else(|| {
            Error::State(format!(
                "the pool {} holds '{member}', which is not an encoded id (A1, B10, …)",
                keys.ids
            ))
        })?;
        let lease = Lease {
            store: self.store.clone(),
            keys: keys.clone(),
            client_id: self.client_id.clone(),
            id,
            expire: self.expire,
            deadline,
            clock: self.clock,
            watch,
            found: ClockRecord::parse(&record).map(|r| (r, record)),
            offset,
            offset_warned: false,
            leased_wall: sent_wall,
            ran: None,
            shortfalls: 0,
        };
        self.confirmed(lease).await.map(Ok)
    }

    /// A lease just taken, once the replicas confirmed it; released again
    /// (and kept as a leftover) when they did not.
    async fn confirmed(&mut self, mut lease: Lease) -> Result<Acquired> {
        let id = lease.id;
        lease.refuse_beyond_max_offset().await?;
        let why = match lease.confirm("leased").await {
            Ok(Ok(())) => {
                // Now that the master is known (the lease is on it): the
                // leftovers that the release before the attempt may have
                // sent to a master that is one no more.
                self.leftovers
                    .retain(|kept| kept.id != id || kept.keys.ids != lease.keys.ids);
                self.release_leftovers().await;
                return Ok(Acquired::Leased(Box::new(lease)));
            }
            Ok(Err(why)) => why,
            Err(e) if e.is_fatal() => {
                lease.never_ran();
                let _ = lease.release().await;
                return Err(e);
            }
            Err(e) => e.to_string(),
        };
        lease.never_ran();
        let _ = lease.release().await;
        self.keep_leftover(&lease.keys, id, lease.found_record());
        Ok(Acquired::NotReplicated {
            why: format!("leased id {id} but {why}; released it"),
        })
    }

    /// The acquire script: `horizon` is the lease's deadline on our wall
    /// clock, `known` our offset from the server; with `queue` (the queue
    /// of waiters), our place in it, if we queue.
    fn acquire_script(
        &self,
        keys: &PoolKeys,
        horizon: i64,
        known: Offset,
        queue: Option<&str>,
    ) -> redis::ScriptInvocation<'static> {
        script::Acquire {
            keys,
            client: &self.client_id,
            host: &host_name(),
            ttl_ms: self.expire.as_millis() as u64,
            horizon,
            offset: known,
            queued: queue.and_then(|queue| self.wakeups.queued(queue)),
        }
        .invocation()
    }
}

/// This host's name, for a new client id.
fn host_name() -> String {
    hostname::get()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "localhost".into())
}

/// The pause between two attempts of a run waiting for an id: the
/// options' poll, else [`crate::timing::lease::poll_pause`].
pub(super) fn pause(interval: Duration, wait: &WaitOptions) -> (Duration, Duration) {
    wait.pause(crate::timing::lease::poll_pause(interval))
}

/// The wake-ups of a run waiting for an id from the pools `pools` (the
/// pool, or each shard of a sharded one): a released id admits one run,
/// so waiters queue, and their places outlive a waiter's last attempt
/// ([`crate::timing::wake::waiter_keep`]).
fn wakeups(pools: &[PoolKeys], store: &Store, interval: Duration, wait: &WaitOptions) -> Wakeups {
    let keep = waiter_keep(pause(interval, wait).1, store.timeouts().settle());
    let more = pools[1..].iter().map(|p| p.wake.clone()).collect();
    Wakeups::new(pools[0].wake.clone(), wait.wakeups)
        .waking_one(keep)
        .also_on(more)
}
