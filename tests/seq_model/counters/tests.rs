//! The tests of the `counters` model: the known bug (`MissingAsZero`), the two
//! repairs that fail (`NaiveRepair`, `ZeroCompletion`), and what the
//! `Quarantine` rules keep safe and where they fail; each asserts what its
//! exploration finds, and prints the run when there is one.

use super::*;
use crate::seq_model::explorer::{all_states, check, narrate};
use std::collections::HashSet;

/// The smaller bounds of the tests below: one call of one attempt per
/// proposer, one repair round each, one loss.
fn small(rules: Rules, initial: [Option<u8>; N], handed_before: Option<u8>) -> Model {
    Model {
        calls: 1,
        attempts: 1,
        ..Model::new(rules, initial, handed_before)
    }
}

/// Where `e` happens in `run`.
fn position(run: &[Event], e: impl Fn(&Event) -> bool) -> Option<usize> {
    run.iter().position(e)
}

fn executes(e: &Event, kind: u8, node: u8, val: u8) -> bool {
    matches!(e, Event::Execute(x) if x.kind() == kind && x.node() == node && x.val() == val)
}

#[test]
fn today_s_rules_hand_out_101_twice_when_a_node_restarts_empty() {
    let m = Model::new(Rules::MissingAsZero, SKEWED, Some(101));
    let o = check("today", &m);
    let (v, run) = o
        .violation
        .expect("MissingAsZero's rules hand out a value twice");
    assert_eq!(v, Violation::Duplicate(101), "{run:?}");
    // A node that held 101 restarts empty, reads as 0 and accepts 101 again.
    let lost = run
        .iter()
        .find_map(|e| match e {
            Event::Lose(n) => Some(*n),
            _ => None,
        })
        .expect("a node loses its data");
    assert_eq!(m.initial[usize::from(lost)], Some(101), "{run:?}");
    assert!(
        run.iter().any(|e| executes(e, PROPOSE, lost, 101)),
        "{run:?}"
    );
}

#[test]
fn repairing_with_the_same_round_s_read_hands_out_a_value_twice() {
    let m = small(Rules::NaiveRepair, HOLD_100, Some(100));
    let o = check("naive repair", &m);
    let (v, run) = o
        .violation
        .expect("the naive repair hands out a value twice");
    let Violation::Duplicate(v) = v else {
        panic!("expected a duplicate, got {v:?}: {run:?}");
    };
    // A node accepts v, loses its data, is set back below v by a repair
    // from a read that did not see v, and accepts v a second time; the
    // proposer of the first acceptance still counts it.
    let lose = position(&run, |e| matches!(e, Event::Lose(_))).expect("a loss");
    let Event::Lose(n) = run[lose] else {
        unreachable!()
    };
    let first = position(&run, |e| executes(e, PROPOSE, n, v)).expect("a first acceptance");
    let repair = position(
        &run,
        |e| matches!(e, Event::Execute(x) if x.kind() == SET && x.node() == n),
    )
    .expect("a repair");
    let second =
        lose + position(&run[lose..], |e| executes(e, PROPOSE, n, v)).expect("a second acceptance");
    assert!(first < lose && lose < repair && repair < second, "{run:?}");
}

#[test]
fn completing_a_missing_node_with_0_hands_out_1_twice() {
    // The sequence was just created (every node holds 0, nothing handed
    // out): completing with 0 writes 0 to a node that had accepted 1
    // before it lost its data, from a read that did not see that proposal.
    let m = small(Rules::ZeroCompletion, CREATED, None);
    let o = check("zero completion, all hold 0", &m);
    let (v, run) = o
        .violation
        .expect("completing with 0 hands out a value twice");
    assert_eq!(v, Violation::Duplicate(1), "{run:?}");
    let lose = position(&run, |e| matches!(e, Event::Lose(_))).expect("a loss");
    let Event::Lose(k) = run[lose] else {
        unreachable!()
    };
    let first = position(&run, |e| executes(e, PROPOSE, k, 1)).expect("a first acceptance");
    let completion = position(&run, |e| executes(e, SET, k, 0)).expect("a completion");
    let second =
        lose + position(&run[lose..], |e| executes(e, PROPOSE, k, 1)).expect("a second acceptance");
    assert!(
        first < lose && lose < completion && completion < second,
        "{run:?}"
    );
}

