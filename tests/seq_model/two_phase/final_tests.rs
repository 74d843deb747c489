//! The tests of the `TwoPhase` rules with `CreationIds::Final`, the rule now in
//! `src/seq/view.rs`: with every node answered, a view with a holder never
//! creates; a view of marks only creates with the view's id; a view whose
//! every node is prepared for the same X adopts X (phase 1 only checks);
//! any other view (marks and prepared nodes mixed, different creations)
//! backs off.
//!
//! Both counterexamples, `FAILED_CREATION_RUN` (`Greatest`, 29 steps) and
//! `LATE_PHASE_1_RUN` (`OfView`, 30 steps), stop at step 19: P2's view
//! [unborn, creating, creating] mixes a mark with prepared nodes, which no
//! longer creates. Neither run's later steps (a creation beside a holder,
//! adopted)
//! can happen at all: a view with a holder never creates.
//!
//! The exhaustive tests cover creation without a loss, with one loss during
//! creation (the case that broke both earlier rules), a loss among holders,
//! and a restart beside a frozen node; `deeper.rs` goes further in release.
//!
//! The rule is safe within those bounds, but not live: one loss during a
//! creation can leave the keys prepared and marked, mixed, with no request in
//! flight, a view every proposer backs off from forever
//! (`the_final_rule_can_leave_a_sequence_that_nobody_creates`).

use super::runs::{FAILED_CREATION_RUN_OF_VIEWS, LATE_PHASE_1_RUN};
use super::step::final_eligible;
use super::tests::{
    FRESH, assert_safe_when_a_holder_loses_its_data, assert_safe_with_a_loss_during_creation,
    assert_unavailable_after_a_restart_beside_a_frozen_node,
};
use super::*;

use crate::seq_model::explorer::{assert_safe, check, narrate, replay};

pub fn final_rule(initial: [u8; N], handed_before: Option<u8>) -> TwoPhase {
    TwoPhase {
        creation_ids: CreationIds::Final,
        ..TwoPhase::new(initial, handed_before)
    }
}

/// Replays `run` under `Final` and asserts it stops at step 19, where P2
/// decides on the view [unborn:T4, creating:T2, creating:T2].
fn assert_stops_at_mixed_view(name: &str, run: &[&str]) {
    let m = TwoPhase {
        rounds: [4, 6],
        mirror: false,
        ..final_rule(FRESH, None)
    };
    let stuck = match replay(&m, run) {
        Ok((run, end)) => panic!(
            "{name} replays, to {:?}:\n{}",
            end.violation,
            narrate(&m, &run).join("\n")
        ),
        Err(stuck) => stuck,
    };
    println!("{name} under the final rule:");
    for line in narrate(&m, &stuck.run) {
        println!("  {line}");
    }
    println!(
        "step {}, possible:\n{}",
        stuck.step,
        stuck.possible.join("\n")
    );
    assert_eq!(stuck.step, 19, "{name} stops where P2 would create");
    assert!(
        stuck.possible.iter().all(|e| !e.contains("creates")),
        "a creation is possible at step 19"
    );
    assert!(
        stuck.possible.iter().all(|e| !e.contains(
            "P2 stops waiting, counts node 1 unborn:T4, node 2 creating:T2, node 3 creating:T2"
        )),
        "P2 may still decide on the mixed view"
    );
}

#[test]
fn the_final_rule_blocks_the_failed_creation_run() {
    // Steps 1 to 18 happen as under `Greatest` (with `Final`'s names): P1
    // creates from [unborn:T1 x3] with the view's id T2 and hands out 1 on
    // nodes 1 and 2, node 3's phase 2 is late (creating:T2), node 1 loses
    // its data and P2's read marks it unborn:T4. Step 19, P2's creation
    // from [unborn:T4, creating:T2, creating:T2], is not possible: a mark
    // beside prepared nodes backs off (rule 4), so the decision on all three
    // replies is no step of the model (it would only read again). Steps
    // 22 on (adopting T2 beside the holder of 1 on node 2) could not happen
    // either: a view with a holder never creates (rule 1).
    assert_stops_at_mixed_view("the failed-creation run", &FAILED_CREATION_RUN_OF_VIEWS);
}

