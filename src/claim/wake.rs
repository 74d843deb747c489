//! Wake-ups instead of polls (issue 27): a waiter for a busy claim (a
//! lock, a worker id of a full pool) is told when it may have freed,
//! instead of finding out at its next retry.
//!
//! # The channel
//!
//! Whoever frees the claim publishes an empty message on its wake channel,
//! `NAMESPACE:wake:KEY` ([`Channel`]), named like a lock's fencing counter
//! ([`crate::base::keys::companion_key`]): on Redis Cluster it carries the
//! key's hash tag (`ns:wake:{deploy}`, `ns:wake:{ns}:ids`), so that it maps
//! to the key's slot and the freeing script may `SPUBLISH` on it (sharded
//! pub/sub: the message goes to that shard only); elsewhere it is a plain
//! `PUBLISH`. The message is sent by the freeing scripts themselves (the
//! lock's release.lua, withdraw.lua, semaphore_release.lua; the pool's
//! release.lua): atomic with the release, so that a waiter that hears it
//! and tries again cannot find the claim still held. The scripts publish
//! with `pcall`: a user whose ACL does not allow the channel still frees,
//! and its waiters poll.
//!
//! What frees without a script of ours publishes nothing: a lease or a
//! lock that expires (its holder died or lost Redis: an expired id is
//! simply leased by the next acquire, which has nobody to tell), a key
//! deleted by hand, another tool's release. That is what the fallback poll
//! is for.
//!
//! # The waiter
//!
//! A waiter subscribes after its first refused attempt ([`Wakeups::arm`]),
//! on every master it uses (any message wakes it), and then tries again at
//! once: the subscription is in place *before* that attempt, so a release
//! between a failed attempt and the wait after it cannot be missed. It then
//! waits for a message or for its usual pause, whichever comes first: the
//! pause stays as the fallback poll, so a lost message (an expiry, a holder
//! killed with SIGKILL, a failover, a network blip on the pub/sub
//! connection) costs at most that pause, as before. A subscription is a
//! connection of its own ([`crate::store::Listener`]: `SUBSCRIBE`, or
//! `SSUBSCRIBE` on a Cluster), dialed with the claim's URL, TLS and
//! credentials, and closed when the claim is taken or the wait ends.
//!
//! Pub/sub is never a reason to fail: if subscribing fails on a master (an
//! ACL without the channel, a server that refuses, a timeout), that master
//! is simply not listened to; with none listened to, the waiter polls as it
//! always did. Through Sentinel the subscription goes to the master the
//! sentinels name at that moment. A waiter whose every subscription closes
//! (the master restarted or died in a failover, its client was killed)
//! tries again at once and subscribes again, through Sentinel on the master
//! named then (a few times per wait: then it polls). A master demoted to a
//! replica without closing its clients still hears the new master's
//! messages, which replication carries.
//!
//! # Thundering herd
//!
//! Every waiter is woken (Redis delivers a message to every subscriber); each
//! then waits a random 0–[`WAKE_SPREAD`] before its attempt so that they do
//! not all hit the server in the same millisecond. One of them gets the
//! claim; the others are refused and wait again. That costs one refused
//! script per waiter and release, which is what polling cost every pause
//! anyway (docs/benchmarks.md, "Wake-ups: the herd", measures it); a queue
//! that wakes only the next waiter would need a list of waiters on the
//! server, and would stall for a poll whenever the woken one had died.

use crate::base::keys::companion_key;
use crate::base::random::random_below;
use crate::error::Result;
use crate::store::{Listener, Store};
use futures_util::StreamExt;
use futures_util::stream::SelectAll;
use std::time::Duration;

/// The Lua prelude of every script that frees what waiters wait for: its
/// `wake(channel, mode)` publishes the wake-up (wake.lua).
pub const WAKE_LUA: &str = include_str!("wake.lua");

/// The most a woken waiter waits before its attempt, so that a crowd of
/// waiters woken by one release does not try in the same millisecond.
pub const WAKE_SPREAD: Duration = Duration::from_millis(5);

/// A test knob, not a setting: when set, a waiter does not subscribe and
/// only polls, as before wake-ups existed, so that the hand-over benchmark
/// (benches/handover.rs) compares both in one run with one binary.
pub const TEST_NO_WAKEUPS_ENV: &str = "YARAUS_TEST_NO_WAKEUPS";

/// The wake channel of one claim, and how to publish on it.
#[derive(Clone, Debug)]
pub struct Channel {
    name: String,
    /// Redis Cluster: sharded pub/sub (`SPUBLISH`).
    sharded: bool,
}

