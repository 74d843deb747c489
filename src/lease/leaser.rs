//! Taking a worker id from a pool: a [`Leaser`] makes one attempt at a
//! time ([`Leaser::try_lease`]: the acquire script, then the replicas'
//! confirmation), and keeps between attempts what the waiting run needs:
//! its client id, its measured clock offset, its wake-ups, and the ids its
//! failed attempts may still hold (`recovery.rs`).

use super::clock_guard::{ClockPolicy, ClockRecord, Offset, WallWatch, wall_ms};
use super::held::Lease;
use super::keys::PoolKeys;
use super::script;
use super::worker_id::WorkerId;
use crate::base::BootInstant;
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
    pub(super) keys: PoolKeys,
    pub(super) clock: ClockPolicy,
    /// This host's last measured offset from the server, recorded with the
    /// next lease (the first lease records none: error -1).
    pub(super) offset: Option<Offset>,
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
            wakeups: wakeups(&keys, &store, timing.interval(), &wait),
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
        self.wakeups = wakeups(&self.keys, &self.store, self.interval, &wait);
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

/// The wake-ups of a run waiting for an id: a released id admits one run,
/// so waiters queue, and their places outlive a waiter's last attempt
/// ([`crate::timing::wake::waiter_keep`]).
fn wakeups(keys: &PoolKeys, store: &Store, interval: Duration, wait: &WaitOptions) -> Wakeups {
    let keep = waiter_keep(pause(interval, wait).1, store.timeouts().settle());
    Wakeups::new(keys.wake.clone(), wait.wakeups).waking_one(keep)
}
