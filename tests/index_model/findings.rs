//! What the model finds about the protocol itself: the rule for extending a
//! child's deadline, as specified, is unsafe (without any fault); the
//! obvious patch (never extend a child being stopped) is unsafe with one
//! lost reply; extending only a child the previous tick vouched for
//! (`Extension::Contiguous`) is safe within every bound explored. Also: the
//! protocol relies on a restarted replica never ticking an interval below
//! one its previous incarnation ticked, and its fallback `now >= recv(m) +
//! V + D` can never fire.
//!
//! The exhaustive checks here are the ones a debug build affords (two or
//! three replicas, up to five intervals, I = 2, V = 4); `deeper.rs` runs
//! larger bounds in release.

use crate::index_model::explorer::{System, all_states, assert_safe, check, guided, narrate};
use crate::index_model::model::{Event, Extension, Fate, Model, Rules};

fn specified(replicas: usize, ticks: u8) -> Model {
    Model::new(Extension::AsSpecified, Rules::Protocol, replicas, ticks)
}

pub(crate) fn fixed(replicas: usize, ticks: u8) -> Model {
    Model::new(Extension::Contiguous, Rules::Protocol, replicas, ticks)
}

/// No request lost, no reply lost, no crash in the run.
fn faultless(run: &[Event]) -> bool {
    !run.iter().any(|e| {
        matches!(
            e,
            Event::Tick(_, _, Fate::ReplyLost | Fate::RequestLost)
                | Event::GiveUp(_)
                | Event::Crash(..)
        )
    })
}

#[test]
fn as_specified_a_child_stopped_at_one_tick_is_extended_by_the_next() {
    // R2 runs (1, 2) under tick 2 and misses interval 3. Its tick 4 has no
    // pair (it is not in who[3]): it stops its child. Its tick 5 gives
    // (1, 2) again (who[4] numbers it 2 of 2), settled: the child, still
    // alive, is extended to send(5) + V. R1 starts (0, 1) under tick 4
    // (who[3] = {R1}) at recv(3) + V, the moment R2's child would have been
    // dead without the extension: R1 alone with replicas = 1 beside R2
    // with replicas = 2.
    let m = specified(2, 5);
    let o = check("as specified, 2 replicas, ticks 1..=5", &m);
    let (v, run) = o.violation.as_ref().expect("a violation");
    println!("  {} steps, {v:?}", run.len());
    assert!(faultless(run), "the run needs no fault");
    let text = narrate(&m, run).join("\n");
    assert!(text.contains("changed, stops its child (1, 2)"));
    assert!(text.contains("pair (1, 2) unchanged, deadline"));
}

/// Never extending a child being stopped blocks the run above, but a lost
/// reply hides the stop: R2's tick 4 executes (no pair) and its reply is
/// lost, so R2 never learns that its child must stop, and tick 5 extends
/// it. The run, step by step (each line: words its narration contains).
const LOST_REPLY_RUN: [&str; 19] = [
    "R1 sends tick 1",
    "R2 sends tick 1",
    "time 1",
    "time 2",
    "time 3",
    "time 4",
    "time 5",
    "R1 sends tick 2, holding none; the store executes R1's tick 2: pair (0, 2), settled; R1 receives",
    "R2 sends tick 2, holding none; the store executes R2's tick 2: pair (1, 2), settled; R2 receives",
    "R1 sends tick 3, holding none; the store executes R1's tick 3: pair (0, 2), settled; R1 receives",
    "R2 starts a child (1, 2) under tick 2",
    "time 6",
    "time 7",
    "time 8",
    "R1 sends tick 4, holding none; the store executes R1's tick 4: pair (0, 1), settled; R1 receives",
    "R2 sends tick 4, holding (1, 2); the store executes R2's tick 4: pair none; the reply is lost",
    "R2 sends tick 5, holding (1, 2); the store executes R2's tick 5: pair (1, 2), settled; R2 receives it: pair (1, 2) unchanged, deadline 12",
    "time 9",
    "R1 starts a child (0, 1) under tick 4",
];

#[test]
fn never_extending_a_stopped_child_is_not_enough_when_a_reply_is_lost() {
    let patched = Model {
        extension: Extension::UnlessStopping,
        faults: 1,
        ..specified(2, 5)
    };
    let (run, end) = guided(&patched, &LOST_REPLY_RUN);
    let v = patched.violation(&end);
    println!("unless stopping, one lost reply: a run to {v:?}");
    for line in narrate(&patched, &run) {
        println!("  {line}");
    }
    assert!(v.is_some());
    // The same run under the fix stops being possible where R2's tick 5
    // would extend its child: the child keeps its deadline.
    let fix = Model {
        faults: 1,
        ..fixed(2, 5)
    };
    let stuck = crate::index_model::explorer::replay(&fix, &LOST_REPLY_RUN).expect_err("stuck");
    assert_eq!(stuck.step, 17);
}

#[test]
fn contiguous_extension_is_safe_for_two_replicas_over_five_intervals() {
    let m = fixed(2, 5);
    let o = check("contiguous, 2 replicas, ticks 1..=5", &m);
    assert_safe("contiguous", &m, &o);
    assert_eq!(o.most, 2);
}

#[test]
fn contiguous_extension_is_safe_with_a_fault_and_a_crash() {
    let m = Model {
        faults: 1,
        crashes: 1,
        ..fixed(2, 3)
    };
    let o = check("contiguous, 2 replicas, ticks 1..=3, a fault, a crash", &m);
    assert_safe("contiguous", &m, &o);
    assert_eq!(o.most, 2);
}

#[test]
fn contiguous_extension_is_safe_for_three_replicas() {
    let m = fixed(3, 3);
    let o = check("contiguous, 3 replicas, ticks 1..=3", &m);
    assert_safe("contiguous", &m, &o);
    assert_eq!(o.most, 3);
}

#[test]
fn a_clock_stepping_back_across_a_restart_breaks_it() {
    // R2 sends tick 3 (holding none) and crashes; the request strays. The
    // restarted R2, its clock behind, ticks 1 and 2 (it knows nothing of
    // tick 3), and the stray executes: R2 is settled in transition[3]
    // with "no child". R2 starts (0, 1) under tick 2, and R1, its barrier
    // for 3 passed, starts (0, 2) under tick 3.
    let m = Model {
        crashes: 1,
        restart_floor: false,
        ..fixed(2, 3)
    };
    let o = check("contiguous, a restart with the clock stepped back", &m);
    let (_, run) = o.violation.as_ref().expect("a violation");
    assert!(run.iter().any(|e| matches!(e, Event::Crash(..))));
    // With the clock read anew at the restart, the same bounds are safe
    // (`contiguous_extension_is_safe_with_a_fault_and_a_crash`).
}

#[test]
fn the_fallback_never_fires() {
    // now >= recv(m) + V + D and now < send(m) + V - kill_after cannot
    // both hold (recv(m) >= send(m)): the rules without the fallback reach
    // exactly the same states.
    let m = Model {
        faults: 1,
        ..fixed(2, 3)
    };
    let with = all_states(&m);
    let without = all_states(&Model {
        rules: Rules::NoFallback,
        ..m.clone()
    });
    println!(
        "fallback: {} states with it, {} without",
        with.len(),
        without.len()
    );
    assert!(with.len() > 10_000);
    assert!(with == without);
}
