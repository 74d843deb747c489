//! The pool's release script (release.lua), as both of its callers send
//! it: a lease giving its id back, and a waiting run releasing again an id
//! its failed attempt leased (recovery.rs). One builder, so that the two
//! cannot drift apart in the order of their keys and arguments.

use super::{PoolKeys, WorkerId};
use std::sync::LazyLock;

static RELEASE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(&[crate::claim::WAKE_LUA, include_str!("release.lua")].concat())
});

/// One release of `id` by `client`.
pub(super) struct Release<'a> {
    pub keys: &'a PoolKeys,
    pub client: &'a str,
    pub id: WorkerId,
    /// Only while its lease still runs (a failed attempt's id released
    /// again: one that is free already keeps its place).
    pub live_only: bool,
    /// What becomes of the id's clock record: `("ended", horizon)`,
    /// `("unused", the record as the lease found it)`, or `("", "")`
    /// (release.lua, ARGV[4] and ARGV[5]).
    pub clock: (&'a str, &'a str),
    /// The releaser's own place in the queue, which it must not wake.
    pub waker: &'a str,
}

impl Release<'_> {
    /// The script, naming `queue` (the pool's queue of waiters, which it
    /// wakes the first of) if any.
    pub fn script(&self, queue: Option<&str>) -> redis::ScriptInvocation<'static> {
        let keys = self.keys;
        let mut invocation = RELEASE.prepare_invoke();
        invocation
            .key(&keys.ids)
            .key(&keys.clients)
            .key(&keys.clock);
        if let Some(queue) = queue {
            invocation.key(queue);
        }
        invocation
            .arg(self.client)
            .arg(self.id.encode())
            .arg(if self.live_only { "1" } else { "" })
            .arg(self.clock.0)
            .arg(self.clock.1)
            .arg(keys.wake.name())
            .arg(keys.wake.command())
            .arg(self.waker);
        invocation
    }
}
