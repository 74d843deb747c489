//! What differs between a lock, a shared place in a lock and a semaphore,
//! in one place.
//!
//! All are taken, extended and freed by the same rounds over the same
//! quorum (a semaphore and a shared place are refused more than one master,
//! see the module docs); they differ only in what the key holds, hence in
//! their scripts, their fencing and their messages. Every such difference is a method here,
//! so that the rounds in `acquire.rs`, `extend.rs` and `release.rs` read the
//! same for both.
//!
//! Why not a claim type of its own: a semaphore shares every step of the
//! Redlock lifecycle and the five modes of `yaraus lock`; a second type would
//! have copied the rounds to remove six `match`es.

use super::script::{
    Acquire, Extend, FenceMode, Release, SemaphoreAcquire, SemaphoreExtend, SemaphoreRelease,
    SharedAcquire, Undo,
};
use super::token::{Token, describe_holder};
use crate::claim::wake::{Channel, Queued, Waking};
use crate::claim::{WakePolicy, Wakeups};
use crate::timing::lock::RETRY_PAUSE;
use crate::timing::wake::waiter_keep;
use std::time::Duration;

/// A node that refused the lock because someone holds it: what it said.
#[derive(Clone, Debug)]
pub(super) struct Busy {
    /// The node's URL, password hidden.
    pub node: String,
    /// The holder's token (a lock), or the first holder's (a semaphore).
    pub holder: Vec<u8>,
    /// Time left before that holder expires; -1 when it never does.
    pub ttl_ms: i64,
    /// How many hold a semaphore.
    pub holders: Option<i64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// One holder: the key is a string, the holder's token.
    Lock,
    /// Up to `limit` holders: the key is a sorted set of tokens scored by
    /// their expiry.
    Semaphore { limit: u32 },
    /// One of any number of shared holders, excluded by a [`Kind::Lock`]
    /// holder of the same name: the sorted set of a semaphore, where a
    /// waiting exclusive holder also leaves its mark (shared.lua).
    Shared,
}

/// How long a waiting writer's mark holds new shared holders back when no
/// attempt of the writer renews it ([`waiter_keep`]): its attempts come
/// every pause plus a round.
pub(super) fn writer_mark_ttl(round_timeout: Duration) -> Duration {
    waiter_keep(RETRY_PAUSE.1, round_timeout)
}

/// The member a waiting writer leaves among shared holders (shared.lua).
pub(super) fn writer_mark(token: &Token) -> String {
    format!("{WRITER_WAITING}{}", token.as_str())
}

/// Takes a waiting writer's mark back (semaphore_release.lua, which leaves
/// anything but a sorted set alone), waking the next writer in the queue,
/// or else the shared holders it held back.
pub(super) fn withdraw_mark(
    key: &str,
    mark: &str,
    wake: &Channel,
    queue: Option<&str>,
) -> redis::ScriptInvocation<'static> {
    let waking = Waking {
        channel: wake,
        queue,
        waker: "",
    };
    SemaphoreRelease {
        key,
        token: mark,
        waking,
    }
    .invocation()
}

pub(super) const WRITER_WAITING: &str = "writer-waiting:";

/// What a waiting attempt leaves behind when it is refused.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Waiting<'a> {
    /// A waiting writer's mark among shared holders, and how long it
    /// lasts in ms (shared.lua).
    pub mark: Option<(&'a str, u64)>,
    /// Its place in the queue of waiters (claim/wake.rs); in the queue, a
    /// refused attempt also leaves the queue when it succeeds.
    pub queued: Option<Queued<'a>>,
}

impl Kind {
    pub(super) fn new(limit: u32, shared: bool) -> Kind {
        if shared {
            Kind::Shared
        } else if limit > 1 {
            Kind::Semaphore { limit }
        } else {
            Kind::Lock
        }
    }

    /// How its waiters are woken (claim/wake.rs); a waiter's place in the
    /// queue outlives its last attempt by `keep` ([`waiter_keep`], as a
    /// waiting writer's mark does).
    pub(super) fn wakeups(self, channel: Channel, keep: Duration, policy: WakePolicy) -> Wakeups {
        match self {
            // A writer's release admits every reader: they are all woken.
            Kind::Shared => Wakeups::new(channel, policy),
            Kind::Lock | Kind::Semaphore { .. } => Wakeups::new(channel, policy).waking_one(keep),
        }
    }

    /// What to call the thing in messages.
    pub(super) fn describe(self, name: &str) -> String {
        match self {
            Kind::Lock => format!("lock {name}"),
            Kind::Semaphore { limit } => format!("semaphore {name} (limit {limit})"),
            Kind::Shared => format!("shared lock {name}"),
        }
    }

