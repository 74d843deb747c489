//! Conformance of the wake-one queue: `yaraus_models::wake_model` (waiters
//! for a resource of CAP places on one Redis) replayed through the lock's
//! acquire and release scripts (CAP 1) and the semaphore's (CAP 2 and 3),
//! each with `src/claim/wake.lua` in front, on one `redis-server`.
//!
//! # The tie
//!
//! Each waiter of the model is a client: a token (`holder-W`), a place in
//! the queue and, while the model has it subscribed (armed, waiting or
//! stopped), a connection of its own subscribed to the shared channel and
//! to `wake:KEY:MEMBER`, as `Wakeups::arm` subscribes. The events:
//!
//! * a fresh waiter's step: the acquire script without a place
//!   (`Acquire` / `SemaphoreAcquire`, `queued: None`); armed, a waiting
//!   waiter's read of a message, and a poll: the same with its place
//!   (`Queued`), a message taken off its connection first for a read. An
//!   attempt that takes unsubscribes (`Wakeups::disarm`) in the same step.
//! * a refused waiter's step: it subscribes (no script).
//! * a holder's step: `Release` / `SemaphoreRelease` with a `Waking` that
//!   names the queue and no waker (a holder has no place any more).
//! * a death, a closed subscription: the subscription's connection closed
//!   (`CLIENT KILL ID`, so that the server has forgotten it when the next
//!   step runs), its unread messages lost with it; a stop: nothing (the
//!   connection stays subscribed and buffers); the queue vanishing: `DEL`.
//!
//! The answer of an attempt is taken or refused; of a release, whether it
//! freed the place, and every message the release delivered: after the
//! script returns, each subscriber sends `PING` and reads up to its
//! `pong`, which the server sends after anything it published to that
//! connection earlier (no wait for time). The model's release delivers one
//! message to each waiter whose unread count rises: on its own channel
//! when a listener was queued (wake one), else on the shared channel,
//! payload empty. A pattern subscriber (`PSUBSCRIBE wake:*`) cannot watch
//! instead: `PUBLISH` counts it as a listener, and wake.lua's "was anybody
//! listening" would always be yes.
//!
//! The projection: the live holders' tokens; the queue's places with their
//! scores in pop order, and whether it has an expiry within its
//! keep-alive (so that a dead waiter's place lapses with it; the model's
//! queue does not lapse but by `Vanish`, so this is: it holds a place);
//! the shared channel's subscriber count; per waiter,
//! its own channel's subscriber count (`PUBSUB NUMSUB`) and how many
//! messages its connection delivered that it has not read.
//!
//! # Time
//!
//! Arrival scores are the model's order: waiter w arrives w ms after w0 on
//! one wall clock (µs, as `Wakeups::arm` scores). Places are hex strings in
//! the reverse order, so that a queue read by member rather than by score
//! pops the wrong waiter. Holders are given an hour and the queue an hour
//! of keep-alive, so that nothing lapses by itself; a lapse is the model's
//! event, made at its step: an expired lease is an expiry in the past
//! (`PEXPIREAT KEY 1`, which the server treats as lapsed, for the lock;
//! the holder's score set to 1 ms after the epoch for the semaphore, which
//! the next attempt's `ZREMRANGEBYSCORE` up to the server's `TIME` drops,
//! and which the projection no longer counts as live); the queue vanishing
//! is `DEL`.
//!
//! # Which runs
//!
//! The harness's prefix (every state within a few steps, each through the
//! first run to it) and its random walks, plus chosen runs (`runs.rs`).
//! The prefix covers states, not transitions, and the model's state does
//! not remember how it was reached: a release that skips a dead head lands
//! where a release with no dead head lands, a poll that takes a queued
//! place where a plain take does. Such a transition is taken only if no
//! shorter run got to its state first, and wrong scripts there (no
//! dead-skip; a place left queued by a take) went unseen. The chosen runs
//! take them: the model explorer's shortest runs to each broken variant's
//! violation and to each documented cost, and a few runs in the model's
//! own words where a place outlives its waiter's listening. Random walks
//! help little: every live waiter may die at every step, so most walks end
//! within ten steps with everyone gone.
//!
//! # Not tied
//!
//! The broken variants (`Wake::HeadOnly`, `Wake::OneThenAll`, the orders
//! other than subscribe-first) describe scripts and clients that are not
//! shipped: replayed, they would fail by design. Wake-all
//! (`WakePolicy::All`) is shipped and tied: no waiter carries a place, and
//! every release publishes on the shared channel.

mod listener;
mod replay;
mod runs;

use super::walk::replay_runs;
use super::{Plan, walk};
use replay::WakeReplay;
use yaraus_models::wake_model::model::{Model, Wake};

/// Every fault at once: deaths (woken ones too), stops, expiries, polls,
/// closed subscriptions, the queue vanishing.
fn every_fault(n: usize, cap: u8) -> Model {
    Model {
        woken_may_die: true,
        stops: true,
        expiry: true,
        polls: true,
        drops: true,
        ..Model::new(n, cap)
    }
}

/// Walks `m` beside the server, then replays its chosen runs; says how
/// many steps were compared.
fn replay(m: Model, plan: Plan) {
    let mut replay = WakeReplay::new(m);
    let walked = walk(&mut replay, plan);
    let chosen = replay_runs(&mut replay, &runs::chosen(&m));
    eprintln!("{walked} steps walked, {chosen} in chosen runs");
}

// The plans, about 7,000 steps in all. The lock's model with every fault
// has 1,247 states, 884 of them within 8 steps; the semaphore of 2 with 3
// waiters, every fault, has 200, all within 11 steps; with 4 waiters,
// deaths and the queue vanishing only, 1,042, 940 of them within 9 steps
// (4 waiters are the fewest with two listeners queued behind two holders,
// which orders the queue); wake-all's, every fault, 119, all within 8.
// Every transition is taken within 6 steps of the lock and of 4 waiters
// (all of them: 12 s), everywhere in the others.

#[test]
fn conformance_wake_lock() {
    let plan = Plan {
        depth: 8,
        transitions: 6,
        walks: 15,
        steps: 40,
    };
    replay(every_fault(3, 1), plan);
}

#[test]
fn conformance_wake_semaphore() {
    let every_state = Plan {
        depth: 11,
        transitions: 11,
        walks: 5,
        steps: 40,
    };
    replay(every_fault(3, 2), every_state);
    let plan = Plan {
        depth: 9,
        transitions: 6,
        walks: 5,
        steps: 40,
    };
    replay(Model::new(4, 2), plan);
    let plan = Plan {
        depth: 5,
        transitions: 5,
        walks: 5,
        steps: 40,
    };
    replay(every_fault(4, 3), plan);
}

#[test]
fn conformance_wake_all() {
    let plan = Plan {
        depth: 8,
        transitions: 8,
        walks: 5,
        steps: 40,
    };
    let m = Model {
        wake: Wake::All,
        ..every_fault(3, 2)
    };
    replay(m, plan);
}
