//! The worker-ID pool: key layout, id encoding, and leasing one id
//! ([`Leaser`], which makes a [`Lease`]).
//!
//! The keyspace is the Go yaraus's, so both tools can share one pool while a
//! fleet migrates:
//!
//! | key | type | content |
//! | --- | --- | --- |
//! | `ns:ids` | sorted set | member = encoded id, score = lease expiry (Unix seconds, server time) |
//! | `ns:clients` | hash | encoded id → owner client id |
//! | `ns:stats` | hash | counters, and the pool's `min` and `max` |
//! | `ns:clock` | hash | encoded id → its clock guard's record ([`clock_guard`]; not the Go tool's) |
//!
//! An id is free when its score is not after the server's `TIME`. Leasing
//! takes the member with the lowest score, so the id that has been free the
//! longest goes first; the encoding (`A1`…`A9`, `B10`…) makes equal scores
//! sort by number, so the smallest id wins ties.
//!
//! Acquire, renew and release are each one Lua script, timed by the server's
//! clock. A lease or renewal then waits for the replicas
//! ([`Store::confirm`], which learns their number once per connection,
//! outside the scripts, so that they need no `INFO`).

pub mod clock_guard;
mod init;
mod list;
mod recovery;
mod report;
mod script;
mod waiting;
mod worker_id;

pub use init::{InitOutcome, MAX_POOL_SIZE, create_missing, init, recorded_range, validate_range};
pub use list::{ListEntry, Listing, list};
pub use report::{HolderClock, Stats, stats};
pub use worker_id::WorkerId;

use crate::base::BootInstant;
use crate::base::setting::Setting;
use crate::claim::{Channel, Claim, RenewError, WaitOptions, Wakeups};
use crate::error::{Error, Result};
use crate::store::{Store, script_error};
use crate::timing::drift::validity;
use crate::timing::lease::Timing;
pub use clock_guard::ClockPolicy;
use clock_guard::{ClockRecord, Offset, WallWatch, wall_ms};
use std::time::Duration;

/// The four keys of one pool.
#[derive(Clone, Debug)]
pub struct PoolKeys {
    pub ids: String,
    pub clients: String,
    pub stats: String,
    /// The clock guard's records (not the Go tool's: it ignores them).
    pub clock: String,
    /// The channel a release publishes on, which the runs waiting for a
    /// free id listen to (`ns:wake:ns:ids`, claim/wake.rs), and their
    /// queue (`ns:queue:ns:ids`).
    pub wake: Channel,
}

impl PoolKeys {
    pub fn new(namespace: &str) -> PoolKeys {
        PoolKeys::with_tag(namespace, namespace, false)
    }

    /// The keys in Redis Cluster: the namespace becomes their hash tag
    /// (`{ns}:ids`, `{ns}:clients`, `{ns}:stats`, `{ns}:clock`), so that
    /// the scripts that touch them run in one slot; the wake channel
    /// (`ns:wake:{ns}:ids`) carries the tag too, so that the release script
    /// may publish on it (`SPUBLISH`).
    pub fn in_cluster(namespace: &str) -> PoolKeys {
        PoolKeys::with_tag(namespace, &format!("{{{namespace}}}"), true)
    }

    fn with_tag(namespace: &str, tagged: &str, cluster: bool) -> PoolKeys {
        let ids = format!("{tagged}:ids");
        PoolKeys {
            wake: Channel::named(
                format!("{namespace}:wake:{ids}"),
                format!("{namespace}:queue:{ids}"),
                cluster,
            ),
            ids,
            clients: format!("{tagged}:clients"),
            stats: format!("{tagged}:stats"),
            clock: format!("{tagged}:clock"),
        }
    }
}

/// Takes worker ids from one pool: the [`crate::claim::Claimant`] of `yaraus run`, shaped
/// like [`crate::lock::Locker`].
pub struct Leaser {
    store: Store,
    keys: PoolKeys,
    clock: ClockPolicy,
    /// This host's last measured offset from the server, recorded with the
    /// next lease (the first lease records none: error -1).
    offset: Option<Offset>,
    expire: Duration,
    interval: Duration,
    /// Empty until the server made us one; later attempts reuse it (the Go
    /// tool burns a new client id per retry).
    client_id: String,
    /// Whether "getting new id..." was said.
    announced: bool,
    /// The pool's range, to re-create it with if it is gone.
    recreate: Option<(u64, u64)>,
    /// Whether the pool's recorded range was compared with `recreate`.
    range_checked: bool,
    /// Ids an attempt leased but the replicas did not confirm, released
    /// since, each until its lease would surely have run out: a replica
    /// promoted between the lease and the release still has it leased to
    /// us, and would keep it from everyone for `--expire`. Released again
    /// before every later attempt (only ever ours: the script checks the
    /// owner, and a later attempt that leases one again ends the wait).
    leftovers: Vec<recovery::Leftover>,
    /// How it waits: the fallback poll, the wake-ups.
    wait: WaitOptions,
    /// While it waits for a free id: its subscription to the pool's wake
    /// channel (claim/wake.rs).
    wakeups: Wakeups,
}

