//! Wake-ups instead of polls: a waiter for a busy claim (a lock, a worker
//! id of a full pool) is told when it may have been freed, instead of
//! finding out at its next retry.
//!
//! Whoever frees the claim publishes on its wake channel,
//! `NAMESPACE:wake:KEY` ([`Channel`], named with the key's hash tag through
//! [`crate::base::keys::companion_key`], so that on a Cluster it maps to
//! the key's slot and `SPUBLISH` keeps the message on that shard). The
//! freeing scripts themselves publish (the lock's release.lua, undo.lua,
//! semaphore_release.lua; the pool's release.lua), atomically with the
//! release, so that a waiter that hears it cannot find the claim still
//! held; they publish under `pcall`, so that an ACL without the channel
//! still frees. What frees without a script of ours (an expiry, a key
//! deleted by hand) publishes nothing: that is what the fallback poll is
//! for, and why pub/sub is never a reason to fail.
//!
//! A waiter subscribes after its first refused attempt ([`Wakeups::arm`]),
//! on every master, and tries again at once: the subscription is in place
//! before that attempt, so a release in between cannot be missed. It then
//! waits for a message or its usual pause, whichever comes first. A
//! subscription is a connection of its own ([`crate::store::Listener`]),
//! closed when the wait ends; a master it cannot subscribe to is polled,
//! and a waiter whose every subscription closes subscribes again.
//!
//! Where a release frees room for one (a lock, a semaphore's place, an id),
//! it wakes one waiter, first come first served: waiters queue in a sorted
//! set beside the key ([`Channel::queue`]), each under a random place
//! scored by its arrival on its own wall clock (so that every master orders
//! them alike) and listening on `CHANNEL:PLACE` too. Attempts join and
//! leave the queue in their own script (wake.lua); the release pops places
//! until a `PUBLISH` says someone heard, so a waiter that has gone costs
//! nothing, and only an empty queue wakes everyone on `CHANNEL`. Redis's
//! subscriber table says who still waits, and the queue expires a few
//! pauses after its last join ([`Wakeups::waking_one`]'s `keep`): it needs
//! no cleaning. Where a release frees room
//! for many (a shared lock), everyone is woken, each after a random
//! 0–[`WAKE_SPREAD`]. `tests/wake_model` checks exhaustively that only a
//! woken waiter dying or stopped leaves a free claim to the poll.
//!
//! The design, with its Sentinel and Cluster cases: docs/lock.md,
//! "Waiting: wake-ups, with polls as the fallback".

use crate::base::keys::companion_key;
use crate::base::random::{random_below, random_hex};
use crate::error::Result;
use crate::store::{Listener, Store};
use crate::timing::wake::WAKE_SPREAD;
use futures_util::StreamExt;
use futures_util::stream::SelectAll;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

mod heard;
pub mod script;
use heard::{Wake, claim_channel, listen_all, majority_freed, woken_by};
pub use script::{Queued, Waking};

/// The Lua prelude of every script that frees what waiters wait for: its
/// `wake(channel, mode)` publishes the wake-up (wake.lua).
pub const WAKE_LUA: &str = include_str!("wake.lua");

/// The wake channel of one claim, how to publish on it, and its queue of
/// waiters.
#[derive(Clone, Debug)]
pub struct Channel {
    name: String,
    /// The key of the queue of waiters (a sorted set).
    queue: String,
    /// Whether the queue may be named: false once the server's ACL refused
    /// a script that named it (a user made from the rules of a yaraus
    /// without queues). Shared by every clone (a locker, the locks it
    /// holds), so that it is found out once.
    queue_allowed: Arc<AtomicBool>,
    /// Redis Cluster: sharded pub/sub (`SPUBLISH`).
    sharded: bool,
}

impl Channel {
    /// The channel and queue of the claim at `key` (a lock's key, a pool's
    /// ids), in `namespace`: `NS:wake:KEY` and `NS:queue:KEY`.
    pub fn new(namespace: &str, key: &str, cluster: bool) -> Result<Channel> {
        Ok(Channel {
            name: companion_key(&format!("{namespace}:wake"), key, cluster)?,
            queue: companion_key(&format!("{namespace}:queue"), key, cluster)?,
            queue_allowed: Arc::new(AtomicBool::new(true)),
            sharded: cluster,
        })
    }

