//! Distributed locks over one or N independent Redis masters, with fencing
//! tokens: what `yaraus lock` holds while its command runs.
//!
//! # The key, and who else uses it
//!
//! The lock is the key `NAME` (after an optional prefix) holding a random
//! token, set with `SET NX PX ttl`, extended and deleted only by the holder of
//! that token (compare-and-pexpire, compare-and-delete). That is the
//! convention of redis-py's `Lock`, redsync and node-redlock, so a yaraus lock
//! and theirs on the same name exclude each other, and yaraus never deletes a
//! key whose value is not its own token.
//!
//! # One master, several masters
//!
//! With one master every step is one Lua script. With N masters it is Redlock
//! (antirez, redis.io/topics/distlock): the acquire script goes to every
//! master at once, each request bounded by a timeout much smaller than the
//! ttl; the lock is ours only with a majority and with validity left, where
//! validity = ttl − elapsed − drift (drift = 1% of the ttl + 2 ms, as in
//! redsync), elapsed being measured on the monotonic clock from *before* the
//! first request. A failed attempt releases every node (even those that did
//! not answer) and is retried after a random pause. One code path serves
//! both: a single master is a quorum of one.
//!
//! Two rules go beyond the Redlock text, each for a bug seen in the wild:
//!
//! * an acquisition counts only if at least half the ttl is left once the
//!   lock *and its fencing token* are in hand (node-redlock #296 handed out
//!   locks whose validity had already run out; half the ttl leaves room for
//!   the first extension, due at a third);
//! * an extension that finds our key *missing* on a node (the node restarted
//!   empty) sets our token there again, so that the majority heals instead of
//!   wearing away one restart at a time (redsync #147/#149). Such a node does
//!   not count towards that round's majority; a token gone from a majority
//!   means the lock is lost.
//!
//! # Fencing tokens
//!
//! Every acquisition yields a number greater than every number handed out
//! before for that name, for the child to pass to the resource it protects
//! (Kleppmann, "How to do distributed locking"). The counter lives at
//! `NAMESPACE:fencing:KEY` and never expires.
//!
//! * One master: `INCR` in the same script as the `SET`.
//! * N masters: the majority sequence of [`crate::seq`]. Its vote
//!   (set-if-less-than) rides in the acquire script, proposing one more than
//!   the highest counter this process has seen but at least the wall clock in
//!   microseconds (so that a fresh process usually wins at once: tokens with
//!   several masters are clock-like numbers, not 1, 2, 3), and is applied
//!   only on nodes where the `SET` succeeded. If a majority of those accepted, that number
//!   is the token and the lock cost one round trip; otherwise a plain round of
//!   the sequence follows, once the lock is held.
//!
//!   Why a vote tied to the `SET` is safe: let H0 hold the lock before H. Their
//!   accepting majorities share a node x, where both took the lock. H's key
//!   at x lived from H's `SET` until after H's validity ended, so H0, which
//!   held and voted before H, got x (and wrote its token T0 there) before H
//!   did; H's proposal was accepted at x only if it was above T0.
//!
//! A token is handed out only if the lock is still valid after the token was
//! obtained; the nodes must then keep their counters across a crash, which is
//! why N masters require `appendfsync always` (see [`crate::seq`]).
//!
//! # Semaphores
//!
//! `limit > 1` admits up to that many holders: a sorted set of tokens scored
//! by their expiry (server time), on one master only. Quorums do not compose
//! for counts: with 3 masters and a limit of 2, holders on nodes {1,2}, {2,3}
//! and {1,3} each have a majority while no node counts more than two.
//!
//! # Shared holders (`yaraus lock -s`, flock's shared lock)
//!
//! A shared place is a member of the same kind of sorted set, with no limit,
//! on one master. The exclusive lock of the same name (a string) and shared
//! places exclude each other because they are one key, changed only by
//! scripts: an exclusive holder sets the string only where the key is
//! missing or holds no live shared place; a shared holder joins only where
//! the key is not a string. Expiry is the server's for both (PX, and the
//! scores compared with TIME), so a place that expired on the server is one
//! its holder's deadline (measured from before the request) has already
//! passed.
//!
//! Writers go first: an exclusive holder that finds shared holders and will
//! wait leaves a mark among them (renewed by each attempt, gone after
//! `writer_mark_ttl` (kind.rs) without one), and no new shared holder is
//! admitted while a mark is live, so overlapping readers cannot starve a
//! writer; the writer takes the lock when the last shared holder leaves.
//! Readers can wait behind a stream of writers, as with most writer-first
//! locks. Every acquisition, shared or not, counts the same fencing counter
//! (INCR), so tokens increase across both.

