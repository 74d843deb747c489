//! The client of one named lock: its options, the checks that refuse
//! nonsense before any node is asked, and the state a [`Locker`] keeps
//! between rounds. The rounds themselves are `impl Locker` blocks in the
//! files of their step (`acquire.rs`, `extend.rs`, `release.rs`,
//! `info.rs`), which read this state and keep none of their own.

use super::kind::Kind;
use super::leftovers::Leftovers;
use super::script;
use super::token::Token;
use crate::base::setting::Setting;
use crate::claim::{Channel, WaitOptions, Wakeups};
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

/// The client of one named lock on its masters. Cheap to clone: clones share
/// the connections.
#[derive(Clone)]
pub struct Locker {
    pub(super) quorum: Quorum,
    pub(super) name: String,
    pub(super) key: String,
    pub(super) kind: Kind,
    pub(super) ttl: Duration,
    pub(super) fencing: MajoritySequence,
    /// The token of the attempt in flight, for
    /// [`crate::claim::Claimant::undo_interrupted`].
    pub(super) attempt_token: Option<Token>,
    /// While an exclusive holder waits: the mark its attempts leave among
    /// shared holders so that no new one is admitted before it (one mark
    /// for every attempt, since attempts have tokens of their own).
    pub(super) waiting_mark: Option<String>,
    /// An attempt saw a master without the fencing counter: the
    /// sequence's heal pass (seq/heal.rs) runs when the lock is released,
    /// where it costs the holder nothing of its validity.
    pub(super) heal_pending: bool,
    /// Failed attempts' tokens to release again (`release.rs`).
    pub(super) leftovers: Leftovers,
    /// The channel its releases publish on, and while it waits its
    /// subscriptions to it (claim/wake.rs).
    pub(super) wakeups: Wakeups,
    /// The pause between two attempts (the fallback poll).
    pub(super) pause: (Duration, Duration),
}

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
    pub(super) fn what(&self) -> String {
        self.kind.describe(&self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