#[test]
fn the_quarantine_rules_hand_out_no_value_twice_and_keep_real_time_order() {
    let q = |initial, before| small(Rules::Quarantine, initial, before);
    for (name, m, least) in [
        ("quarantine, all hold 100", q(HOLD_100, Some(100)), 70_000),
        ("quarantine, [101, 100, 101]", q(SKEWED, Some(101)), 70_000),
        (
            // P1 made calls before: it proposes at once, P2 reads first.
            "quarantine, all hold 100, P1 knows 100",
            Model {
                floors: [Some(100), None],
                ..q(HOLD_100, Some(100))
            },
            50_000,
        ),
        (
            // Creation alone: no node loses its data.
            "quarantine, all missing, no loss",
            Model {
                losses: 0,
                ..q(FRESH, None)
            },
            700_000,
        ),
    ] {
        let o = check(name, &m);
        if let Some((v, run)) = &o.violation {
            panic!("{name}: {v:?}:\n{}", narrate(&m, run).join("\n"));
        }
        assert!(o.states > least, "{name}: only {} states", o.states);
        assert_eq!(o.most, 2, "{name}");
    }
}

#[test]
fn the_quarantine_rules_stay_safe_when_a_refused_proposal_is_retried() {
    // Both proposers made calls before (they know 100) and may try again
    // after a refused or abandoned proposal, with the floor it taught them;
    // or repair in between: the first bounds at which the quarantine wait
    // matters (without it, 101 is handed out twice here).
    let m = Model {
        attempts: 2,
        floors: [Some(100), Some(100)],
        ..small(Rules::Quarantine, HOLD_100, Some(100))
    };
    let o = check("quarantine, both know 100, 2 attempts", &m);
    if let Some((v, run)) = &o.violation {
        panic!("{v:?}:\n{}", narrate(&m, run).join("\n"));
    }
    assert!(o.states > 800_000, "only {} states", o.states);
    assert_eq!(o.most, 2);
}

#[test]
fn the_quarantine_rules_hand_out_values_when_nothing_is_lost() {
    let hold = Model {
        calls: 2,
        attempts: 1,
        losses: 0,
        goal: Some(|s| s.handed.count_ones() == 1 + 4),
        ..Model::new(Rules::Quarantine, HOLD_100, Some(100))
    };
    let o = check("quarantine, no loss, all hold 100", &hold);
    assert!(o.reached.is_some(), "no run hands out 4 values");
    let fresh = Model {
        losses: 0,
        repairs: 0,
        goal: Some(|s| s.handed.count_ones() == 2),
        ..small(Rules::Quarantine, FRESH, None)
    };
    let o = check("quarantine, no loss, all missing", &fresh);
    assert!(
        o.reached.is_some(),
        "no run creates the sequence and hands out 2 values"
    );
}

#[test]
fn the_quarantine_rules_repair_a_lost_node_on_some_path() {
    let m = Model {
        goal: Some(|s| {
            s.losses == 1 && s.nodes[usize::from(s.lost)] != MISSING && s.handed.count_ones() == 3
        }),
        ..small(Rules::Quarantine, HOLD_100, Some(100))
    };
    let o = check("quarantine, repair", &m);
    assert!(o.reached.is_some(), "no run repairs the lost node");
}

#[test]
fn the_quarantine_rules_hand_out_1_twice_when_creation_races_a_loss() {
    // The repair rounds play no part in this run: without them the search
    // is 30 times smaller.
    let m = Model {
        repairs: 0,
        ..small(Rules::Quarantine, FRESH, None)
    };
    let o = check("quarantine, all missing", &m);
    let (v, run) = o.violation.expect("the creation rule hands out 1 twice");
    assert_eq!(v, Violation::Duplicate(1), "{run:?}");
}

#[test]
fn the_mirror_images_of_p1_and_p2_stand_for_each_other() {
    // Every state the search visits, mirror images merged, is a state the
    // search without the mirror reduction visits, and the other way round.
    let m = Model {
        floors: [Some(100), Some(100)],
        ..small(Rules::Quarantine, HOLD_100, Some(100))
    };
    let with = all_states(&m);
    let plain = all_states(&Model {
        mirror: false,
        ..m.clone()
    });
    let merged: HashSet<State> = plain.iter().map(|s| s.canon(&m)).collect();
    println!(
        "mirror: {} states with the reduction, {} without",
        with.len(),
        plain.len()
    );
    assert!(with.len() > 3_000 && plain.len() > with.len());
    assert!(with == merged);
}
