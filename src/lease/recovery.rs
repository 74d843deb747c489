//! What a [`Leaser`] does about what a fault took from it: a pool that is
//! gone (re-created from the range `run` was given, when it was), and ids
//! that its failed attempts leased where their release did not reach.
//!
//! * **A pool that is gone** (a Redis restarted without persistence): with
//!   [`Leaser::recreating`], the acquire script's "no pool" is answered by
//!   building the pool as `init` does ([`create_missing`]: atomically, and
//!   never over a pool that exists) and asking again. The holder then waits
//!   the grace delay before its command starts, as after any lost record.
//!   A shard that is gone (its master restarted empty) is built again with
//!   the runs its layout gives it, not with the range given to `run`. A
//!   pool is never built while shards of a sharded pool of the namespace
//!   exist on any master: their layout was lost, and the pool would hand
//!   their ids out again (`init` adopts them instead: sharded_init.rs).
//! * **Leftovers.** An attempt that leased an id the replicas did not
//!   confirm releases it; a replica promoted in between keeps it leased to
//!   us, from everyone, until `--expire`. Such ids are released again
//!   before later attempts and after the one that succeeds.

use super::init::{InitOutcome, add, create_missing};
use super::keys::PoolKeys;
use super::layout::refuse_beside_shards;
use super::leaser::{Leaser, Leftover};
use super::range::recorded_range;
use super::script::{self, is_uninit};
use super::worker_id::WorkerId;
use crate::base::setting::Setting;
use crate::error::Result;
use crate::store::reply::Answer;

/// What acquire.lua answered: its code, the client id, the id, the
/// expiry and the server's time (ms), and the id's clock record.
type Acquired = (i64, String, String, i64, i64, String);

fn acquired(answer: Answer) -> Result<Acquired> {
    Ok((
        answer.code()?,
        answer.text(1)?,
        answer.text(2)?,
        answer.get(3)?,
        answer.get(4)?,
        answer.text(5)?,
    ))
}

impl Leaser {
    /// Runs the acquire script on the pool (the shard) `keys`, re-creating
    /// it first when it is gone and told to
    /// ([`recreating`](Self::recreating)): a shard with its `runs`, a pool
    /// with the range given. `unqueued` is the same script without the
    /// queue of waiters, for a user whose ACL refuses the queue
    /// (claim/wake.rs: the refused script did nothing). `Ok(Err(e))`: the
    /// script refused the pool (gone, not re-created; a key of another
    /// type), having written nothing.
    pub(super) async fn acquire(
        &mut self,
        keys: &PoolKeys,
        runs: &[std::ops::RangeInclusive<u64>],
        mut invocation: redis::ScriptInvocation<'static>,
        unqueued: impl FnOnce() -> Option<redis::ScriptInvocation<'static>>,
    ) -> Result<std::result::Result<Acquired, redis::RedisError>> {
        let mut reply = self.store.script(&invocation).await?;
        if let Err(e) = &reply
            && crate::store::is_denied(e)
            && let Some(other) = unqueued()
        {
            invocation = other;
            reply = self.store.script(&invocation).await?;
        }
        let e = match reply {
            Ok(reply) => return acquired(self.store.answer(reply)?).map(Ok),
            Err(e) => e,
        };
        let (true, Some((min, max))) = (is_uninit(&e), self.recreate) else {
            return Ok(Err(e));
        };
        if runs.is_empty() {
            self.recreate_pool(keys, min, max).await?;
        } else {
            self.recreate_shard(keys, runs).await?;
        }
        match self.store.script(&invocation).await? {
            Ok(reply) => acquired(self.store.answer(reply)?).map(Ok),
            Err(e) => Ok(Err(e)),
        }
    }

    /// Builds the pool `min..=max`, unless there is one, or shards of a
    /// sharded pool of this namespace outlived its layout.
    async fn recreate_pool(&mut self, keys: &PoolKeys, min: u64, max: u64) -> Result<()> {
        refuse_beside_shards(&mut self.store, keys).await?;
        match create_missing(&mut self.store, keys, min, max).await? {
            InitOutcome::Created { .. } => log::warn!(
                "the pool {} did not exist (a Redis restarted without persistence, or never \
                 initialised); created it with ids {min}..{max}; {} still holds back the \
                 command, for a previous holder whose record may have been lost with it",
                keys.ids,
                Setting::Delay
            ),
            InitOutcome::Already { min: a, max: b } => self.warn_of_range((a, b)),
            InitOutcome::Resized { .. } => unreachable!("create_missing never resizes"),
        }
        Ok(())
    }