    /// A channel and a queue named as they are (their hash tag, on a
    /// Cluster, already that of the key they wake for).
    pub fn named(name: String, queue: String, sharded: bool) -> Channel {
        Channel {
            name,
            queue,
            queue_allowed: Arc::new(AtomicBool::new(true)),
            sharded,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The queue's key: the release scripts pop it, the attempts join it.
    /// `None` once the server's ACL refused it ([`Channel::with_queue`]).
    pub fn queue(&self) -> Option<&str> {
        self.queue_allowed
            .load(Ordering::Relaxed)
            .then_some(self.queue.as_str())
    }

    /// A script that may name the queue: `build` makes it with the queue
    /// (when `wanted`, and while the queue may be named) and without it.
    /// The first is to run; the second ([`Unqueued::take`]) is the fallback
    /// for [`crate::store::Store::script_or`], taken when the server's ACL
    /// refuses the first (a user made from the rules of a yaraus without
    /// queues).
    pub fn with_queue<T>(
        &self,
        wanted: bool,
        build: impl Fn(Option<&str>) -> T,
    ) -> (T, Unqueued<'_, T>) {
        let queue = self.queue().filter(|_| wanted);
        let unqueued = Unqueued {
            channel: self,
            named: queue.is_some(),
            script: build(None),
        };
        (build(queue), unqueued)
    }

    /// What the freeing scripts publish with ([`Waking`]).
    pub fn command(&self) -> &'static str {
        if self.sharded { "spublish" } else { "publish" }
    }
}

/// The same script without the queue, for when the server's ACL refuses
/// the one that names it ([`Channel::with_queue`]).
pub struct Unqueued<'a, T> {
    channel: &'a Channel,
    named: bool,
    script: T,
}

impl<T> Unqueued<'_, T> {
    /// The script without the queue, after the one with it was refused:
    /// the queue is not named again, which is said once. A script that did
    /// not name the queue was refused for something else: no fallback.
    pub fn take(self) -> Option<T> {
        if !self.named {
            return None;
        }
        let channel = self.channel;
        if channel.queue_allowed.swap(false, Ordering::Relaxed) {
            log::warn!(
                "Redis denies this user the queue of waiters {}: a release now wakes every \
                 waiter, not the first one; give the user the rules that `yaraus acl-rules` \
                 prints for this command line",
                channel.queue
            );
        }
        Some(self.script)
    }
}

/// A waiter's place in a claim's queue, kept for one whole wait.
#[derive(Clone, Debug)]
struct Place {
    /// Random: its channel is `CHANNEL:MEMBER`.
    member: String,
    /// The waiter's wall clock (Unix µs: two waiters started one after the
    /// other never tie) when it started to wait: its score, the same on
    /// every master.
    arrival_us: u64,
}

/// Whether a release wakes the waiters, and which.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WakePolicy {
    /// One waiter, the first in the claim's queue, where a release frees
    /// one (a lock, a semaphore place, a worker id); every waiter where it
    /// frees many (a shared lock).
    #[default]
    Queue,
    /// Every waiter, by every release: no queue.
    All,
    /// None: the waiters only poll.
    Off,
}

/// A waiter's wake-ups: the channel, and while it waits its subscriptions.
pub struct Wakeups {
    channel: Channel,
    /// The other channels of the same claim, each with its queue: one per
    /// shard of a sharded pool, any of whose releases frees what the
    /// waiter waits for ([`also_on`](Self::also_on)).
    more: Vec<Channel>,
    /// How many masters it listens to (a majority of them wakes it alone).
    masters: usize,
    /// Wake-one: a waiter queues, for this long after its last attempt
    /// (`None`: it does not queue, and is woken with everyone).
    keep: Option<Duration>,
    /// Its place while it waits (wake-one only).
    place: Option<Place>,
    state: State,
    /// Whether a waiter subscribes at all ([`WakePolicy::Off`]: no).
    enabled: bool,
    /// Woken with every other waiter even where a release frees one
    /// ([`WakePolicy::All`]).
    all: bool,
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
            more: self.more.clone(),
            masters: 0,
            keep: self.keep,
            place: None,
            state: State::None,
            enabled: self.enabled,
            all: self.all,
            resubscribes: RESUBSCRIBES,
        }
    }
}

impl Wakeups {
    /// Wake-ups on `channel`, not subscribed yet, woken with every other
    /// waiter (a claim that a release may free for many); none at all
    /// under [`WakePolicy::Off`].
    pub fn new(channel: Channel, policy: WakePolicy) -> Wakeups {
        Wakeups {
            channel,
            more: Vec::new(),
            masters: 0,
            keep: None,
            place: None,
            state: State::None,
            enabled: policy != WakePolicy::Off,
            all: policy == WakePolicy::All,
            resubscribes: RESUBSCRIBES,
        }
    }

    /// Woken alone, from the claim's queue: for a claim a release frees for
    /// one (unless [`WakePolicy::All`]). `keep` is how long the queue
    /// outlives a waiter's last attempt: a few of its pauses, so that a
    /// live waiter keeps it alive.
    pub fn waking_one(mut self, keep: Duration) -> Wakeups {
        if !self.all {
            self.keep = Some(keep);
        }
        self
    }

