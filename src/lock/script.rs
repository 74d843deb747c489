//! The lock's Lua scripts and, for each, the one builder of its KEYS and
//! ARGV.
//!
//! A script's header (its `.lua` file, beside this one) is the contract:
//! which keys and arguments, in which order, and what it returns. Each
//! builder here has a field per key or argument and pushes them in that
//! order: the one place the Rust side knows it. `kind.rs` chooses the
//! script for a lock, a shared place or a semaphore; the rounds fill in
//! named fields.
//!
//! Public so that the conformance tests (`tests/conformance/`) replay the
//! model checkers' steps through the very invocations the code makes.

use crate::base::COUNTER_LUA;
use crate::claim::WAKE_LUA;
use crate::claim::wake::{Queued, Waking};
use crate::store::invoke;
use std::sync::LazyLock;
use std::time::Duration;

const SHARED_LUA: &str = include_str!("shared.lua");
static ACQUIRE_CODE: LazyLock<String> = LazyLock::new(|| {
    [
        COUNTER_LUA,
        SHARED_LUA,
        WAKE_LUA,
        include_str!("acquire.lua"),
    ]
    .concat()
});
const EXTEND_CODE: &str = include_str!("extend.lua");
static RELEASE_CODE: LazyLock<String> =
    LazyLock::new(|| [WAKE_LUA, include_str!("release.lua")].concat());
static UNDO_CODE: LazyLock<String> =
    LazyLock::new(|| [WAKE_LUA, include_str!("undo.lua")].concat());
static ACQUIRE: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(&ACQUIRE_CODE));
static EXTEND: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(EXTEND_CODE));
static RELEASE: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(&RELEASE_CODE));
static UNDO: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(&UNDO_CODE));
static SEMAPHORE_ACQUIRE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(&[COUNTER_LUA, WAKE_LUA, include_str!("semaphore_acquire.lua")].concat())
});
static SHARED_ACQUIRE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(&[COUNTER_LUA, SHARED_LUA, include_str!("shared_acquire.lua")].concat())
});
static SEMAPHORE_EXTEND: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("semaphore_extend.lua")));
static SEMAPHORE_RELEASE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(&[WAKE_LUA, include_str!("semaphore_release.lua")].concat())
});
static INSPECT: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(&[COUNTER_LUA, include_str!("inspect.lua")].concat()));

/// A duration as whole milliseconds, for `PX` (at least 1).
pub fn millis_arg(d: Duration) -> u64 {
    (d.as_millis() as u64).max(1)
}

/// The scripts a node of several masters loads before its first request
/// (see [`crate::store::Quorum::preload`]); a semaphore has one master.
pub fn quorum_scripts() -> [&'static str; 4] {
    [
        ACQUIRE_CODE.as_str(),
        EXTEND_CODE,
        RELEASE_CODE.as_str(),
        UNDO_CODE.as_str(),
    ]
}

type Invocation = redis::ScriptInvocation<'static>;

/// How the acquire script counts the fencing token.
#[derive(Clone, Copy, Debug)]
pub enum FenceMode {
    /// One master: INCR.
    Increment,
    /// Several masters: vote for this value.
    Propose(u64),
}

/// acquire.lua: take the lock, and count a fencing token in the same step.
pub struct Acquire<'a> {
    pub key: &'a str,
    pub fence_key: &'a str,
    pub token: &'a str,
    pub ttl_ms: u64,
    pub fence: FenceMode,
    /// A waiting writer's mark among shared holders and how long it lasts
    /// in ms, packed `MS:MARK` (`''` for none).
    pub mark: Option<(&'a str, u64)>,
    pub queued: Option<Queued<'a>>,
}

impl Acquire<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = invoke(&ACQUIRE, &[self.key, self.fence_key]);
        invocation.arg(self.token).arg(self.ttl_ms);
        match self.fence {
            FenceMode::Increment => invocation.arg("incr").arg(""),
            FenceMode::Propose(v) => invocation.arg("propose").arg(v),
        };
        invocation.arg(
            self.mark
                .map_or(String::new(), |(mark, ms)| format!("{ms}:{mark}")),
        );
        if let Some(queued) = self.queued {
            queued.add_to(&mut invocation);
        }
        invocation
    }
}