mod acquire;
mod extend;
mod held;
mod info;
mod kind;
mod release;
mod script;
mod tally;
mod token;

pub use held::HeldLock;
pub use info::{LockInfo, NodeInfo, SemaphoreHolder};
use kind::Kind;
pub use release::{ReleaseVerdict, Released};
pub use token::{Holder, Token, describe_holder, host};

use crate::base::setting::Setting;
use crate::claim::{Attempt as ClaimAttempt, Channel, WaitOptions, Wakeups};
use crate::error::{Error, Result};
use crate::seq::MajoritySequence;
use crate::store::{Quorum, Target};
use crate::timing::lock::RETRY_PAUSE;
use crate::timing::wake::waiter_keep;
use std::time::Duration;

/// How a [`Locker`] takes its lock.
#[derive(Clone, Debug)]
pub struct LockOptions {
    /// Lock length written at each acquire and extension.
    pub ttl: Duration,
    /// Put in front of the name to make the key (default: nothing).
    pub prefix: String,
    /// Namespace of yaraus's own keys (the fencing counter).
    pub namespace: String,
    /// Holders admitted at once: 1 for a lock, more for a semaphore (one master only).
    pub limit: u32,
    /// Take a shared place (a reader's), which excludes only exclusive
    /// holders of the name (one master only; `limit` must be 1).
    pub shared: bool,
    /// Bound on one request to one master; much smaller than the ttl.
    pub request_timeout: Duration,
    /// With several masters, refuse nodes that do not fsync every write
    /// (the fencing sequence needs it). Ignored with one master.
    pub require_fsync: bool,
    /// How a waiter polls and is woken (the default: the lock's queue, and
    /// [`RETRY_PAUSE`] between attempts).
    pub wait: WaitOptions,
}

impl LockOptions {
    /// Defaults for a lock of `ttl` whose own keys (the fencing counter,
    /// the wake channel, the queue) are in `namespace`: no prefix, a plain
    /// lock, a request timeout of a tenth of the ttl (at most 2 s), fsync
    /// required. [`crate::context::Context::lock_options`] makes them from
    /// a context.
    pub fn new(namespace: impl Into<String>, ttl: Duration) -> LockOptions {
        LockOptions {
            ttl,
            prefix: String::new(),
            namespace: namespace.into(),
            limit: 1,
            shared: false,
            request_timeout: crate::timing::Timeouts::default().lock_request(ttl),
            require_fsync: true,
            wait: WaitOptions::default(),
        }
    }
}

/// A node that refused the lock because someone holds it: what it said.
#[derive(Clone, Debug)]
pub(crate) struct Busy {
    /// The node's URL, password hidden.
    pub node: String,
    /// The holder's token (a lock), or the first holder's (a semaphore).
    pub holder: Vec<u8>,
    /// Time left before that holder expires; -1 when it never does.
    pub ttl_ms: i64,
    /// How many hold a semaphore.
    pub holders: Option<i64>,
}

/// The fencing token to vote for with several masters: one more than the
/// highest counter this process has seen, and at least the wall clock in
/// microseconds since the epoch. The clock is what lets a process that has
/// seen nothing yet (every `yaraus lock` is one) settle its token in the
/// acquire round: the previous holder voted for its own clock, which, give or
/// take clock skew, is behind ours. It is only a guess: safety rests on the
/// set-if-less-than vote, and a guess that loses (a clock behind, or a
/// counter raised some other way) costs one more round, as it did before.
fn proposal(seen: Option<u64>) -> u64 {
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
    seen.unwrap_or(1).max(clock)
}

