//! The wake-one model's events as the lock's and the semaphore's scripts
//! (wake.lua in front) and the waiters' subscriptions, and the server read
//! back onto the model's state (see `mod.rs`).

use super::listener::{Listener, Message};
use crate::conformance::{Nodes, Replay};
use std::time::Duration;
use yaraus::claim::wake::{Channel, Queued, Waking};
use yaraus::lock::script::{Acquire, FenceMode, Release, SemaphoreAcquire, SemaphoreRelease};
use yaraus_models::wake_model::model::{Event, Model, Phase, State, Wake, subscribed};

const NAMESPACE: &str = "yaraus";
const KEY: &str = "lock:resource";
const FENCE: &str = "yaraus:fencing:lock:resource";
/// Holders never expire on their own: a lapsed lease is the model's
/// `Expire`, made at its step.
const TTL_MS: u64 = 3_600_000;
/// The queue outlives every run: its lapse is the model's `Vanish`.
const KEEP: Duration = Duration::from_secs(3600);
/// A wall clock in µs: waiter w arrived `w` ms after waiter 0.
const FIRST_ARRIVAL_US: u64 = 1_700_000_000_000_000;

/// What a step's script answered.
#[derive(Debug, PartialEq)]
pub enum Answer {
    Taken,
    Refused,
    /// A release: whether it freed the holder's place, and the messages
    /// the step delivered, to whom.
    Released {
        freed: bool,
        heard: Vec<(usize, Message)>,
    },
    /// Anything else (an error, another reply): never expected.
    Unexpected(String),
}

/// The state the server holds, in the model's terms.
#[derive(Debug, PartialEq)]
pub struct Projection {
    /// The live holders' tokens, sorted.
    holders: Vec<String>,
    /// The queue's places and scores, in the order a release pops them.
    queue: Vec<(String, u64)>,
    /// Whether the queue lapses in time (an expiry of at most `KEEP`), so
    /// that the places of waiters that died go with it: true exactly when
    /// it holds a place.
    lapses: bool,
    /// Subscribers of the shared channel.
    shared: i64,
    /// Per waiter: subscribers of its own channel, messages it has not read.
    waiters: Vec<(i64, usize)>,
}

pub struct WakeReplay {
    model: Model,
    channel: Channel,
    /// Per waiter, its subscription while it has one.
    listeners: Vec<Option<Listener>>,
}

fn token(w: usize) -> String {
    format!("holder-{w}")
}

/// A waiter's place: random hex in the code; here in the reverse of the
/// arrival order, so that a queue ordered by place instead of by score
/// pops the wrong waiter.
fn member(w: usize) -> String {
    format!("{:016x}", u64::MAX - w as u64)
}

fn arrival(w: usize) -> u64 {
    FIRST_ARRIVAL_US + 1000 * w as u64
}

impl WakeReplay {
    pub fn new(model: Model) -> WakeReplay {
        let channel = Channel::new(NAMESPACE, KEY, false).expect("the wake channel");
        WakeReplay {
            model,
            channel,
            listeners: (0..model.n).map(|_| None).collect(),
        }
    }

    fn queue(&self) -> &str {
        self.channel.queue().expect("the queue is allowed")
    }

    /// Waking one, a waiter listens on `CHANNEL:MEMBER`; waking all, it
    /// has no place.
    fn own_channel(&self, w: usize) -> Option<String> {
        (self.model.wake != Wake::All).then(|| format!("{}:{}", self.channel.name(), member(w)))
    }

    /// Waiter w's attempt, with its place in the queue when it carries one
    /// (it listens, and wakes one) as `Wakeups::queued` gives it.
    fn attempt(&mut self, nodes: &mut Nodes, w: usize, with_place: bool) -> Answer {
        let (token, member) = (token(w), member(w));
        let queued = (with_place && self.model.wake != Wake::All).then(|| Queued {
            queue: self.queue(),
            arrival_us: arrival(w),
            keep: KEEP,
            member: &member,
        });
        let invocation = if self.model.cap == 1 {
            Acquire {
                key: KEY,
                fence_key: FENCE,
                token: &token,
                ttl_ms: TTL_MS,
                fence: FenceMode::Increment,
                mark: None,
                queued,
            }
            .invocation()
        } else {
            SemaphoreAcquire {
                key: KEY,
                fence_key: FENCE,
                token: &token,
                ttl_ms: TTL_MS,
                limit: u32::from(self.model.cap),
                queued,
            }
            .invocation()
        };
        let answer = match invocation.invoke::<Vec<redis::Value>>(nodes.conn(0)) {
            Ok(reply) => match reply.first() {
                Some(redis::Value::Int(1)) => Answer::Taken,
                Some(redis::Value::Int(0)) => Answer::Refused,
                _ => Answer::Unexpected(format!("{reply:?}")),
            },
            Err(e) => Answer::Unexpected(e.to_string()),
        };
        if answer == Answer::Taken {
            // Taking a place unsubscribes (`Wakeups::disarm`).
            self.close(nodes, w);
        }
        answer
    }