/// semaphore_acquire.lua: take one of `limit` places.
pub struct SemaphoreAcquire<'a> {
    pub key: &'a str,
    pub fence_key: &'a str,
    pub token: &'a str,
    pub ttl_ms: u64,
    pub limit: u32,
    pub queued: Option<Queued<'a>>,
}

impl SemaphoreAcquire<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = invoke(&SEMAPHORE_ACQUIRE, &[self.key, self.fence_key]);
        invocation.arg(self.token).arg(self.ttl_ms).arg(self.limit);
        if let Some(queued) = self.queued {
            queued.add_to(&mut invocation);
        }
        invocation
    }
}

/// shared_acquire.lua: take a shared place (its waiters do not queue: a
/// writer's release frees it for many).
pub struct SharedAcquire<'a> {
    pub key: &'a str,
    pub fence_key: &'a str,
    pub token: &'a str,
    pub ttl_ms: u64,
}

impl SharedAcquire<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = invoke(&SHARED_ACQUIRE, &[self.key, self.fence_key]);
        invocation.arg(self.token).arg(self.ttl_ms);
        invocation
    }
}

/// extend.lua: extend the lock; `heal`: set the token again where the key
/// is missing.
pub struct Extend<'a> {
    pub key: &'a str,
    pub token: &'a str,
    pub ttl_ms: u64,
    pub heal: bool,
}

impl Extend<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = invoke(&EXTEND, &[self.key]);
        invocation
            .arg(self.token)
            .arg(self.ttl_ms)
            .arg(if self.heal { "1" } else { "0" });
        invocation
    }
}

/// semaphore_extend.lua: extend a place of a semaphore, or a shared place
/// (`shared`).
pub struct SemaphoreExtend<'a> {
    pub key: &'a str,
    pub token: &'a str,
    pub ttl_ms: u64,
    pub shared: bool,
}

impl SemaphoreExtend<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = invoke(&SEMAPHORE_EXTEND, &[self.key]);
        // ARGV[3] is unused: the place of extend.lua's `heal`.
        invocation.arg(self.token).arg(self.ttl_ms).arg("0");
        if self.shared {
            invocation.arg("shared");
        }
        invocation
    }
}

/// release.lua: free the lock where it holds our token.
pub struct Release<'a> {
    pub key: &'a str,
    pub fence_key: &'a str,
    pub token: &'a str,
    pub waking: Waking<'a>,
}

impl Release<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = invoke(&RELEASE, &[self.key, self.fence_key]);
        invocation.arg(self.token);
        self.waking.add_to(&mut invocation);
        invocation
    }
}

/// undo.lua: free a failed attempt's lock, and withdraw its vote: put back
/// the counter the vote (`ours`) replaced (`before`) where it still stands.
pub struct Undo<'a> {
    pub key: &'a str,
    pub fence_key: &'a str,
    pub token: &'a str,
    pub ours: u64,
    pub before: u64,
    pub waking: Waking<'a>,
}

impl Undo<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = invoke(&UNDO, &[self.key, self.fence_key]);
        invocation.arg(self.token).arg(self.ours).arg(self.before);
        self.waking.add_to(&mut invocation);
        invocation
    }
}

/// semaphore_release.lua: give a place (or a waiting writer's mark) back.
pub struct SemaphoreRelease<'a> {
    pub key: &'a str,
    pub token: &'a str,
    pub waking: Waking<'a>,
}

impl SemaphoreRelease<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = invoke(&SEMAPHORE_RELEASE, &[self.key]);
        invocation.arg(self.token);
        self.waking.add_to(&mut invocation);
        invocation
    }
}

/// inspect.lua: what one node knows about the lock, read-only.
pub struct Inspect<'a> {
    pub key: &'a str,
    pub fence_key: &'a str,
}

impl Inspect<'_> {
    pub fn invocation(&self) -> Invocation {
        invoke(&INSPECT, &[self.key, self.fence_key])
    }
}