/// The client of one named lock on its masters. Cheap to clone: clones share
/// the connections.
#[derive(Clone)]
pub struct Locker {
    quorum: Quorum,
    name: String,
    key: String,
    kind: Kind,
    ttl: Duration,
    fencing: MajoritySequence,
    /// The token of the attempt in flight, for [`Claimant::undo_interrupted`].
    attempt_token: Option<Token>,
    /// While an exclusive holder waits: the mark its attempts leave among
    /// shared holders so that no new one is admitted before it (one mark
    /// for every attempt, since attempts have tokens of their own).
    waiting_mark: Option<String>,
    /// An attempt saw a master without the fencing counter: the
    /// sequence's heal pass (seq/heal.rs) runs when the lock is released,
    /// where it costs the holder nothing of its validity.
    heal_pending: bool,
    /// Failed attempts' tokens to release again (`release.rs`).
    leftovers: release::Leftovers,
    /// The channel its releases publish on, and while it waits its
    /// subscriptions to it (claim/wake.rs).
    wakeups: Wakeups,
    /// The pause between two attempts (the fallback poll).
    pause: (Duration, Duration),
}

/// The outcome of one attempt at a lock.
pub type Attempt = ClaimAttempt<HeldLock>;

impl Locker {
    /// The lock `name` on `targets` (one master, or N independent masters).
    pub fn new(targets: &[Target], name: &str, options: LockOptions) -> Result<Locker> {
        if name.is_empty() {
            return Err(Error::Usage("the lock name must not be empty".into()));
        }
        let ttl = crate::timing::lock::check_ttl(options.ttl)?;
        if options.request_timeout.is_zero() {
            return Err(Error::Usage(
                "the request timeout must be more than zero".into(),
            ));
        }
        if options.limit == 0 {
            return Err(Error::Usage(format!(
                "{} 0 would admit nobody; use 1 for a lock",
                Setting::Limit
            )));
        }
        if options.limit > 1 && targets.len() > 1 {
            return Err(Error::Usage(format!(
                "{limit} {} needs exactly one Redis master (with its replicas), not {}: counts do \
                 not add up over a quorum (with 3 masters and {limit} 2, holders on nodes {{1,2}}, \
                 {{2,3}} and {{1,3}} each have a majority while no node counts more than 2)",
                options.limit,
                targets.len(),
                limit = Setting::Limit
            )));
        }
        if options.shared && options.limit > 1 {
            return Err(Error::Usage(format!(
                "{} is a semaphore: it cannot also be shared (-s); use one or the other",
                Setting::Limit
            )));
        }
        if options.shared && targets.len() > 1 {
            return Err(Error::Usage(format!(
                "a shared lock (-s) needs exactly one Redis master (with its replicas), not {}: \
                 shared holders are not implemented over a quorum",
                targets.len()
            )));
        }
        if options.namespace.is_empty() {
            return Err(Error::Usage("the namespace must not be empty".into()));
        }
        let mut quorum = Quorum::new(
            targets,
            options.request_timeout,
            options.require_fsync && targets.len() > 1,
        )?;
        if targets.len() > 1 {
            // One master waits for its only node: nothing straggles there,
            // and its first script costs no extra round trip.
            quorum.preload(&script::quorum_scripts());
        }
        let key = format!("{}{name}", options.prefix);
        let cluster = targets.iter().any(Target::is_cluster);
        let fencing = MajoritySequence::new(crate::base::keys::companion_key(
            &format!("{}:fencing", options.namespace),
            &key,
            cluster,
        )?);
        let wake_channel = Channel::new(&options.namespace, &key, cluster)?;
        let kind = Kind::new(options.limit, options.shared);
        let pause = options.wait.pause(RETRY_PAUSE);
        let keep = waiter_keep(pause.1, quorum.round_timeout());
        let wakeups = kind.wakeups(wake_channel, keep, options.wait.wakeups);
        Ok(Locker {
            quorum,
            name: name.to_string(),
            kind,
            key,
            ttl,
            fencing,
            heal_pending: false,
            attempt_token: None,
            waiting_mark: None,
            leftovers: Default::default(),
            wakeups,
            pause,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Redis key: prefix + name.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The channel its releases publish on, which its waiters subscribe to.
    pub fn wake_channel(&self) -> &str {
        self.wakeups.channel().name()
    }

    /// The key of the fencing counter.
    pub fn fencing_key(&self) -> &str {
        self.fencing.key()
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    pub fn masters(&self) -> usize {
        self.quorum.len()
    }

    pub fn majority(&self) -> usize {
        self.quorum.majority()
    }

    /// The bound on one node's part of a round (for release timeouts).
    pub fn round_timeout(&self) -> Duration {
        self.quorum.round_timeout()
    }

    /// What to call the thing in messages.
    fn what(&self) -> String {
        self.kind.describe(&self.name)
    }

    /// What every master knows about the lock now.
    pub async fn inspect(&mut self) -> LockInfo {
        info::inspect(self).await
    }
}

/// A duration as whole milliseconds, for `PX` (at least 1).
fn millis_arg(d: Duration) -> u64 {
    (d.as_millis() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_verdicts_follow_the_quorum_arithmetic() {
        let r = |freed, answered| Released {
            freed,
            answered,
            masters: 3,
            problems: Vec::new(),
        };
        assert_eq!(r(2, 3).verdict(2), ReleaseVerdict::Freed);
        assert_eq!(r(1, 2).verdict(2), ReleaseVerdict::Unknown { silent: 1 });
        assert_eq!(r(0, 1).verdict(2), ReleaseVerdict::Unknown { silent: 2 });
        assert_eq!(r(1, 3).verdict(2), ReleaseVerdict::NotHeld);
        assert_eq!(r(0, 3).verdict(2), ReleaseVerdict::NotHeld);
    }

    fn target() -> Vec<Target> {
        vec![Target::parse("redis://127.0.0.1:1/0").unwrap()]
    }

    fn thirty_seconds() -> LockOptions {
        LockOptions::new("yaraus", Duration::from_secs(30))
    }

    #[test]
    fn the_key_is_the_name_unless_prefixed() {
        let locker = Locker::new(&target(), "deploy", thirty_seconds()).unwrap();
        assert_eq!(locker.key(), "deploy");
        assert_eq!(locker.fencing_key(), "yaraus:fencing:deploy");
        assert_eq!(locker.wake_channel(), "yaraus:wake:deploy");
        let mut options = thirty_seconds();
        options.prefix = "locks:".into();
        let locker = Locker::new(&target(), "deploy", options).unwrap();
        assert_eq!(locker.key(), "locks:deploy");
    }

    #[test]
    fn nonsense_is_a_usage_error() {
        let usage = |name: &str, options: LockOptions, targets: &[Target]| {
            matches!(Locker::new(targets, name, options), Err(Error::Usage(_)))
        };
        let ok = thirty_seconds();
        assert!(usage("", ok.clone(), &target()));
        assert!(usage(
            "x",
            LockOptions::new("yaraus", Duration::from_millis(5)),
            &target()
        ));
        assert!(usage(
            "x",
            LockOptions::new("yaraus", Duration::from_secs(400 * 24 * 3600)),
            &target()
        ));
        let three: Vec<Target> = (1..=3)
            .map(|p| Target::parse(&format!("redis://127.0.0.1:{p}/0")).unwrap())
            .collect();
        let mut semaphore = ok.clone();
        semaphore.limit = 2;
        assert!(usage("x", semaphore.clone(), &three));
        assert!(Locker::new(&target(), "x", semaphore).is_ok());
        let twice = vec![target()[0].clone(), target()[0].clone()];
        assert!(usage("x", ok, &twice));
    }
}