/// A leased worker id: the [`Claim`] that `yaraus run` keeps alive.
pub struct Lease {
    store: Store,
    keys: PoolKeys,
    client_id: String,
    id: WorkerId,
    expire: Duration,
    deadline: BootInstant,
    clock: ClockPolicy,
    watch: WallWatch,
    /// The id's clock record when we leased it (parsed, and as it was).
    found: Option<(ClockRecord, String)>,
    /// Our last measured offset from the server.
    offset: Offset,
    /// Whether the offset warning was given (until the offset is back).
    offset_warned: bool,
    /// Our wall clock (Unix ms) when the lease was sent.
    leased_wall: i64,
    /// Whether the command ran, once known: `Some(true)` its whole tree is
    /// gone (the release sets the horizon to the wall clock then),
    /// `Some(false)` it never ran (the release puts the record back as the
    /// lease found it); `None` leaves the projected deadline.
    ran: Option<bool>,
    /// Writes the replicas confirmed short of their majority (each also
    /// counted in the pool's `wait_shortfall`), for the metrics.
    shortfalls: u64,
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
            wakeups: waiting::wakeups(&keys, &store, timing.interval(), &wait),
            wait,
            store,
            keys,
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
        self.wakeups = waiting::wakeups(&self.keys, &self.store, self.interval, &wait);
        self.wait = wait;
        self
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
        self.check_range().await?;
        // Taken before a re-creation too: the deadline only comes earlier.
        let watch = WallWatch::new();
        let sent = BootInstant::now();
        let sent_wall = wall_ms();
        let deadline = sent + validity(self.expire);
        let known = self.offset.unwrap_or(Offset::UNKNOWN);
        let horizon = watch.wall_at(deadline);
        // Refused by a user's ACL without the queue: the same attempt
        // without its place (claim/wake.rs).
        let wake = self.keys.wake.clone();
        let (invocation, unqueued) = wake.with_queue(self.wakeups.queues(), |queue| {
            self.acquire_script(horizon, known, queue)
        });
        let (ok, client, member, expiry_ms, now_ms, record) =
            self.acquire(invocation, || unqueued.take()).await?;
        let offset = Offset::measure(sent_wall, sent.elapsed(), now_ms);
        self.offset = Some(offset);
        self.client_id = client;
        if ok == 0 {
            let next_free = Duration::from_millis(expiry_ms.saturating_sub(now_ms).max(0) as u64);
            return Ok(Acquired::Exhausted {
                next_free,
                expires_at: expiry_ms,
            });
        }
        let id = WorkerId::decode(&member).ok_or_else(|| {
            Error::State(format!(
                "the pool {} holds '{member}', which is not an encoded id (A1, B10, …)",
                self.keys.ids
            ))
        })?;
        let mut lease = Lease {
            store: self.store.clone(),
            keys: self.keys.clone(),
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
        lease.refuse_beyond_max_offset().await?;
        let why = match lease.confirm("leased").await {
            Ok(Ok(())) => {
                // Now that the master is known (the lease is on it): the
                // leftovers that the release before the attempt may have
                // sent to a master that is one no more.
                self.leftovers.retain(|kept| kept.id != id);
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
        self.keep_leftover(id, lease.found_record());
        Ok(Acquired::NotReplicated {
            why: format!("leased id {id} but {why}; released it"),
        })
    }

    /// The acquire script: `horizon` is the lease's deadline on our wall
    /// clock, `known` our offset from the server; with `queue` (the queue
    /// of waiters), our place in it, if we queue.
    fn acquire_script(
        &self,
        horizon: i64,
        known: Offset,
        queue: Option<&str>,
    ) -> redis::ScriptInvocation<'static> {
        script::Acquire {
            keys: &self.keys,
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

impl Lease {
    /// Waits for the replicas to confirm the write just made ([`Store::confirm`]).
    /// `Ok(Err(why))` below `--min-replicas`: the write does not count. A
    /// shortfall against the majority of the connected replicas is logged
    /// and counted in the pool's `wait_shortfall`.
    async fn confirm(&mut self, done: &str) -> Result<Result<(), String>> {
        let r = self.store.confirm(&self.keys.ids).await?;
        if !r.ok() {
            return Ok(Err(format!(
                "{} ({} {})",
                r.describe(),
                Setting::MinReplicas,
                r.min
            )));
        }
        if r.shortfall() {
            self.shortfalls += 1;
            log::warn!(
                "{done} id {}, but {} in time; counted as wait_shortfall ({} makes this a \
                 failure)",
                self.id,
                r.describe(),
                Setting::MinReplicas
            );
            let _ = self
                .store
                .query::<i64>(
                    redis::cmd("HINCRBY")
                        .arg(&self.keys.stats)
                        .arg("wait_shortfall")
                        .arg(1),
                )
                .await;
        }
        Ok(Ok(()))
    }

    pub fn id(&self) -> WorkerId {
        self.id
    }

    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// When the lease stops being ours unless renewed (boot clock).
    pub fn deadline(&self) -> BootInstant {
        self.deadline
    }

    /// Writes confirmed by fewer replicas than wanted (`WAIT` short of its
    /// majority, the write still counting) since the lease was taken.
    pub fn wait_shortfalls(&self) -> u64 {
        self.shortfalls
    }

    /// This host's wall-clock offset from the server's in seconds, as the
    /// last renewal (or the lease) measured it.
    pub fn clock_offset(&self) -> Option<f64> {
        (self.offset != Offset::UNKNOWN).then(|| self.offset.ms as f64 / 1000.0)
    }
}

impl Claim for Lease {
    async fn renew(&mut self) -> Result<Duration, RenewError> {
        let stepped = self.watch_wall_clock();
        let sent = BootInstant::now();
        let sent_wall = wall_ms();
        let horizon = self.watch.wall_at(sent + validity(self.expire));
        let invocation = script::Renew {
            keys: &self.keys,
            client: &self.client_id,
            id: self.id,
            ttl_ms: self.expire.as_millis() as u64,
            horizon,
            offset: self.offset,
            stepped_back: stepped.is_some(),
        }
        .invocation();
        let reply: redis::Value = match self.store.script(&invocation).await {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => return Err(RenewError::Failed(pool_error(&self.store, &e))),
            Err(e) => return Err(RenewError::Failed(e)),
        };
        let answer = self.store.answer(reply).map_err(RenewError::Failed)?;
        let ok = answer.code().map_err(RenewError::Failed)?;
        let now_ms: i64 = answer.get(2).map_err(RenewError::Failed)?;
        if ok == 0 {
            let owner: String = answer.get(1).unwrap_or_default();
            return Err(RenewError::Lost(if owner.is_empty() {
                format!("id {} is gone from the pool {}", self.id, self.keys.ids)
            } else {
                format!("id {} now belongs to {owner}", self.id)
            }));
        }
        self.offset = Offset::measure(sent_wall, sent.elapsed(), now_ms);
        match self.confirm("renewed").await {
            Ok(Ok(())) => {}
            Ok(Err(why)) => {
                return Err(RenewError::Failed(Error::Unavailable(format!(
                    "renewed, but {why}"
                ))));
            }
            Err(e) => return Err(RenewError::Failed(e)),
        }
        self.check_clock(stepped).map_err(RenewError::Lost)?;
        Ok(validity(self.expire))
    }

    async fn release(&mut self) -> Result<()> {
        let horizon;
        let clock = match self.ran {
            Some(true) => {
                horizon = self.release_horizon().to_string();
                ("ended", horizon.as_str())
            }
            Some(false) => (
                "unused",
                self.found.as_ref().map_or("", |(_, text)| text.as_str()),
            ),
            None => ("", ""),
        };
        let release = script::Release {
            keys: &self.keys,
            client: &self.client_id,
            id: self.id,
            live_only: false,
            clock,
            waker: "",
        };
        // Refused by a user's ACL without the queue: the same release
        // without it (claim/wake.rs).
        let (invocation, unqueued) = self.keys.wake.with_queue(true, |q| release.invocation(q));
        match self
            .store
            .script_or::<i64>(&invocation, || unqueued.take())
            .await?
        {
            Ok(_) => Ok(()),
            Err(e) => Err(pool_error(&self.store, &e)),
        }
    }

    fn describe(&self) -> String {
        format!("id {}", self.id)
    }

    fn command_gone(&mut self, ran: bool) {
        self.ran = Some(ran);
    }
}

/// This host's name, for a new client id.
fn host_name() -> String {
    hostname::get()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "localhost".into())
}

/// Turns an error from one of the pool scripts into what the user sees.
pub(crate) fn pool_error(store: &Store, e: &redis::RedisError) -> Error {
    match script_error(e) {
        Some(("YARAUS_UNINIT", msg)) => Error::State(format!(
            "{msg}, or give run {} and {} to have it re-created whenever it is gone",
            Setting::Min,
            Setting::Max
        )),
        Some((_, msg)) => Error::State(msg.to_string()),
        None => crate::store::classify(store.target(), e.clone()),
    }
}
