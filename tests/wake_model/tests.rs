//! What the model finds: the protocol within the default bounds, the
//! progress measure and the messages per release (`survey.rs`), and each
//! broken variant caught.

use crate::wake_model::explorer::{Outcome, System, assert_safe, check, guided};
use crate::wake_model::model::{Event, Model, Order, Phase, Violation, Wake};
use crate::wake_model::survey::survey;

/// Explores `m`, which must be safe; returns what the exploration found.
fn safe(name: &str, m: &Model) -> Outcome<Event, Violation> {
    let o = check(name, m);
    assert_safe(name, m, &o);
    o
}

/// Explores `m`, which must break `expected`; returns the run's length.
fn finds(name: &str, m: &Model, expected: Violation) -> usize {
    let o = check(name, m);
    match o.violation {
        Some((v, run)) if v == expected => run.len(),
        found => panic!("{name}: expected {expected:?}, found {found:?}"),
    }
}

#[test]
fn no_waiter_is_stranded_beside_one_place() {
    for n in 3..=5 {
        safe(&format!("{n} waiters, a lock"), &Model::new(n, 1));
    }
}

#[test]
fn no_waiter_is_stranded_beside_several_places() {
    for (n, cap) in [(3, 2), (4, 2), (5, 2), (5, 3)] {
        safe(
            &format!("{n} waiters, a semaphore of {cap}"),
            &Model::new(n, cap),
        );
    }
}

#[test]
fn polls_strand_nobody_and_lead_nowhere_new() {
    // A poll is an attempt without a message: it may take the place a
    // woken waiter was told of, or queue a waiter again after the queue
    // vanished. Neither leaves a state that needs another poll; at these
    // bounds a poll even reaches no state that a run without polls does
    // not reach.
    for cap in [1, 2] {
        let without = safe(&format!("4 waiters, {cap} place(s)"), &Model::new(4, cap));
        let m = Model {
            polls: true,
            ..Model::new(4, cap)
        };
        let with = safe(&format!("4 waiters, {cap} place(s), polls"), &m);
        assert_eq!(with.states, without.states);
    }
}

#[test]
fn a_closed_subscription_strands_nobody() {
    // Its messages are lost with it, but the waiter notices, tries again
    // at once, subscribes again and makes its second attempt: its own
    // retry stands for the message it lost. Its place stays queued while
    // it is not listening: a release pops it and goes on to the next.
    for cap in [1, 2] {
        let m = Model {
            drops: true,
            polls: true,
            ..Model::new(4, cap)
        };
        safe(
            &format!("4 waiters, {cap} place(s), subscriptions close"),
            &m,
        );
    }
}

#[test]
fn every_run_ends_so_its_end_is_a_checked_state() {
    for m in [
        Model::new(4, 1),
        Model::new(4, 2),
        Model {
            polls: true,
            drops: true,
            stops: true,
            expiry: true,
            woken_may_die: true,
            ..Model::new(4, 2)
        },
        Model {
            order: Order::AttemptFirst,
            ..Model::new(4, 1)
        },
    ] {
        let found = survey(&m).unwrap_or_else(|e| panic!("{}: {e}", m.rules()));
        println!("{}: {found:?}", m.rules());
        // Not vacuous: runs end somewhere, and the count of woken waiters
        // is checked where it matters.
        assert!(found.quiescent > 0 && found.contested > 0);
    }
}

#[test]
fn a_release_wakes_one_waiter_where_one_listens_in_the_queue() {
    let one = Model::new(4, 1);
    let all = Model {
        wake: Wake::All,
        ..one
    };
    let quiet = Model {
        vanish: false,
        ..one
    };
    let (one_found, all_found, quiet_found) = (
        survey(&one).unwrap(),
        survey(&all).unwrap(),
        survey(&quiet).unwrap(),
    );
    let (o1, oa, oq) = (
        safe("wake one", &one),
        safe("wake all", &all),
        safe("wake one, the queue kept", &quiet),
    );
    println!(
        "wake one: {one_found:?}\nwake all: {all_found:?}\nwake one, the queue kept: {quiet_found:?}"
    );
    // The survey saw what the explorer saw.
    assert_eq!(
        (one_found.states, all_found.states, quiet_found.states),
        (o1.states, oa.states, oq.states)
    );
    // Wake-one: one message where a listener is queued (the Crowd check
    // holds in every state besides); the shared channel, to every listener,
    // only where none is queued: waiters subscribed but not yet queued
    // (armed), or queued before the queue vanished.
    assert_eq!(one_found.most_per_release_queued, 1);
    assert_eq!(quiet_found.most_per_release_queued, 1);
    assert_eq!(one_found.most_per_release, 3);
    // Wake-all: every release reaches every listener, 3 of 4.
    assert_eq!(all_found.most_per_release, 3);
    assert_eq!(all_found.most_per_release_queued, 0, "nobody queues");
    println!(
        "messages unread at once: wake one {}, the queue kept {}, wake all {}",
        o1.most, oq.most, oa.most
    );
}