    /// Holder w's release: its place freed and the queue woken, with the
    /// waker a holder passes (none: it no longer has a place).
    fn release(&mut self, nodes: &mut Nodes, w: usize) -> Answer {
        let token = token(w);
        let waking = Waking {
            channel: &self.channel,
            queue: self.channel.queue(),
            waker: "",
        };
        let invocation = if self.model.cap == 1 {
            Release {
                key: KEY,
                fence_key: FENCE,
                token: &token,
                waking,
            }
            .invocation()
        } else {
            SemaphoreRelease {
                key: KEY,
                token: &token,
                waking,
            }
            .invocation()
        };
        // release.lua: {freed, counter lacking}; semaphore_release.lua:
        // freed while live.
        let freed = match invocation.invoke::<redis::Value>(nodes.conn(0)) {
            Ok(redis::Value::Array(reply)) => reply == [redis::Value::Int(1), redis::Value::Int(0)],
            Ok(redis::Value::Int(live)) => live == 1,
            reply => return Answer::Unexpected(format!("{reply:?}")),
        };
        let mut heard = Vec::new();
        for (v, listener) in self.listeners.iter_mut().enumerate() {
            if let Some(listener) = listener {
                let before = listener.unread.len();
                listener.catch_up();
                heard.extend(listener.unread.iter().skip(before).map(|m| (v, m.clone())));
            }
        }
        Answer::Released { freed, heard }
    }

    fn subscribe(&mut self, nodes: &mut Nodes, w: usize) {
        let own = self.own_channel(w);
        let mut channels = vec![self.channel.name()];
        channels.extend(own.as_deref());
        let listener = Listener::subscribe(nodes.server(0), &channels);
        assert!(self.listeners[w].replace(listener).is_none());
    }

    fn close(&mut self, nodes: &mut Nodes, w: usize) {
        if let Some(listener) = self.listeners[w].take() {
            listener.close(nodes.conn(0));
        }
    }

    /// Holder w's lease lapses: what its key holds for it is given an
    /// expiry in the past, as if the server's clock had passed it (the
    /// lock's key goes; the semaphore's entry stays until an attempt
    /// removes the expired ones, and no longer counts).
    fn expire(&mut self, nodes: &mut Nodes, w: usize) {
        let conn = nodes.conn(0);
        if self.model.cap == 1 {
            let _: i64 = redis::cmd("PEXPIREAT")
                .arg(KEY)
                .arg(1)
                .query(conn)
                .expect("PEXPIREAT");
        } else {
            let _: i64 = redis::cmd("ZADD")
                .arg(KEY)
                .arg("XX")
                .arg(1)
                .arg(token(w))
                .query(conn)
                .expect("ZADD XX");
        }
    }

    /// The live holders' tokens, sorted, from the key as read (`GET`, or
    /// the semaphore's `ZRANGE`) and the server's clock.
    fn holders(&self, key: redis::Value, (secs, micros): (u64, u64)) -> Vec<String> {
        let now_ms = (secs * 1000 + micros / 1000) as f64;
        let mut live: Vec<String> = if self.model.cap == 1 {
            let holder: Option<String> = redis::from_redis_value(key).expect("the lock's holder");
            holder.into_iter().collect()
        } else {
            let places: Vec<(String, f64)> =
                redis::from_redis_value(key).expect("the semaphore's places");
            places
                .into_iter()
                .filter(|&(_, expiry)| expiry > now_ms)
                .map(|(token, _)| token)
                .collect()
        };
        live.sort();
        live
    }
}

impl Replay for WakeReplay {
    type Model = Model;
    type Answer = Answer;
    type Projection = Projection;

    fn name(&self) -> String {
        format!(
            "wake ({})",
            yaraus_models::explorer::System::rules(&self.model)
        )
    }

    fn model(&self) -> &Model {
        &self.model
    }

    fn nodes(&self) -> usize {
        1
    }

    /// Nothing to write (no holder, no queue); the subscriptions of the
    /// previous run are closed (FLUSHALL leaves connections alone).
    fn setup(&mut self, nodes: &mut Nodes, _initial: &State) {
        for w in 0..self.listeners.len() {
            self.close(nodes, w);
        }
    }

    fn expected(&self, before: &State, e: Event, after: &State) -> Option<Answer> {
        let (Event::Step(w) | Event::Poll(w)) = e else {
            return None;
        };
        let w = w as usize;
        match before.waiters[w].phase {
            Phase::Refused => None,
            Phase::Holding => Some(Answer::Released {
                freed: true,
                heard: self.heard(before, after),
            }),
            _ if after.waiters[w].phase == Phase::Holding => Some(Answer::Taken),
            _ => Some(Answer::Refused),
        }
    }

