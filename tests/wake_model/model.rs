//! The model: a waiter's phases, the queue, the attempt and release
//! scripts and the faults (`system.rs` is the model as the explorer sees
//! it: its events, checks and narration).

use crate::wake_model::explorer::say;

/// The most waiters a model has (the state's arrays); a model may use
/// fewer, the others staying `Gone` from the start.
pub const MAX: usize = 7;

/// Where a waiter is in its life. One protocol step leads out of each
/// phase but `Waiting` without a message, `Stopped` and `Gone`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Its first attempt next, without a place: a waiter that has not
    /// arrived yet, a newcomer barging in (it may act at any moment), or
    /// one whose subscription closed ([`Event::Drop`]).
    Fresh,
    /// Refused by its first attempt: neither subscribed nor queued.
    Refused,
    /// Subscribed (its own channel and the shared one); its second attempt
    /// next.
    Armed,
    /// Broken order only ([`Order::AttemptFirst`]): refused by its second
    /// attempt and queued, not subscribed yet.
    Joined,
    /// Subscribed, refused, waiting for a message (or for its poll, which
    /// is not a step unless [`Model::polls`]).
    Waiting,
    /// Holds a place. Unsubscribed: taking a place unsubscribes (and its
    /// place left the queue in the taking script).
    Holding,
    /// SIGSTOP: alive and subscribed (PUBLISH counts it, messages reach
    /// it) but it takes no step.
    Stopped,
    /// Released its place, or died: unsubscribed. A dead waiter's place
    /// may still be in the queue.
    Gone,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Waiter {
    pub phase: Phase,
    /// Messages delivered to it and not yet read (its connection buffers
    /// them; it reads one at a time, each read is one attempt). For a
    /// `Fresh` waiter whose subscription closed, 1 when it lost a message
    /// with it: its next attempt stands for that message.
    pub pending: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct State {
    pub waiters: [Waiter; MAX],
    /// The queue key: bit w set when waiter w's place is in it. Its order
    /// is the waiters' order (w0 first): a place's score is its waiter's
    /// arrival, the same on every re-join (`ZADD NX`).
    pub queue: u8,
    /// A release that found a listening waiter queued delivered more than
    /// one message (sticky: only a broken variant sets it).
    pub crowd: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// Waiter w's next protocol step (one per phase).
    Step(u8),
    /// Waiter w dies (SIGKILL, its connection lost), not while holding.
    Die(u8),
    /// Waiter w is stopped (SIGSTOP) while subscribed, for good.
    Stop(u8),
    /// Holder w's lease expires: its place frees with no release script,
    /// so nothing is published.
    Expire(u8),
    /// Waiter w's fallback poll: an attempt without a message.
    Poll(u8),
    /// Waiter w's subscription closes (a restart, a failover, its client
    /// killed): the messages it buffered are lost, its place stays queued.
    /// It notices, tries again at once without its place, subscribes
    /// again and makes its second attempt (`Wakeups::closed`): it becomes
    /// `Fresh`.
    Drop(u8),
    /// The queue key vanishes (its TTL lapsed, a restart without it).
    Vanish,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Violation {
    /// No waiter can take a step, yet a live one waits, and (nobody
    /// holding) every place is free: only the fallback poll would move it.
    Stranded,
    /// Fewer woken waiters (alive, not stopped, a message to read) than
    /// min(free places, waiting waiters).
    Unwoken,
    /// A release that found a listening waiter queued woke more than one.
    Crowd,
}

/// How a release wakes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// The protocol: pop the queue's head until one is listening
    /// (PUBLISH on its own channel counted a subscriber); nobody reached,
    /// PUBLISH on the shared channel.
    One,
    /// The old design: nobody queues; every release publishes on the
    /// shared channel.
    All,
    /// Broken: pop the head and publish to it, listening or not (no
    /// dead-skip loop); the shared channel only when the queue was empty.
    HeadOnly,
    /// Broken: the head as `One` does, then the shared channel as well.
    OneThenAll,
}

/// What a waiter refused by its first attempt does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// The protocol: subscribe, then the second attempt.
    SubscribeFirst,
    /// Broken: the second attempt (queued if refused), then subscribe.
    AttemptFirst,
    /// Broken: subscribe and wait, no second attempt (nor queued).
    NoSecondAttempt,
}

/// The rules and the faults allowed.
#[derive(Clone, Copy, Debug)]
pub struct Model {
    /// Waiters (at most [`MAX`]).
    pub n: usize,
    /// Places: 1 an exclusive lock, more a semaphore or a pool.
    pub cap: u8,
    pub wake: Wake,
    pub order: Order,
    /// Deaths of waiters with a message to read (a lost message).
    pub woken_may_die: bool,
    /// SIGSTOP of subscribed waiters, for good (a lost message).
    pub stops: bool,
    /// Holders' leases may expire (a place freed with no message).
    pub expiry: bool,
    /// The queue key may vanish at any moment.
    pub vanish: bool,
    /// Waiting waiters may poll (attempt without a message) at any moment.
    pub polls: bool,
    /// Subscriptions may close.
    pub drops: bool,
    /// Check [`Violation::Unwoken`] as well as [`Violation::Stranded`].
    pub unwoken: bool,
}

impl Model {
    /// The protocol with `n` waiters and `cap` places; deaths of waiters
    /// with no message to read and the queue vanishing allowed; both
    /// checks on; no poll.
    pub fn new(n: usize, cap: u8) -> Model {
        assert!(n <= MAX);
        Model {
            n,
            cap,
            wake: Wake::One,
            order: Order::SubscribeFirst,
            woken_may_die: false,
            stops: false,
            expiry: false,
            vanish: true,
            polls: false,
            drops: false,
            unwoken: true,
        }
    }