#[test]
fn a_dead_head_is_skipped() {
    let m = Model::new(3, 1);
    let (_, s) = guided(
        &m,
        &[
            "w0's first attempt takes",
            "w1's first attempt is refused",
            "w1 subscribes",
            "w1's second attempt is refused and queued",
            "w2's first attempt is refused",
            "w2 subscribes",
            "w2's second attempt is refused and queued",
            "w1 dies",
            "w0 releases, pops w1: nobody listens, pops w2: woken alone",
            "w2 reads a message; its attempt takes a place",
        ],
    );
    assert_eq!(s.waiters[2].phase, Phase::Holding);
    assert_eq!(s.queue, 0);
}

#[test]
fn a_release_to_the_head_alone_is_caught() {
    // (a) No dead-skip loop: a dead head takes the message with it.
    let broken = Model {
        wake: Wake::HeadOnly,
        unwoken: false,
        ..Model::new(3, 1)
    };
    let steps = finds("broken: head only", &broken, Violation::Stranded);
    // The count of woken waiters sees it as soon as the message is lost.
    let sooner = finds(
        "broken: head only, unwoken",
        &Model {
            unwoken: true,
            ..broken
        },
        Violation::Unwoken,
    );
    assert!(sooner <= steps);
}

#[test]
fn a_woken_waiter_that_dies_strands_the_others() {
    // (b) The documented cost of waking one: a message is lost with the
    // waiter it woke, and the others wait for their poll.
    let lossy = Model {
        woken_may_die: true,
        unwoken: false,
        ..Model::new(3, 1)
    };
    finds("woken waiters die", &lossy, Violation::Stranded);
    finds(
        "woken waiters die, unwoken",
        &Model {
            unwoken: true,
            ..lossy
        },
        Violation::Unwoken,
    );
    // Waking all, the others were woken too.
    safe(
        "wake all, woken waiters die",
        &Model {
            wake: Wake::All,
            ..lossy
        },
    );
}

#[test]
fn an_attempt_before_subscribing_is_caught() {
    // (c) A release between the second attempt and the subscription is
    // heard by nobody: it pops the waiter's place (nobody listens there)
    // and finds nobody on the shared channel.
    for wake in [Wake::One, Wake::All] {
        let m = Model {
            wake,
            order: Order::AttemptFirst,
            unwoken: false,
            ..Model::new(3, 1)
        };
        finds(
            &format!("broken: attempt first, wake {wake:?}"),
            &m,
            Violation::Stranded,
        );
    }
    // No second attempt at all: a release before the subscription.
    let m = Model {
        order: Order::NoSecondAttempt,
        unwoken: false,
        ..Model::new(3, 1)
    };
    finds("broken: no second attempt", &m, Violation::Stranded);
}

#[test]
fn a_stopped_waiter_strands_the_others() {
    // (d) A stopped waiter still listens: a release that pops its place
    // stops there, and its message is never read.
    let m = Model {
        stops: true,
        unwoken: false,
        ..Model::new(3, 1)
    };
    finds("waiters stop", &m, Violation::Stranded);
    safe(
        "wake all, waiters stop",
        &Model {
            wake: Wake::All,
            ..m
        },
    );
}

#[test]
fn an_expired_lease_strands_waiters_in_either_design() {
    // A holder killed with SIGKILL frees by expiry, which publishes
    // nothing: the poll's case before wake-one as after.
    for wake in [Wake::One, Wake::All] {
        let m = Model {
            wake,
            expiry: true,
            unwoken: false,
            ..Model::new(3, 1)
        };
        finds(
            &format!("leases expire, wake {wake:?}"),
            &m,
            Violation::Stranded,
        );
    }
}

#[test]
fn a_release_that_also_wakes_everyone_is_caught() {
    let m = Model {
        wake: Wake::OneThenAll,
        ..Model::new(3, 1)
    };
    finds("broken: one, then all", &m, Violation::Crowd);
}
