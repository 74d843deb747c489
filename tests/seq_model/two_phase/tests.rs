//! The tests of the `TwoPhase` rules.
//!
//! The rules are unsafe: a creation's phase 1 that fails still leaves the
//! nodes it prepared, and a lost node prepared that way joins an older
//! creation, whose phase 2 then writes 0 beside a holder of 1. The run is
//! 29 steps long, deeper than the breadth-first search reaches within any
//! bound a test can afford (from an empty start with one loss, it stops at
//! its state limit first), so it is written out step by step and replayed
//! through the model (`explorer::guided`): every step is checked to be
//! possible. The exhaustive tests cover what stays safe: creation without
//! a loss, a loss with every node a holder, and a restart beside a frozen
//! node.

use super::*;
use std::collections::HashSet;

use super::runs::FAILED_CREATION_RUN;
use crate::seq_model::explorer::{
    System, Violation, all_states, assert_safe, check, guided, narrate,
};

pub(super) const FRESH: [u8; N] = [MISSING; N];

/// Rounds of the debug tests from an empty start with one loss.
pub(super) const FRESH_LOSS_ROUNDS: [u8; PROPOSERS] = [4, 1];

/// Replays the narrated `run` under `m`, prints it, and asserts it ends in
/// 1 handed out twice with exactly one loss, of node 1.
pub(super) fn assert_guided_duplicate_with_one_loss(name: &str, m: &TwoPhase, run: &[&str]) {
    let (run, end) = guided(m, run);
    println!("{name}: a run to {:?}", end.violation);
    for line in narrate(m, &run) {
        println!("  {line}");
    }
    assert_eq!(end.violation, Some(Violation::Duplicate(1)));
    let losses: Vec<&Event> = run.iter().filter(|e| matches!(e, Event::Lose(_))).collect();
    assert_eq!(losses, [&Event::Lose(0)], "one loss, of node 1");
}

/// Created (every node holds 0), one loss, each proposer reads and
/// proposes; and the same with node 2 frozen (down or slow), where nothing
/// can be handed out once another node lost its data. `rule` names the
/// rule set in the printed figures; `base` builds its model.
pub(super) fn assert_safe_when_a_holder_loses_its_data(
    rule: &str,
    base: fn([u8; N], Option<u8>) -> TwoPhase,
) {
    let created = TwoPhase {
        rounds: [2, 2],
        ..base([0; N], None)
    };
    let o = check(&format!("{rule}, all hold 0, one loss"), &created);
    assert_safe("created", &created, &o);
    assert!(o.states > 10_000, "only {} states", o.states);
    assert_eq!(o.most, 2);
    let frozen = TwoPhase {
        frozen: Some(1),
        ..created
    };
    let o = check(
        &format!("{rule}, all hold 0, one loss, node 2 frozen"),
        &frozen,
    );
    assert_safe("frozen", &frozen, &o);
    assert_eq!(o.most, 2);
}

/// [101, 100, 101] with 101 handed out; node 3 restarted empty. With node 1
/// frozen, a read sees one holder (100) and never all N nodes: nothing is
/// handed out, 101 in particular. With node 1 answering, values are handed
/// out again, above 101.
pub(super) fn assert_unavailable_after_a_restart_beside_a_frozen_node(
    rule: &str,
    base: fn([u8; N], Option<u8>) -> TwoPhase,
) {
    let restarted = TwoPhase {
        lost_before: Some(2),
        ..base([101, 100, MISSING], Some(101))
    };
    let frozen = TwoPhase {
        frozen: Some(0),
        ..restarted.clone()
    };
    let o = check(
        &format!("{rule}, [101, 100, MISSING], node 1 frozen"),
        &frozen,
    );
    assert_safe("frozen", &frozen, &o);
    assert_eq!(o.most, 0, "values handed out beside a frozen node");
    let restarted = TwoPhase {
        rounds: [2, 2],
        ..restarted
    };
    let o = check(
        &format!("{rule}, [101, 100, MISSING], 2 rounds"),
        &restarted,
    );
    assert_safe("restarted", &restarted, &o);
    assert_eq!(o.most, 2);
}