    pub fn free(&self, s: &State) -> u8 {
        let holding = s
            .waiters
            .iter()
            .filter(|w| w.phase == Phase::Holding)
            .count() as u8;
        self.cap - holding
    }

    /// Waiter w's attempt with its place (the acquire script): it takes a
    /// free place and leaves the queue, or it is refused and joins the
    /// queue (`ZADD NX`: back at its own score), its phase then `refused`.
    pub(crate) fn attempt(
        &self,
        n: &mut State,
        w: usize,
        refused: Phase,
        describe: bool,
    ) -> String {
        let bit = 1 << w;
        if self.free(n) > 0 {
            n.waiters[w] = Waiter {
                phase: Phase::Holding,
                pending: 0,
            };
            n.queue &= !bit;
            say!(describe, "takes a place")
        } else {
            n.waiters[w].phase = refused;
            if self.wake == Wake::All {
                say!(describe, "is refused")
            } else {
                n.queue |= bit;
                say!(describe, "is refused and queued")
            }
        }
    }

    /// The wake after waiter `r` freed its place, in the same script.
    pub(crate) fn wake(&self, n: &mut State, r: usize, describe: bool) -> String {
        let mut words = String::new();
        let mut reached = false;
        match self.wake {
            Wake::One | Wake::OneThenAll => {
                while n.queue != 0 {
                    let head = n.queue.trailing_zeros() as usize;
                    n.queue &= !(1 << head);
                    if subscribed(n.waiters[head].phase) {
                        n.waiters[head].pending += 1;
                        reached = true;
                        words += &say!(describe, ", pops w{head}: woken alone");
                        break;
                    }
                    words += &say!(describe, ", pops w{head}: nobody listens");
                }
            }
            Wake::HeadOnly => {
                if n.queue != 0 {
                    let head = n.queue.trailing_zeros() as usize;
                    n.queue &= !(1 << head);
                    reached = true;
                    if subscribed(n.waiters[head].phase) {
                        n.waiters[head].pending += 1;
                        words += &say!(describe, ", pops w{head}: woken alone");
                    } else {
                        words += &say!(describe, ", pops w{head}: nobody listens, lost");
                    }
                }
            }
            Wake::All => {}
        }
        if !reached || self.wake == Wake::OneThenAll {
            let mut woken = Vec::new();
            for (i, v) in n.waiters.iter_mut().enumerate() {
                // The payload is the releaser's place, which it ignores
                // (a holder is unsubscribed anyway).
                if i != r && subscribed(v.phase) {
                    v.pending += 1;
                    woken.push(i);
                }
            }
            if reached && !woken.is_empty() {
                n.crowd = true;
            }
            let woken: Vec<String> = woken.iter().map(|w| format!("w{w}")).collect();
            words += &say!(
                describe,
                ", publishes to everyone: woken [{}]",
                woken.join(" ")
            );
        }
        words
    }

    /// No waiter can take a protocol step (dying, stopping, polling and
    /// the queue vanishing are not protocol steps).
    pub fn quiescent(&self, s: &State) -> bool {
        s.waiters.iter().all(|w| match w.phase {
            Phase::Fresh | Phase::Refused | Phase::Armed | Phase::Joined | Phase::Holding => false,
            Phase::Waiting => w.pending == 0,
            Phase::Stopped | Phase::Gone => true,
        })
    }

    /// Live waiters waiting, not stopped.
    pub fn waiting(&self, s: &State) -> u8 {
        s.waiters
            .iter()
            .filter(|w| w.phase == Phase::Waiting)
            .count() as u8
    }

    /// Live waiters, not stopped, with a message to read (or that lost one
    /// with their subscription and are about to try again): each will make
    /// an attempt without a poll, and cannot die before it.
    pub fn woken(&self, s: &State) -> u8 {
        s.waiters
            .iter()
            .filter(|w| w.phase != Phase::Stopped && w.pending > 0)
            .count() as u8
    }

    /// Whether waiter `w` is holding in `s` (a step of it from `s` is a
    /// release).
    pub fn holds(&self, s: &State, w: u8) -> bool {
        s.waiters[w as usize].phase == Phase::Holding
    }

    /// Whether a listening waiter's place is in the queue.
    pub fn listener_queued(&self, s: &State) -> bool {
        (0..self.n).any(|w| s.queue & (1 << w) != 0 && subscribed(s.waiters[w].phase))
    }
}

/// Whether a waiter in this phase hears its channels (a PUBLISH counts it).
pub fn subscribed(p: Phase) -> bool {
    matches!(p, Phase::Armed | Phase::Waiting | Phase::Stopped)
}

/// The progress measure of `s`: (the phases' weights, the messages
/// pending). Every protocol step lowers it; a poll lowers it (it takes) or
/// changes only the queue (refused); `survey.rs` checks both over every
/// reachable step. Faults may raise it (a closed subscription, the queue
/// vanishing) but a run has finitely many.
pub fn rank(s: &State) -> (u32, u32) {
    let weight = |p: Phase| match p {
        Phase::Fresh => 6,
        Phase::Refused => 5,
        Phase::Armed | Phase::Joined => 4,
        Phase::Waiting => 3,
        Phase::Holding => 2,
        Phase::Stopped => 1,
        Phase::Gone => 0,
    };
    (
        s.waiters.iter().map(|w| weight(w.phase)).sum(),
        s.waiters.iter().map(|w| u32::from(w.pending)).sum(),
    )
}
