//! The checks on the checker: that it can fail, that what it calls safe is
//! not safe because nothing happens, and that its reduction (atomic ticks)
//! loses nothing.
//!
//! * Each departure from the fixed protocol (`Rules`: no barrier, no time
//!   condition, no seal, extending a child whose pair changed, starting
//!   under an older answered tick) is unsafe, and the search prints a
//!   shortest run to the violation. A checker that found nothing in these
//!   would be checking nothing.
//! * A run exists in which every replica holds a child at once after a
//!   transition: a child was stopped because its pair changed, and every
//!   replica, that one included, runs a child no one is stopping (the
//!   barrier passed, children started under the new pairs).
//! * Atomic ticks (one step: send, execute, receive) reach the same
//!   (time, store, children) as the exact model's three steps, and every
//!   transition set the exact model reaches is contained in one the atomic
//!   model reaches with the rest equal (see `model/step.rs` for why).

use std::collections::{HashMap, HashSet};

use crate::index_model::explorer::{System, all_states, check};
use crate::index_model::findings::fixed;
use crate::index_model::model::{Goal, MAX_N, MAX_R, Model, Pair, Rules, State, Store};

/// Explores `rules` (a departure from the fixed protocol) and asserts a
/// violation, printing the run.
fn breaks(rules: Rules, replicas: usize, ticks: u8, faults: u8) {
    let m = Model {
        rules,
        faults,
        ..fixed(replicas, ticks)
    };
    let o = check(&format!("{rules:?}, ticks 1..={ticks}"), &m);
    assert!(o.violation.is_some(), "{rules:?} found no violation");
}

#[test]
fn without_the_barrier_it_breaks() {
    breaks(Rules::NoBarrier, 2, 3, 0);
}

#[test]
fn with_confirmations_but_no_time_condition_it_breaks() {
    // A replica silent in interval m - 1 still runs a child of m - 2.
    breaks(Rules::ConfirmOnly, 2, 4, 0);
}

#[test]
fn without_the_seal_it_breaks() {
    breaks(Rules::NoSeal, 2, 3, 0);
}

#[test]
fn extending_a_child_whose_pair_changed_breaks_it() {
    breaks(Rules::ExtendOnChange, 2, 4, 0);
}

#[test]
fn starting_under_an_older_answered_tick_breaks_it() {
    // The tick sent since (its reply lost) settled the replica as holding
    // nothing.
    breaks(Rules::LatestAnswered, 2, 3, 1);
}

#[test]
fn every_replica_can_hold_a_child_after_a_transition() {
    let m = Model {
        goal: Goal::AllAliveAfterStop,
        ..fixed(3, 3)
    };
    let o = check("contiguous, 3 replicas, all alive after a stop", &m);
    assert!(o.violation.is_none());
    assert!(o.reached.is_some(), "no run reaches the goal");
}

/// What the reduction must preserve: the time, the store but its
/// transition sets, and each replica's child pair.
type Seen = (u8, Store, [Option<Pair>; MAX_R]);

fn split(s: &State) -> (Seen, [u8; MAX_N + 1]) {
    let mut store = s.store;
    let transition = store.transition;
    store.transition = [0; MAX_N + 1];
    (
        (s.now, store, s.reps.map(|r| r.child.map(|c| c.pair))),
        transition,
    )
}

/// Asserts that the atomic model matches the exact one on `m` (symmetry
/// off: both sets then hold concrete states).
pub(crate) fn assert_atomic_matches_exact(m: &Model) {
    let exact_model = Model {
        atomic: false,
        symmetry: false,
        ..m.clone()
    };
    let atomic_model = Model {
        atomic: true,
        ..exact_model.clone()
    };
    let exact = all_states(&exact_model);
    let atomic = all_states(&atomic_model);
    let mut reached: HashMap<Seen, Vec<[u8; MAX_N + 1]>> = HashMap::new();
    for s in &atomic {
        let (seen, tr) = split(s);
        reached.entry(seen).or_default().push(tr);
    }
    let exact_seen: HashSet<Seen> = exact.iter().map(|s| split(s).0).collect();
    println!(
        "{}: {} exact states, {} atomic; {} distinct (time, store, children)",
        exact_model.rules(),
        exact.len(),
        atomic.len(),
        exact_seen.len()
    );
    let atomic_seen: HashSet<Seen> = reached.keys().copied().collect();
    assert!(exact_seen == atomic_seen, "the projections differ");
    for s in &exact {
        let (seen, tr) = split(s);
        let covered = reached[&seen]
            .iter()
            .any(|a| (0..=MAX_N).all(|n| tr[n] & !a[n] == 0));
        assert!(covered, "no atomic state covers {s:?}");
    }
}

#[test]
fn atomic_ticks_lose_no_run_of_the_exact_model() {
    let m = Model {
        horizon: 7,
        ..fixed(2, 3)
    };
    assert_atomic_matches_exact(&m);
}