impl Channel {
    /// The channel of the claim at `key` (a lock's key, a pool's ids), in
    /// `namespace`.
    pub fn new(namespace: &str, key: &str, cluster: bool) -> Result<Channel> {
        Ok(Channel {
            name: companion_key(&format!("{namespace}:wake"), key, cluster)?,
            sharded: cluster,
        })
    }

    /// A channel named `name` as it is (its hash tag, on a Cluster,
    /// already that of the key it wakes for).
    pub fn named(name: String, sharded: bool) -> Channel {
        Channel { name, sharded }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the freeing scripts publish with (their ARGV).
    pub fn command(&self) -> &'static str {
        if self.sharded { "spublish" } else { "publish" }
    }
}

/// A waiter's wake-ups: the channel, and while it waits its subscriptions.
pub struct Wakeups {
    channel: Channel,
    state: State,
    /// Whether a waiter subscribes at all (off only by the test knob).
    enabled: bool,
    /// How many more times it subscribes again after losing every
    /// connection ([`RESUBSCRIBES`]).
    resubscribes: u8,
}

/// How many times one wait subscribes again after its connections closed:
/// enough for a failover or two, not a loop against a server that drops
/// every subscriber.
const RESUBSCRIBES: u8 = 3;

/// Where a waiter stands with its subscriptions.
#[derive(Default)]
enum State {
    /// Not subscribed (no attempt refused yet, or the claim is held).
    #[default]
    None,
    /// Listening: any message on any master wakes. Dropping this closes
    /// the connections.
    Listening(SelectAll<Listener>),
    /// Subscribing failed everywhere, or every connection closed: poll.
    Polling,
}

/// A clone (a keeper's, a held lock's) does not share the waiter's
/// connections: it starts unsubscribed.
impl Clone for Wakeups {
    fn clone(&self) -> Self {
        Wakeups {
            channel: self.channel.clone(),
            state: State::None,
            enabled: self.enabled,
            resubscribes: RESUBSCRIBES,
        }
    }
}

impl Wakeups {
    /// Wake-ups on `channel`, not subscribed yet.
    pub fn new(channel: Channel) -> Wakeups {
        Wakeups {
            channel,
            state: State::None,
            enabled: std::env::var_os(TEST_NO_WAKEUPS_ENV).is_none(),
            resubscribes: RESUBSCRIBES,
        }
    }

    pub fn channel(&self) -> &Channel {
        &self.channel
    }

    /// Subscribes on every store at once, each bounded by its connect
    /// timeout, unless subscribed (or given up) already. `true` only when
    /// it listens somewhere now, for the first time: the caller then tries
    /// again at once, since a release before the subscription would not be
    /// heard (a waiter that cannot listen does not retry for nothing).
    /// Never fails: a store that cannot subscribe is left out, and with
    /// none the waiter polls.
    pub async fn arm<'a>(&mut self, stores: impl IntoIterator<Item = &'a Store>) -> bool {
        if !self.enabled || !matches!(self.state, State::None) {
            return false;
        }
        let name = self.channel.name();
        let tries = stores.into_iter().map(|store| store.listen(name));
        let listening: SelectAll<Listener> = futures_util::future::join_all(tries)
            .await
            .into_iter()
            .filter_map(|r| r.ok())
            .collect();
        self.state = if listening.is_empty() {
            State::Polling
        } else {
            State::Listening(listening)
        };
        matches!(self.state, State::Listening(_))
    }

    /// Closes the subscriptions (the claim is held, or the wait is over).
    pub fn disarm(&mut self) {
        self.state = State::None;
        self.resubscribes = RESUBSCRIBES;
    }

    /// Resolves when a message says the claim may have freed, after the
    /// random spread; never when not listening (the caller's poll pause
    /// ends the wait then).
    pub async fn woken(&mut self) {
        let State::Listening(messages) = &mut self.state else {
            return std::future::pending().await;
        };
        if messages.next().await.is_none() {
            // Every connection closed (a restart, a failover, a killed
            // client): a message may have been lost with them. Wake now,
            // so that the caller tries again and, refused, subscribes again
            // (through Sentinel, on the master named now) and tries once
            // more; a server that keeps closing them is polled instead.
            if self.resubscribes > 0 {
                self.resubscribes -= 1;
                self.state = State::None;
                return;
            }
            self.state = State::Polling;
            return std::future::pending().await;
        }
        tokio::time::sleep(random_below(WAKE_SPREAD)).await;
    }
}
