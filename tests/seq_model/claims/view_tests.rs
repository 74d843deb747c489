//! The tests of the `Claims` rules with `ClaimIds::OfView`, the rules of
//! `src/seq/view.rs` (`creation`): a creator adopts the claim X when its
//! view has claims, no mark, and every non-holder is `creating:X`; else,
//! with no holder, it draws the id from the whole view.
//!
//! The rules block the run that broke `ClaimIds::Greatest` (P2 no longer
//! adopts the older claim, so the claim its failed phase 1 wrote does not
//! match the other claims), but they are unsafe in the same way one step
//! later: that failed phase 1's CAS to node 3 (`creating:T2` -> its own id)
//! is still in flight, and executes late. Then every non-holder claims the
//! failed creation's id beside a holder of 1, the adoption rule makes it
//! eligible, and its phase 2 writes 0 beside the holder: 1 is handed out
//! twice (`LATE_PHASE_1_RUN`, 30 steps, one loss).
//!
//! The exhaustive tests cover what the search reaches: creation without a
//! loss, a loss during creation within rounds too few for that run, a loss
//! among holders, and a restart beside a frozen node.

use super::*;

use std::collections::HashSet;

use crate::explorer::{System, all_states, assert_safe, check, narrate, replay};

const FRESH: [u8; N] = [MISSING; N];

/// `FAILED_CREATION_RUN` of `tests.rs`, under these rules, up to the step
/// that no longer happens. The names differ: P1's creation draws a new
/// token for its view (T2) instead of adopting its read's mark (T1), so
/// P1's second read is T3, P2's read T4, and P2's creation draws T5 for
/// its view [unborn:T4, creating:T2, creating:T2] instead of adopting T2.
const BLOCKED_RUN: [&str; 22] = [
    "P1 starts call 1",
    "node 1 executes P1's READ",
    "node 2 executes P1's READ",
    "node 3 executes P1's READ",
    "P1 stops waiting, counts node 1 unborn:T1, node 2 unborn:T1, node 3 unborn:T1: creates",
    "node 1 executes P1's CAS",
    "node 2 executes P1's CAS",
    "node 3 executes P1's CAS",
    "P1 stops waiting, counts node 1 ok, node 2 ok, node 3 ok",
    "P2 starts call 1",
    "node 1 executes a CAS(creating:T2 -> 0)",
    "node 2 executes a CAS(creating:T2 -> 0)",
    "P1 stops waiting, counts node 1 0, node 2 0:",
    "node 1 executes P1's proposal 1",
    "node 2 executes P1's proposal 1",
    "P1 stops waiting, counts node 1 accepted 1, node 2 accepted 1:",
    "node 1 loses",
    "node 1 executes P2's READ",
    "P2 stops waiting, counts node 1 unborn:T4, node 2 creating:T2, node 3 creating:T2: creates",
    "node 1 executes P2's CAS(unborn:T4 -> creating:T5)",
    "P2 stops waiting, with no reply",
    "P2 stops waiting, counts node 1 creating:T5, node 2 1, node 3 creating:T2: creates",
];

/// The counterexample to `ClaimIds::OfView`, one step per line: the
/// blocked run up to P2's failed phase 1 (step 21), then that phase 1's
/// late CAS to node 3.
const LATE_PHASE_1_RUN: [&str; 30] = [
    "P1 starts call 1",
    "node 1 executes P1's READ",
    "node 2 executes P1's READ",
    "node 3 executes P1's READ",
    "P1 stops waiting, counts node 1 unborn:T1, node 2 unborn:T1, node 3 unborn:T1: creates",
    "node 1 executes P1's CAS",
    "node 2 executes P1's CAS",
    "node 3 executes P1's CAS",
    "P1 stops waiting, counts node 1 ok, node 2 ok, node 3 ok",
    "P2 starts call 1",
    "node 1 executes a CAS(creating:T2 -> 0)",
    "node 2 executes a CAS(creating:T2 -> 0)",
    "P1 stops waiting, counts node 1 0, node 2 0:",
    "node 1 executes P1's proposal 1",
    "node 2 executes P1's proposal 1",
    "P1 stops waiting, counts node 1 accepted 1, node 2 accepted 1:",
    "node 1 loses",
    "node 1 executes P2's READ",
    "P2 stops waiting, counts node 1 unborn:T4, node 2 creating:T2, node 3 creating:T2: creates",
    "node 1 executes P2's CAS(unborn:T4 -> creating:T5)",
    "P2 stops waiting, with no reply",
    "node 3 executes a CAS(creating:T2 -> creating:T5)",
    "P2 stops waiting, counts node 1 creating:T5, node 2 1, node 3 creating:T5: creates with id T5",
    "P2 stops waiting, counts node 1 ok, node 2 ok, node 3 ok",
    "node 1 executes a CAS(creating:T5 -> 0)",
    "node 3 executes a CAS(creating:T5 -> 0)",
    "P2 stops waiting, counts node 1 0, node 3 0:",
    "node 1 executes P2's proposal 1",
    "node 3 executes P2's proposal 1",
    "P2 stops waiting, counts node 1 accepted 1, node 3 accepted 1",
];