    /// Also woken by releases on `channels` (the other shards of a pool),
    /// each in its own slot on a Cluster: a waiter listens on each, and
    /// its attempts queue in the queue of each (the same place in all).
    pub fn also_on(mut self, channels: Vec<Channel>) -> Wakeups {
        self.more = channels;
        self
    }

    /// Whether an attempt carries a place now: only while listening, since
    /// a place is woken on its channel.
    pub fn queues(&self) -> bool {
        self.queued("").is_some()
    }

    /// The place an attempt carries in `queue` ([`Channel::with_queue`]
    /// names it), if it carries one ([`queues`](Self::queues)).
    pub fn queued<'a>(&'a self, queue: &'a str) -> Option<Queued<'a>> {
        match (&self.place, self.keep, &self.state) {
            (Some(place), Some(keep), State::Listening(_)) => Some(Queued {
                queue,
                arrival_us: place.arrival_us,
                keep,
                member: &place.member,
            }),
            _ => None,
        }
    }

    /// The waiter's own place, which its undos must not wake (`''`
    /// for none).
    pub fn waker_arg(&self) -> &str {
        self.place.as_ref().map_or("", |p| p.member.as_str())
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
        if self.keep.is_some() && self.place.is_none() {
            // Without randomness it cannot queue: it is woken with everyone.
            self.place = random_hex::<8>("a waiter's place")
                .ok()
                .map(|member| Place {
                    member,
                    // Only an order among waiters: a clock before 1970
                    // puts this one first, no more.
                    arrival_us: std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_micros() as u64),
                });
        }
        let stores: Vec<&Store> = stores.into_iter().collect();
        let (mut listening, mut masters) = listen_all(&stores, &self.groups(true)).await;
        if listening.is_empty() && self.place.is_some() {
            // A user made from the rules of a yaraus without queues may
            // listen on the claim's channel only: it does not queue then,
            // and is woken with everyone.
            (listening, masters) = listen_all(&stores, &self.groups(false)).await;
            self.place = None;
        }
        self.masters = masters;
        self.state = if listening.is_empty() {
            State::Polling
        } else {
            State::Listening(listening)
        };
        matches!(self.state, State::Listening(_))
    }

    /// The channels to listen on, by subscription: each claim channel with
    /// the waiter's own beside it (`CHANNEL:MEMBER`, with `own` and a
    /// place); on a Cluster one subscription per channel (each in its own
    /// slot), else all in one.
    fn groups(&self, own: bool) -> Vec<Vec<String>> {
        let member = self.place.as_ref().filter(|_| own).map(|p| &p.member);
        let per_channel = std::iter::once(&self.channel).chain(&self.more).map(|c| {
            let mut names = vec![c.name().to_string()];
            names.extend(member.map(|m| format!("{}:{m}", c.name())));
            names
        });
        if self.channel.sharded {
            per_channel.collect()
        } else {
            vec![per_channel.flatten().collect()]
        }
    }

    /// Closes the subscriptions (the claim is held, or the wait is over)
    /// and forgets the place: its waiter no longer listens, so a release
    /// that pops it drops it.
    pub fn disarm(&mut self) {
        self.state = State::None;
        self.place = None;
        self.resubscribes = RESUBSCRIBES;
    }

    /// Resolves when a message says the claim may have freed: at once for
    /// a message on its own channel, after the random spread for one to
    /// everyone; never when not listening (the caller's poll pause ends the
    /// wait then). A message to everyone that this waiter sent itself
    /// (undoing its own failed attempt) is not a wake-up.
    pub async fn woken(&mut self) {
        let own = self.waker_arg().as_bytes().to_vec();
        let needed = self.masters / 2 + 1;
        let names: Vec<String> = std::iter::once(&self.channel)
            .chain(&self.more)
            .map(|c| c.name().to_string())
            .collect();
        let State::Listening(messages) = &mut self.state else {
            return std::future::pending().await;
        };
        loop {
            match messages.next().await {
                Some(heard) => match woken_by(&heard, claim_channel(&names, &heard), &own) {
                    Wake::Alone => return majority_freed(messages, needed, &names, &own).await,
                    Wake::WithEveryone => break,
                    Wake::No => continue,
                },
                None => return self.closed().await,
            }
        }
        tokio::time::sleep(random_below(WAKE_SPREAD)).await;
    }

    /// Every connection closed (a restart, a failover, a killed client): a
    /// message may have been lost with them. Wake now, so that the caller
    /// tries again and, refused, subscribes again (through Sentinel, on the
    /// master named now) and tries once more; a server that keeps closing
    /// them is polled instead.
    async fn closed(&mut self) {
        if self.resubscribes > 0 {
            self.resubscribes -= 1;
            self.state = State::None;
            return;
        }
        self.state = State::Polling;
        std::future::pending().await
    }
}

#[cfg(test)]
mod tests;