    /// What the key must hold, for the message about a key of another type.
    pub(super) fn expected(self) -> &'static str {
        match self {
            Kind::Lock | Kind::Shared => {
                "a string (a lock's token) or a sorted set (its shared holders)"
            }
            Kind::Semaphore { .. } => "a sorted set (a semaphore)",
        }
    }

    /// How the fencing token is counted on `masters` masters; `guess`
    /// makes the vote when there are several.
    pub(super) fn fence_mode(self, masters: usize, guess: impl FnOnce() -> u64) -> FenceMode {
        match (self, masters) {
            (Kind::Semaphore { .. } | Kind::Shared, _) | (_, 1) => FenceMode::Increment,
            _ => FenceMode::Propose(guess()),
        }
    }

    /// The acquire script for one node (script.rs), with what a waiting
    /// attempt leaves behind ([`Waiting`]).
    pub(super) fn acquire(
        self,
        key: &str,
        fence_key: &str,
        token: &Token,
        ttl_ms: u64,
        mode: FenceMode,
        waiting: Waiting<'_>,
    ) -> redis::ScriptInvocation<'static> {
        let token = token.as_str();
        match self {
            Kind::Lock => Acquire {
                key,
                fence_key,
                token,
                ttl_ms,
                fence: mode,
                mark: waiting.mark,
                queued: waiting.queued,
            }
            .invocation(),
            Kind::Semaphore { limit } => SemaphoreAcquire {
                key,
                fence_key,
                token,
                ttl_ms,
                limit,
                queued: waiting.queued,
            }
            .invocation(),
            // A shared place is freed for many: its waiters do not queue.
            Kind::Shared => SharedAcquire {
                key,
                fence_key,
                token,
                ttl_ms,
            }
            .invocation(),
        }
    }

    /// The extend script for one node. A lock over several masters heals a
    /// node that lost its key (sets the token again); a semaphore never does.
    pub(super) fn extend(
        self,
        key: &str,
        token: &Token,
        ttl_ms: u64,
        masters: usize,
    ) -> redis::ScriptInvocation<'static> {
        let token = token.as_str();
        match self {
            Kind::Lock => Extend {
                key,
                token,
                ttl_ms,
                heal: masters > 1,
            }
            .invocation(),
            Kind::Semaphore { .. } | Kind::Shared => SemaphoreExtend {
                key,
                token,
                ttl_ms,
                shared: self == Kind::Shared,
            }
            .invocation(),
        }
    }

    /// The release script for one node; with `vote` (ours, and the counter
    /// it replaced on this node), the undo of a failed attempt: a lock
    /// also withdraws its fencing vote (undo.lua). Each script wakes the first waiter of
    /// the queue (if `waking` names it), or everyone, when it frees
    /// something, but never the waker itself (claim/wake.rs).
    pub(super) fn release(
        self,
        key: &str,
        fence_key: &str,
        token: &Token,
        vote: Option<(u64, u64)>,
        waking: Waking<'_>,
    ) -> redis::ScriptInvocation<'static> {
        let token = token.as_str();
        match (self, vote) {
            (Kind::Semaphore { .. } | Kind::Shared, _) => {
                SemaphoreRelease { key, token, waking }.invocation()
            }
            (Kind::Lock, None) => Release {
                key,
                fence_key,
                token,
                waking,
            }
            .invocation(),
            (Kind::Lock, Some((ours, before))) => Undo {
                key,
                fence_key,
                token,
                ours,
                before,
                waking,
            }
            .invocation(),
        }
    }

    /// Who holds it, from the first busy node's answer.
    pub(super) fn held_by(self, what: &str, busy: &Busy) -> String {
        let waiting_writer = String::from_utf8_lossy(&busy.holder)
            .strip_prefix(WRITER_WAITING)
            .map(|token| match Token::holder_of(token.as_bytes()) {
                Some(h) => format!("a writer (pid {} on {})", h.pid, h.host),
                None => "a writer".to_string(),
            });
        let shared = |n: i64| match n {
            1 => "1 shared holder".to_string(),
            n => format!("{n} shared holders"),
        };
        match (self, busy.holders, waiting_writer) {
            (Kind::Semaphore { limit }, holders, _) => format!(
                "every place of the {what} is taken ({} holders; the first runs out in {} unless \
                 its holder extends it)",
                holders.unwrap_or(limit as i64),
                shown(busy.ttl_ms)
            ),
            (Kind::Shared, Some(holders), Some(writer)) => format!(
                "{what} is busy: {writer} is waiting for its {} to leave, and writers go first",
                shared(holders)
            ),
            (_, Some(holders), _) => format!(
                "{what} is busy: held by {} (lock -s, or a semaphore of that name)",
                shared(holders)
            ),
            (Kind::Lock | Kind::Shared, None, _) => format!(
                "{what} is busy: held by {}{}",
                describe_holder(&busy.holder),
                expiry(busy.ttl_ms)
            ),
        }
    }
}

/// A remaining time in ms from a node, for messages.
fn shown(ttl_ms: i64) -> crate::base::duration::Shown {
    crate::base::duration::measured(Duration::from_millis(ttl_ms.max(0) as u64))
}

/// When a busy lock frees, as the end of a sentence.
fn expiry(ttl_ms: i64) -> String {
    match ttl_ms {
        -1 => " and has no expiry: it will never be freed by itself (delete the key if its \
               holder is gone)"
            .to_string(),
        // A holder extends its lock while it works: the ttl says only how
        // soon the lock frees if the holder is gone.
        ms if ms >= 0 => format!(", expires in {} unless its holder extends it", shown(ms)),
        _ => String::new(),
    }
}
