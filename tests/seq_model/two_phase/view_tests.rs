//! The tests of the `TwoPhase` rules with `CreationIds::OfView`, the rules of
//! `src/seq/view.rs` (`creation`): a creator adopts the creation X when its
//! view has prepared nodes, no mark, and every non-holder is `creating:X`; else,
//! with no holder, it draws the id from the whole view.
//!
//! The rules block the run that broke `CreationIds::Greatest` (P2 no longer
//! adopts the older creation, so the state its failed phase 1 wrote does
//! not match the other prepared nodes), but they are unsafe in the same way one step
//! later: that failed phase 1's CAS to node 3 (`creating:T2` -> its own id)
//! is still in flight, and executes late. Then every non-holder is prepared for the
//! failed creation's id beside a holder of 1, the adoption rule makes it
//! eligible, and its phase 2 writes 0 beside the holder: 1 is handed out
//! twice (`LATE_PHASE_1_RUN`, 30 steps, one loss).
//!
//! The exhaustive tests cover what the search reaches: creation without a
//! loss, a loss during creation within rounds too few for that run, a loss
//! among holders, and a restart beside a frozen node.

use super::*;

use super::runs::{BLOCKED_RUN, LATE_PHASE_1_RUN};
use super::tests::{
    FRESH, assert_guided_duplicate_with_one_loss, assert_mirror_images_stand_for_each_other,
    assert_safe_when_a_holder_loses_its_data, assert_safe_with_a_loss_during_creation,
    assert_unavailable_after_a_restart_beside_a_frozen_node,
};
use crate::seq_model::explorer::{assert_safe, check, narrate, replay};

fn of_view(initial: [u8; N], handed_before: Option<u8>) -> TwoPhase {
    TwoPhase {
        creation_ids: CreationIds::OfView,
        ..TwoPhase::new(initial, handed_before)
    }
}

#[test]
fn the_view_id_rule_blocks_the_failed_creation_run() {
    // The replay stops being possible at step 22: P2's view [creating:T5,
    // 1, creating:T2] holds two different creations beside a holder, so no
    // creation is eligible (and one holder gives no floor): no decision on
    // it is worth a step, the one with these replies included.
    let m = TwoPhase {
        rounds: [4, 6],
        mirror: false,
        ..of_view(FRESH, None)
    };
    let stuck = match replay(&m, &BLOCKED_RUN) {
        Ok((run, end)) => panic!(
            "the run replays, to {:?}:\n{}",
            end.violation,
            narrate(&m, &run).join("\n")
        ),
        Err(stuck) => stuck,
    };
    for line in narrate(&m, &stuck.run) {
        println!("  {line}");
    }
    println!(
        "step {}, possible:\n{}",
        stuck.step,
        stuck.possible.join("\n")
    );
    assert_eq!(stuck.step, 22, "the run stops where P2 would adopt T2");
    assert!(
        stuck.possible.iter().all(|e| !e.contains("creates")),
        "a creation is possible at step 22"
    );
}

#[test]
fn the_view_id_rule_hands_out_1_twice_when_a_failed_phase_1_executes_late() {
    // The blocked run up to step 21: P1 created with T2 and handed out 1
    // (nodes 1 and 2); node 3 is still prepared for T2 (its phase-2 write is late).
    // Node 1 loses its data; P2's read marks it and counts the stale prepared
    // states of nodes 2 and 3: no holder, so P2 draws T5 from that view and sends
    // CAS(unborn:T4 -> creating:T5), CAS(creating:T2 -> creating:T5) twice.
    // Node 1's succeeds, node 2's fails (it holds 1): phase 1 failed. Then
    // node 3 executes its CAS late: [creating:T5, 1, creating:T5]. A read
    // of that view adopts T5 (prepared nodes, no mark, every non-holder
    // prepared for the same creation), phase 1 checks it, phase 2 writes 0 to nodes 1 and 3, and a
    // proposal of 1 to them is accepted: 1 twice.
    let m = TwoPhase {
        rounds: [4, 6],
        mirror: false,
        ..of_view(FRESH, None)
    };
    assert_guided_duplicate_with_one_loss(
        "two-phase (ids of views), all missing, one loss",
        &m,
        &LATE_PHASE_1_RUN,
    );
}

#[test]
fn the_view_id_rule_never_hands_out_a_value_twice_when_nothing_is_lost() {
    // P1 has the rounds to create and hand out (read, phase 1, read,
    // propose); P2 races it with a read and a phase 1 (4 and 3 rounds, as
    // for `Greatest`, are in `deeper.rs`: 50 s in debug).
    let m = TwoPhase {
        losses: 0,
        rounds: [4, 2],
        ..of_view(FRESH, None)
    };
    let o = check(
        "two-phase (ids of views), all missing, no loss, 4 and 2 rounds",
        &m,
    );
    assert_safe("no loss", &m, &o);
    assert!(o.states > 10_000, "only {} states", o.states);
    assert_eq!(o.most, 2);
}

#[test]
fn the_view_id_rule_never_hands_out_a_value_twice_with_a_loss_during_creation_within_few_rounds() {
    // The case that broke `Greatest`, from an empty start with one loss,
    // within rounds too few for the 30-step run (which needs P2 to read,
    // fail a phase 1, read, check, read and propose: 6 rounds).
    assert_safe_with_a_loss_during_creation("two-phase (ids of views)", of_view);
}

#[test]
fn the_view_id_rule_never_hands_out_a_value_twice_when_a_holder_loses_its_data() {
    assert_safe_when_a_holder_loses_its_data("two-phase (ids of views)", of_view);
}

#[test]
fn the_view_id_rule_is_unavailable_after_a_restart_beside_a_frozen_node() {
    assert_unavailable_after_a_restart_beside_a_frozen_node("two-phase (ids of views)", of_view);
}

#[test]
fn the_view_id_mirror_images_and_token_numbers_stand_for_each_other() {
    // As for `Greatest`, with views interned and forgotten.
    let m = TwoPhase {
        rounds: [2, 2],
        ..of_view(FRESH, None)
    };
    assert_mirror_images_stand_for_each_other("two-phase (ids of views)", &m, 1_000);
}