#[test]
fn the_final_rule_blocks_the_late_phase_1_run() {
    // The same step 19 stops it: P2 never sends the phase 1 whose late CAS
    // (step 22) put creating:T5 on node 3, and its step 23 (adopting T5
    // beside the holder of 1 on node 2) is rule 1's case.
    assert_stops_at_mixed_view("the late-phase-1 run", &LATE_PHASE_1_RUN);
}

/// No holder, no key missing, a view that does not create (prepared nodes
/// and marks mixed, or different creations), and no request in flight: nothing
/// can write a key again (a READ only marks a missing key, a proposal only
/// writes a holder, no CAS is left and none will be sent), so every
/// proposer backs off from this view forever. (A second loss waits for
/// the lost node to be a holder again: never.)
fn stuck_forever(s: &State) -> bool {
    s.len == 0 && s.nodes.iter().all(|&c| !holder(c) && c != MISSING) && !final_eligible(&s.nodes)
}

#[test]
fn the_final_rule_never_hands_out_a_value_twice_when_nothing_is_lost() {
    // Nor does it get stuck without a loss: the search runs to the end
    // with the goal `stuck_forever` never reached.
    let m = TwoPhase {
        losses: 0,
        rounds: [4, 2],
        goal: Some(stuck_forever),
        ..final_rule(FRESH, None)
    };
    let o = check(
        "two-phase (final rule), all missing, no loss, 4 and 2 rounds",
        &m,
    );
    assert_safe("no loss", &m, &o);
    assert!(o.reached.is_none(), "stuck without a loss");
    assert!(o.states > 10_000, "only {} states", o.states);
    assert_eq!(o.most, 2);
}

#[test]
fn the_final_rule_never_hands_out_a_value_twice_with_a_loss_during_creation() {
    // The case that broke `Greatest` and `OfView`: an empty start, one
    // loss, at any moment (deeper rounds in `deeper.rs`).
    assert_safe_with_a_loss_during_creation("two-phase (final rule)", final_rule);
}

#[test]
fn the_final_rule_never_hands_out_a_value_twice_when_a_holder_loses_its_data() {
    assert_safe_when_a_holder_loses_its_data("two-phase (final rule)", final_rule);
}

#[test]
fn the_final_rule_is_unavailable_after_a_restart_beside_a_frozen_node() {
    assert_unavailable_after_a_restart_beside_a_frozen_node("two-phase (final rule)", final_rule);
}

#[test]
fn the_final_rule_can_leave_a_sequence_that_nobody_creates() {
    // Not a safety violation: liveness (11 steps, one loss). P1 reads
    // with T1 and P2 with T2; node 1 takes T1, loses its data, and takes
    // T2, as do nodes 2 and 3: [unborn:T2 x3]. P1 counts node 1's reply
    // from before the loss (unborn:T1) and nodes 2 and 3's (unborn:T2): a
    // view of marks, so it creates with that view's id T3. Its CAS to node
    // 1 (unborn:T1 -> creating:T3) can never succeed; it stops waiting,
    // and its CASes to nodes 2 and 3 execute late: [unborn:T2,
    // creating:T3, creating:T3], nothing in flight. Every view from now on
    // is that one, a mark beside prepared nodes (rule 4), so nobody ever creates
    // the sequence: only the operator can.
    let m = TwoPhase {
        rounds: [2, 1],
        goal: Some(stuck_forever),
        ..final_rule(FRESH, None)
    };
    let o = check("two-phase (final rule), all missing, one loss, stuck", &m);
    assert_safe("stuck", &m, &o);
    let run = o.reached.expect("no run leaves the keys stuck");
    let losses = run.iter().filter(|e| matches!(e, Event::Lose(_))).count();
    assert_eq!(losses, 1, "one loss");
}
