//! Wake-ups instead of polls (issue 27): a waiter for a busy lock is told
//! when it frees, instead of finding out at its next retry.
//!
//! # The channel
//!
//! Whoever frees the lock publishes an empty message on the lock's wake
//! channel, `NAMESPACE:wake:KEY`, named like the fencing counter
//! ([`crate::base::keys::companion_key`]): on Redis Cluster it carries the
//! key's hash tag (`ns:wake:{deploy}`), so that it maps to the key's slot
//! and the release script may `SPUBLISH` on it (sharded pub/sub); elsewhere
//! it is a plain `PUBLISH`. The message is sent by the release scripts
//! themselves (release.lua, withdraw.lua, semaphore_release.lua, which also
//! serves shared holders and a writer's mark): atomic with the release, so
//! a waiter that hears it and tries again cannot find the freed lock still
//! held. The scripts publish with `pcall`: a user whose ACL does not allow
//! the channel still frees the lock, and its waiters poll.
//!
//! # The waiter
//!
//! A waiter subscribes after its first refused attempt, on every master it
//! uses (any message wakes it), and then tries again at once: the
//! subscription is in place *before* that attempt, so a release between a
//! failed attempt and the wait after it cannot be missed. It then waits for
//! a message or for its usual pause (50–250 ms), whichever comes first: the
//! pause stays as the fallback poll, so a lost message (a key deleted by
//! hand, an expiry, a holder killed with SIGKILL, a failover, a network
//! blip on the pub/sub connection) costs at most that pause, as before.
//! A subscription is a connection of its own (a subscribed connection can
//! send nothing else), dialed with the lock's URL, TLS and credentials, and
//! closed when the lock is taken or the wait ends.
//!
//! Pub/sub is never a reason to fail: if subscribing fails on a master (an
//! ACL without the channel, a server that refuses, a timeout), that master
//! is simply not listened to; with none listened to, the waiter polls as it
//! always did. Through Sentinel the subscription goes to the master the
//! sentinels name at that moment (after a failover it may hear nothing:
//! the poll covers it). A Cluster is not subscribed to yet: its releases
//! publish, its waiters poll (see docs/lock.md).
//!
//! # Thundering herd
//!
//! Every waiter is woken (Redis delivers a message to every subscriber); each
//! then waits a random 0–[`WAKE_SPREAD`] before its attempt so that they do
//! not all hit the server in the same millisecond. One of them gets the
//! lock; the others are refused and wait again. With a handful of waiters
//! that costs a handful of scripts per release, which is what polling cost
//! every 150 ms anyway; a queue that wakes only the next waiter would need
//! a list of waiters on the server, and would stall whenever the woken one
//! had died.

use crate::base::keys::companion_key;
use crate::base::random::random_below;
use crate::error::Result;
use crate::store::Node;
use futures_util::StreamExt;
use futures_util::stream::SelectAll;
use redis::aio::{PubSubSink, PubSubStream};
use std::time::Duration;

/// The most a woken waiter waits before its attempt, so that a crowd of
/// waiters woken by one release does not try in the same millisecond.
pub const WAKE_SPREAD: Duration = Duration::from_millis(5);

/// The wake channel of one lock, and how to publish on it.
#[derive(Clone, Debug)]
pub(crate) struct Channel {
    name: String,
    /// Redis Cluster: sharded pub/sub (`SPUBLISH`).
    sharded: bool,
}

impl Channel {
    /// The channel of the lock at `key`, in `namespace`.
    pub(crate) fn new(namespace: &str, key: &str, cluster: bool) -> Result<Channel> {
        Ok(Channel {
            name: companion_key(&format!("{namespace}:wake"), key, cluster)?,
            sharded: cluster,
        })
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// What the release scripts publish with (their ARGV).
    pub(crate) fn command(&self) -> &'static str {
        if self.sharded { "spublish" } else { "publish" }
    }
}

/// A waiter's subscriptions to the wake channel, on every master it could
/// subscribe on.
#[derive(Default)]
pub(crate) enum Subscription {
    /// Not subscribed (no attempt refused yet, or the lock is held).
    #[default]
    None,
    /// Listening: any message on any master wakes. The sinks are kept so
    /// that the connections stay open; dropping this closes them.
    Listening {
        messages: SelectAll<PubSubStream>,
        _sinks: Vec<PubSubSink>,
    },
    /// Subscribing failed everywhere, or every connection closed: poll.
    Polling,
}

/// A clone of a [`super::Locker`] (a keeper's, a held lock's) does not
/// share the waiter's connections: it starts unsubscribed.
impl Clone for Subscription {
    fn clone(&self) -> Self {
        Subscription::None
    }
}

impl Subscription {
    pub(crate) fn is_none(&self) -> bool {
        matches!(self, Subscription::None)
    }

    /// Subscribes to `channel` on every node at once, each bounded by its
    /// connect timeout. Never fails: a node that cannot subscribe is left
    /// out, and with none the waiter polls.
    pub(crate) async fn subscribe(nodes: &mut [Node], channel: &Channel) -> Subscription {
        if channel.sharded {
            // SSUBSCRIBE goes to the slot's master, which redis-rs's async
            // PubSub cannot route: Cluster waiters poll.
            return Subscription::Polling;
        }
        let tries = nodes
            .iter_mut()
            .map(|node| async { node.store().subscribe(channel.name()).await });
        let mut messages = SelectAll::new();
        let mut sinks = Vec::new();
        for result in futures_util::future::join_all(tries).await {
            if let Some(Ok(pubsub)) = result {
                let (sink, stream) = pubsub.split();
                sinks.push(sink);
                messages.push(stream);
            }
        }
        if sinks.is_empty() {
            Subscription::Polling
        } else {
            Subscription::Listening {
                messages,
                _sinks: sinks,
            }
        }
    }

    /// Resolves when a message says the lock may have freed, after the
    /// random spread; never when not listening (the caller's poll pause
    /// ends the wait then).
    pub(crate) async fn woken(&mut self) {
        let Subscription::Listening { messages, .. } = self else {
            return std::future::pending().await;
        };
        if messages.next().await.is_none() {
            // Every connection closed: poll from now on.
            *self = Subscription::Polling;
            return std::future::pending().await;
        }
        tokio::time::sleep(random_below(WAKE_SPREAD)).await;
    }
}