    /// Builds the shard `keys` with its `runs`, unless there is one.
    async fn recreate_shard(
        &mut self,
        keys: &PoolKeys,
        runs: &[std::ops::RangeInclusive<u64>],
    ) -> Result<()> {
        let (first, rest) = (&runs[0], &runs[1..]);
        let outcome = create_missing(&mut self.store, keys, *first.start(), *first.end()).await?;
        if let InitOutcome::Created { .. } = outcome {
            for run in rest {
                add(&mut self.store, &keys.ids, run.clone()).await?;
            }
            log::warn!(
                "the shard {} of the pool {} did not exist (its Redis restarted without \
                 persistence); created it with its ids of the layout; {} still holds back the \
                 command, for a previous holder whose record may have been lost with it",
                keys.ids,
                keys.layout,
                Setting::Delay
            );
        }
        Ok(())
    }

    /// Remembers `id`, leased by a failed attempt (see `leftovers`), with
    /// the clock record its lease found ('' for none).
    pub(super) fn keep_leftover(&mut self, keys: &PoolKeys, id: WorkerId, found: String) {
        const KEPT: usize = 8;
        self.leftovers
            .retain(|kept| kept.id != id || kept.keys.ids != keys.ids);
        if self.leftovers.len() >= KEPT {
            self.leftovers.remove(0);
        }
        let until = tokio::time::Instant::now() + self.expire * 2;
        self.leftovers.push(Leftover {
            keys: keys.clone(),
            id,
            until,
            found,
        });
    }

    /// Releases the leftovers again, wherever they are still ours. Called
    /// before each attempt, and after the one that succeeds (with the id it
    /// leased no longer among them).
    pub(super) async fn release_leftovers(&mut self) {
        let now = tokio::time::Instant::now();
        self.leftovers.retain(|kept| kept.until > now);
        for kept in self.leftovers.clone() {
            // Its command never ran: the clock record goes back as the
            // lease found it, wherever the lease is still ours (a promoted
            // replica may still hold the lease's projected horizon).
            let release = script::Release {
                keys: &kept.keys,
                client: &self.client_id,
                id: kept.id,
                live_only: true,
                clock: ("unused", &kept.found),
                waker: self.wakeups.waker_arg(),
            };
            let wake = &kept.keys.wake;
            let (invocation, unqueued) = wake.with_queue(true, |queue| release.invocation(queue));
            if self
                .store
                .script_or::<i64>(&invocation, || unqueued.take())
                .await
                .is_err()
            {
                return;
            }
        }
    }

    /// Once, with a range to re-create the pool with: warns when the pool
    /// that exists records another (`sharded`: a sharded pool's, from its
    /// layout; `None`: the pool's own record).
    pub(super) async fn check_range(&mut self, sharded: Option<(u64, u64)>) -> Result<()> {
        if self.range_checked || self.recreate.is_none() {
            return Ok(());
        }
        let recorded = match sharded {
            Some(range) => Some(range),
            // A string there is a sharded pool's mark: checked with its
            // layout, by the attempt that finds it out.
            None => match recorded_range(&mut self.store, &self.keys).await {
                Ok(range) => range,
                Err(e) if is_wrong_type(&e) => return Ok(()),
                Err(e) => return Err(e),
            },
        };
        if let Some(range) = recorded {
            self.warn_of_range(range);
        }
        self.range_checked = true;
        Ok(())
    }

    fn warn_of_range(&self, (min, max): (u64, u64)) {
        let Some(given) = self.recreate.filter(|&given| given != (min, max)) else {
            return;
        };
        log::warn!(
            "the pool {} holds ids {min}..{max}, not the {}..{} of {} and {}: it is left as it \
             is (`yaraus init` resizes it)",
            self.layout
                .as_ref()
                .map_or(self.keys.ids.clone(), |l| l.name()),
            given.0,
            given.1,
            Setting::Min,
            Setting::Max
        );
    }
}

/// Whether reading the pool's range found a string (a sharded pool's
/// mark), which the attempt then finds out for itself.
fn is_wrong_type(e: &crate::error::Error) -> bool {
    matches!(e, crate::error::Error::State(text) if text.contains("WRONGTYPE"))
}
