//! The pool's Lua scripts and, for each, the one builder of its KEYS and
//! ARGV.
//!
//! A script's header (its `.lua` file, beside this one) is the contract:
//! which keys and arguments, in which order, and what it returns. Each
//! builder has a field per key or argument and pushes them in that order:
//! the one place the Rust side knows it, whichever of its callers sends it
//! (a lease gives its id back with [`Release`], and so does a waiting run
//! releasing again an id its failed attempt leased, `recovery.rs`).
//!
//! Public so that the conformance tests (`tests/conformance/`) replay the
//! model checkers' steps through the very invocations the code makes.

use super::clock_guard::Offset;
use super::keys::PoolKeys;
use super::worker_id::WorkerId;
use crate::base::setting::Setting;
use crate::claim::WAKE_LUA;
use crate::claim::wake::{Queued, Waking};
use crate::error::Error;
use crate::store::{Store, invoke, script_error};
use std::ops::RangeInclusive;
use std::sync::LazyLock;

static ACQUIRE: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(&[WAKE_LUA, include_str!("acquire.lua")].concat()));
static RENEW: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("renew.lua")));
static RELEASE: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(&[WAKE_LUA, include_str!("release.lua")].concat()));
static FINALIZE: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("finalize_init.lua")));
static RESIZE: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("resize.lua")));
static SHRINK: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("shrink.lua")));
static LEASED: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("leased.lua")));
static STATS: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("stats.lua")));
static LAYOUT: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("layout.lua")));

type Invocation = redis::ScriptInvocation<'static>;

/// acquire.lua: lease the id that has been free the longest.
pub struct Acquire<'a> {
    pub keys: &'a PoolKeys,
    /// Ours, or `''` to be given a new one.
    pub client: &'a str,
    /// This host's name, for a new client id.
    pub host: &'a str,
    pub ttl_ms: u64,
    /// The lease's deadline on our wall clock (Unix ms).
    pub horizon: i64,
    /// Our offset from the server's clock, and its error.
    pub offset: Offset,
    pub queued: Option<Queued<'a>>,
}

impl Acquire<'_> {
    pub fn invocation(&self) -> Invocation {
        let keys = self.keys;
        let mut invocation = invoke(
            &ACQUIRE,
            &[&keys.ids, &keys.clients, &keys.stats, &keys.clock],
        );
        invocation
            .arg(self.client)
            .arg(self.host)
            .arg(self.ttl_ms)
            .arg(self.horizon)
            .arg(self.offset.ms)
            .arg(self.offset.error_ms);
        if let Some(queued) = self.queued {
            queued.add_to(&mut invocation);
        }
        invocation
    }
}

/// renew.lua: extend our lease on `id`, if it is still ours.
pub struct Renew<'a> {
    pub keys: &'a PoolKeys,
    pub client: &'a str,
    pub id: WorkerId,
    pub ttl_ms: u64,
    /// The new deadline on our wall clock (Unix ms).
    pub horizon: i64,
    pub offset: Offset,
    /// Our wall clock stepped back since the last renewal.
    pub stepped_back: bool,
}

impl Renew<'_> {
    pub fn invocation(&self) -> Invocation {
        let keys = self.keys;
        let mut invocation = invoke(
            &RENEW,
            &[&keys.ids, &keys.clients, &keys.stats, &keys.clock],
        );
        invocation
            .arg(self.client)
            .arg(self.id.encode())
            .arg(self.ttl_ms)
            .arg(self.horizon)
            .arg(self.offset.ms)
            .arg(self.offset.error_ms)
            .arg(if self.stepped_back { "1" } else { "0" });
        invocation
    }
}

/// release.lua: one release of `id` by `client`.
pub struct Release<'a> {
    pub keys: &'a PoolKeys,
    pub client: &'a str,
    pub id: WorkerId,
    /// Only while its lease still runs (a failed attempt's id released
    /// again: one that is free already keeps its place).
    pub live_only: bool,
    /// What becomes of the id's clock record: `("ended", horizon)`,
    /// `("unused", the record as the lease found it)`, or `("", "")`.
    pub clock: (&'a str, &'a str),
    /// The releaser's own place in the queue, which it must not wake.
    pub waker: &'a str,
}