    fn perform(&mut self, nodes: &mut Nodes, before: &State, e: Event) -> Option<Answer> {
        match e {
            Event::Step(w) => {
                let w = w as usize;
                match before.waiters[w].phase {
                    Phase::Fresh => Some(self.attempt(nodes, w, false)),
                    Phase::Refused => {
                        self.subscribe(nodes, w);
                        None
                    }
                    Phase::Armed => Some(self.attempt(nodes, w, true)),
                    Phase::Waiting => {
                        let listener = self.listeners[w]
                            .as_mut()
                            .expect("a waiting waiter listens");
                        listener.unread.pop_front().expect("a message to read");
                        Some(self.attempt(nodes, w, true))
                    }
                    Phase::Holding => Some(self.release(nodes, w)),
                    phase => panic!("the model steps w{w} in phase {phase:?}"),
                }
            }
            Event::Poll(w) => Some(self.attempt(nodes, w as usize, true)),
            Event::Die(w) | Event::Drop(w) => {
                self.close(nodes, w as usize);
                None
            }
            Event::Expire(w) => {
                self.expire(nodes, w as usize);
                None
            }
            Event::Vanish => {
                let _: i64 = redis::cmd("DEL")
                    .arg(self.queue())
                    .query(nodes.conn(0))
                    .expect("DEL");
                None
            }
            // SIGSTOP: the connection stays subscribed, and buffers.
            Event::Stop(_) => None,
        }
    }

    fn project(&self, s: &State) -> Projection {
        let listens = |w: usize| subscribed(s.waiters[w].phase);
        let mut holders: Vec<String> = (0..self.model.n)
            .filter(|&w| s.waiters[w].phase == Phase::Holding)
            .map(token)
            .collect();
        holders.sort();
        Projection {
            holders,
            queue: (0..self.model.n)
                .filter(|w| s.queue & (1 << w) != 0)
                .map(|w| (member(w), arrival(w)))
                .collect(),
            lapses: s.queue != 0,
            shared: (0..self.model.n).filter(|&w| listens(w)).count() as i64,
            waiters: (0..self.model.n)
                .map(|w| {
                    let own = i64::from(listens(w) && self.model.wake != Wake::All);
                    let unread = if listens(w) { s.waiters[w].pending } else { 0 };
                    (own, usize::from(unread))
                })
                .collect(),
        }
    }

    /// One round trip for the keys, while the subscribers' `pong`s are on
    /// their way.
    fn observe(&mut self, nodes: &mut Nodes) -> Projection {
        for listener in self.listeners.iter_mut().flatten() {
            listener.ping();
        }
        let own: Vec<String> = (0..self.model.n)
            .map(|w| format!("{}:{}", self.channel.name(), member(w)))
            .collect();
        let mut pipe = redis::pipe();
        pipe.cmd("TIME");
        if self.model.cap == 1 {
            pipe.cmd("GET").arg(KEY);
        } else {
            pipe.cmd("ZRANGE").arg(KEY).arg(0).arg(-1).arg("WITHSCORES");
        }
        pipe.cmd("ZRANGE")
            .arg(self.queue())
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES");
        pipe.cmd("PTTL").arg(self.queue());
        pipe.cmd("PUBSUB")
            .arg("NUMSUB")
            .arg(self.channel.name())
            .arg(&own);
        type Read = (
            (u64, u64),
            redis::Value,
            Vec<(String, f64)>,
            i64,
            Vec<(String, i64)>,
        );
        let (time, key, places, pttl, counts): Read = pipe.query(nodes.conn(0)).expect("the keys");
        for listener in self.listeners.iter_mut().flatten() {
            listener.read_to_pong();
        }
        Projection {
            holders: self.holders(key, time),
            queue: places.into_iter().map(|(m, s)| (m, s as u64)).collect(),
            lapses: pttl > 0 && pttl <= KEEP.as_millis() as i64,
            shared: counts[0].1,
            waiters: (0..self.model.n)
                .map(|w| {
                    let unread = self.listeners[w].as_ref().map_or(0, |l| l.unread.len());
                    (counts[w + 1].1, unread)
                })
                .collect(),
        }
    }
}

impl WakeReplay {
    /// The messages a release delivers in the model: one more unread for
    /// each waiter it reached, on that waiter's own channel when the
    /// release found a listener queued (waking one), else on the shared
    /// channel; the payload is the waker, none for a holder.
    fn heard(&self, before: &State, after: &State) -> Vec<(usize, Message)> {
        let alone = self.model.wake != Wake::All && self.model.listener_queued(before);
        (0..self.model.n)
            .filter(|&w| after.waiters[w].pending > before.waiters[w].pending)
            .map(|w| {
                let channel = match self.own_channel(w) {
                    Some(own) if alone => own,
                    _ => self.channel.name().to_string(),
                };
                let payload = String::new();
                (w, Message { channel, payload })
            })
            .collect()
    }
}