/// Rounds of the debug test from an empty start with one loss.
pub const FRESH_LOSS_ROUNDS: [u8; PROPOSERS] = [4, 1];

fn of_view(initial: [u8; N], handed_before: Option<u8>) -> Claims {
    Claims {
        claim_ids: ClaimIds::OfView,
        ..Claims::new(initial, handed_before)
    }
}

#[test]
fn the_view_id_rule_blocks_the_failed_creation_run() {
    // The replay stops being possible at step 22: P2's view [creating:T5,
    // 1, creating:T2] holds two different claims beside a holder, so no
    // creation is eligible (and one holder gives no floor): no decision on
    // it is worth a step, the one with these replies included.
    let m = Claims {
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
    // (nodes 1 and 2); node 3 still claims T2 (its phase-2 write is late).
    // Node 1 loses its data; P2's read marks it and counts the stale claims
    // of nodes 2 and 3: no holder, so P2 draws T5 from that view and sends
    // CAS(unborn:T4 -> creating:T5), CAS(creating:T2 -> creating:T5) twice.
    // Node 1's succeeds, node 2's fails (it holds 1): phase 1 failed. Then
    // node 3 executes its CAS late: [creating:T5, 1, creating:T5]. A read
    // of that view adopts T5 (a claim, no mark, every non-holder the same
    // claim), phase 1 checks it, phase 2 writes 0 to nodes 1 and 3, and a
    // proposal of 1 to them is accepted: 1 twice.
    let m = Claims {
        rounds: [4, 6],
        mirror: false,
        ..of_view(FRESH, None)
    };
    super::tests::assert_guided_duplicate_with_one_loss(
        "claims (ids of views), all missing, one loss",
        &m,
        &LATE_PHASE_1_RUN,
    );
}

#[test]
fn the_view_id_rule_never_hands_out_a_value_twice_when_nothing_is_lost() {
    // P1 has the rounds to create and hand out (read, phase 1, read,
    // propose); P2 races it with a read and a phase 1 (4 and 3 rounds, as
    // for `Greatest`, are in `deeper.rs`: 50 s in debug).
    let m = Claims {
        losses: 0,
        rounds: [4, 2],
        ..of_view(FRESH, None)
    };
    let o = check(
        "claims (ids of views), all missing, no loss, 4 and 2 rounds",
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
    let m = Claims {
        rounds: FRESH_LOSS_ROUNDS,
        ..of_view(FRESH, None)
    };
    let o = check("claims (ids of views), all missing, one loss", &m);
    assert_safe("one loss", &m, &o);
    assert!(o.most >= 1, "nothing handed out");
}

#[test]
fn the_view_id_rule_never_hands_out_a_value_twice_when_a_holder_loses_its_data() {
    super::tests::assert_safe_when_a_holder_loses_its_data("claims (ids of views)", of_view);
}

#[test]
fn the_view_id_rule_is_unavailable_after_a_restart_beside_a_frozen_node() {
    super::tests::assert_unavailable_after_a_restart_beside_a_frozen_node(
        "claims (ids of views)",
        of_view,
    );
}

#[test]
fn the_view_id_mirror_images_and_token_numbers_stand_for_each_other() {
    // As for `Greatest`, with views interned and forgotten.
    let m = Claims {
        rounds: [2, 2],
        ..of_view(FRESH, None)
    };
    let with = all_states(&m);
    let plain = all_states(&Claims {
        mirror: false,
        ..m.clone()
    });
    let merged: HashSet<State> = plain.iter().map(|&s| m.canon(s)).collect();
    println!(
        "claims (ids of views) mirror: {} states with the reduction, {} without",
        with.len(),
        plain.len()
    );
    assert!(with.len() > 1_000 && plain.len() > with.len());
    assert!(with == merged);
}