impl Release<'_> {
    /// The script, naming `queue` (the pool's queue of waiters, which it
    /// wakes the first of) if any.
    pub fn invocation(&self, queue: Option<&str>) -> Invocation {
        let keys = self.keys;
        let mut invocation = invoke(&RELEASE, &[&keys.ids, &keys.clients, &keys.clock]);
        invocation
            .arg(self.client)
            .arg(self.id.encode())
            .arg(if self.live_only { "1" } else { "" })
            .arg(self.clock.0)
            .arg(self.clock.1);
        let waking = Waking {
            channel: &keys.wake,
            queue,
            waker: self.waker,
        };
        waking.add_to(&mut invocation);
        invocation
    }
}

/// finalize_init.lua: publish the pool `min..=max` built under `tmp`.
pub struct FinalizeInit<'a> {
    pub keys: &'a PoolKeys,
    pub tmp: &'a str,
    pub min: u64,
    pub max: u64,
}

impl FinalizeInit<'_> {
    pub fn invocation(&self) -> Invocation {
        let keys = self.keys;
        let mut invocation = invoke(&FINALIZE, &[&keys.ids, self.tmp, &keys.stats]);
        invocation
            .arg(self.max - self.min + 1)
            .arg(self.min)
            .arg(self.max);
        invocation
    }
}

/// resize.lua: decide a change of the pool's range to `min..=max`.
pub struct Resize<'a> {
    pub keys: &'a PoolKeys,
    pub min: u64,
    pub max: u64,
    /// Take leased ids outside the range from their holders.
    pub force: bool,
}

impl Resize<'_> {
    pub fn invocation(&self) -> Invocation {
        let keys = self.keys;
        let mut invocation = invoke(&RESIZE, &[&keys.ids, &keys.clients, &keys.stats]);
        invocation
            .arg(self.min)
            .arg(self.max)
            .arg(if self.force { "1" } else { "0" });
        invocation
    }
}

/// shrink.lua: remove the ids `ids` from the pool, while the range it
/// records is still `decided` (the range its init recorded with
/// [`Resize`]); -1 when another init decided since.
pub struct Shrink<'a> {
    pub keys: &'a PoolKeys,
    pub decided: (u64, u64),
    pub ids: RangeInclusive<u64>,
}

impl Shrink<'_> {
    pub fn invocation(&self) -> Invocation {
        let keys = self.keys;
        let mut invocation = invoke(&SHRINK, &[&keys.ids, &keys.clients, &keys.stats]);
        invocation.arg(self.decided.0).arg(self.decided.1);
        for n in self.ids.clone() {
            invocation.arg(WorkerId(n).encode());
        }
        invocation
    }
}

/// leased.lua: one page of leased ids, scores above `after`.
pub struct Leased<'a> {
    pub keys: &'a PoolKeys,
    pub after: &'a str,
    pub page: usize,
}

impl Leased<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = invoke(&LEASED, &[&self.keys.ids]);
        invocation.arg(self.after).arg(self.page);
        invocation
    }
}

/// stats.lua: the pool at one server instant, read-only.
pub struct Stats<'a> {
    pub keys: &'a PoolKeys,
}

impl Stats<'_> {
    pub fn invocation(&self) -> Invocation {
        let keys = self.keys;
        invoke(
            &STATS,
            &[&keys.ids, &keys.stats, &keys.clients, &keys.clock],
        )
    }

    /// The same, with every using id's ttl (a shard's, for the median of
    /// a sharded pool).
    pub fn with_ttls(&self) -> Invocation {
        let mut invocation = self.invocation();
        invocation.arg("ttls");
        invocation
    }
}

/// layout.lua: record a sharded pool's layout over the one read.
pub struct Layout<'a> {
    /// The namespace's keys (their `layout`, and the pool's keys it
    /// marks).
    pub keys: &'a PoolKeys,
    pub record: &'a str,
    /// The record as the caller read it ('' for none).
    pub read: &'a str,
    /// What a new layout leaves in `ns:ids` and `ns:stats`.
    pub marker: &'a str,
}

impl Layout<'_> {
    pub fn invocation(&self) -> Invocation {
        let keys = self.keys;
        let mut invocation = invoke(
            &LAYOUT,
            &[&keys.layout, &keys.ids, &keys.stats, &keys.clients],
        );
        invocation.arg(self.record).arg(self.read).arg(self.marker);
        invocation
    }
}

/// Whether a pool script found no pool.
pub fn is_uninit(e: &redis::RedisError) -> bool {
    matches!(script_error(e), Some(("YARAUS_UNINIT", _)))
}

/// Turns an error from one of the pool scripts into what the user sees.
pub fn pool_error(store: &Store, e: &redis::RedisError) -> Error {
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