/// From an empty start, one loss at any moment within
/// [`FRESH_LOSS_ROUNDS`]: the case that broke `Greatest` and `OfView`.
/// `rule` names the rule set in the printed figures; `base` builds its
/// model.
pub(super) fn assert_safe_with_a_loss_during_creation(
    rule: &str,
    base: fn([u8; N], Option<u8>) -> TwoPhase,
) {
    let m = TwoPhase {
        rounds: FRESH_LOSS_ROUNDS,
        ..base(FRESH, None)
    };
    let o = check(&format!("{rule}, all missing, one loss"), &m);
    assert_safe("one loss", &m, &o);
    assert!(o.most >= 1, "nothing handed out");
}

/// Every state the search of `m` visits, mirror images merged, is a state
/// the search without the mirror reduction visits (merged afterwards), and
/// the other way round; and the reduction merges something, in a search of
/// more than `min_states` states.
pub(super) fn assert_mirror_images_stand_for_each_other(
    rule: &str,
    m: &TwoPhase,
    min_states: usize,
) {
    let with = all_states(m);
    let plain = all_states(&TwoPhase {
        mirror: false,
        ..m.clone()
    });
    let merged: HashSet<State> = plain.iter().map(|&s| m.canon(s)).collect();
    println!(
        "{rule} mirror: {} states with the reduction, {} without",
        with.len(),
        plain.len()
    );
    assert!(with.len() > min_states && plain.len() > with.len());
    for x in merged.difference(&with).take(2) {
        println!("only merged: {x:?}");
    }
    for x in with.difference(&merged).take(2) {
        println!("only with: {x:?}");
    }
    assert!(with == merged);
}

#[test]
fn the_two_phase_rules_hand_out_1_twice_when_a_failed_creation_prepares_a_lost_node() {
    // P1 creates the sequence and hands out 1 (nodes 1 and 2); node 3's
    // phase-2 write is late. Node 1 loses its data; P2's read, which saw
    // nodes 2 and 3 as prepared before, marks it: no holder, so P2 creates
    // with the old creation's id. Its phase 1 fails at node 2 (it holds 1)
    // but has prepared node 1. Now node 2 is a holder and every other node
    // is prepared for the same id: eligible, phase 1 succeeds, phase 2 writes 0 to
    // nodes 1 and 3, and a read of those two proposes 1 again.
    let m = TwoPhase {
        rounds: [4, 6],
        mirror: false,
        ..TwoPhase::new(FRESH, None)
    };
    assert_guided_duplicate_with_one_loss(
        "two-phase, all missing, one loss",
        &m,
        &FAILED_CREATION_RUN,
    );
}

#[test]
fn the_two_phase_rules_never_hand_out_a_value_twice_when_nothing_is_lost() {
    // Two concurrent creators from an empty start. P1 has the rounds to
    // create and hand out (read, phase 1, read, propose); P2 races it with
    // a read, a phase 1 and a read.
    let m = TwoPhase {
        losses: 0,
        rounds: [4, 3],
        ..TwoPhase::new(FRESH, None)
    };
    let o = check("two-phase, all missing, no loss, 4 and 3 rounds", &m);
    assert_safe("no loss", &m, &o);
    assert!(o.states > 100_000, "only {} states", o.states);
    assert_eq!(o.most, 2);
}

#[test]
fn the_two_phase_rules_never_hand_out_a_value_twice_when_a_holder_loses_its_data() {
    assert_safe_when_a_holder_loses_its_data("two-phase", TwoPhase::new);
}

#[test]
fn the_two_phase_rules_are_unavailable_after_a_restart_beside_a_frozen_node() {
    assert_unavailable_after_a_restart_beside_a_frozen_node("two-phase", TwoPhase::new);
}

#[test]
fn the_two_phase_mirror_images_and_token_numbers_stand_for_each_other() {
    // Every state the search visits, mirror images merged, is a state the
    // search without the mirror reduction visits, and the other way round;
    // from an empty start with a loss, where tokens are minted, ranked and
    // forgotten, and requests pruned.
    let m = TwoPhase {
        rounds: [2, 2],
        ..TwoPhase::new(FRESH, None)
    };
    assert_mirror_images_stand_for_each_other("two-phase", &m, 10_000);
}
