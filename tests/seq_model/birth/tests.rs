//! The tests of the `birth` model. The shipped rule ends a stuck creation
//! by itself and neither hands out a value twice nor lets a rollback meet
//! a settle (`settled_and_rolled_back`: a settle after a rollback of its
//! creation, or a rollback beside a holder, which leaves a lone holder no
//! rule may create beside); each weaker rule reaches that dead end, a
//! rollback decided from a read past its lifetime included; after
//! a majority loss, only the majority condition keeps a rollback from
//! recreating a sequence that handed out values.

use super::state::{dead_end, settled_and_rolled_back};
use super::*;
use crate::seq_model::explorer::{Outcome, assert_safe, check, narrate};

fn mixed(_: &Model, s: &State) -> bool {
    settled_and_rolled_back(s)
}

fn handed_out_1(_: &Model, s: &State) -> bool {
    s.handed & (1 << 1) != 0
}

fn explore(name: &str, rules: Rules, start: Start, losses: u8) -> Outcome<Event, Violation> {
    let m = Model {
        goal: Some(mixed),
        losses,
        ..Model::new(rules, start)
    };
    let o = check(name, &m);
    assert_safe(name, &m, &o);
    o
}

#[test]
fn the_shipped_rule_ends_a_stuck_creation_by_itself() {
    let m = Model {
        goal: Some(handed_out_1),
        losses: 0,
        ..Model::new(Rules::SHIPPED, STUCK)
    };
    let o = check("shipped, stuck, hands out 1", &m);
    let run = o.reached.expect("a run that hands out 1");
    let lines = narrate(&m, &run);
    assert!(
        lines.iter().any(|l| l.contains("executes ROLLBACK")),
        "{lines:#?}"
    );
}

#[test]
fn the_shipped_rule_never_meets_a_settle_with_a_rollback() {
    for (name, start, losses, floor) in [
        ("shipped, stuck, no loss", STUCK, 0, 40_000),
        ("shipped, fresh, no loss", FRESH, 0, 200_000),
    ] {
        let o = explore(name, Rules::SHIPPED, start, losses);
        assert!(o.reached.is_none(), "{name}: a rollback met a settle");
        assert!(o.states > floor, "{name}: only {} states", o.states);
        assert!(o.most >= 1, "{name}: nothing handed out");
    }
}

#[test]
#[ignore = "a minute in release: cargo test --release -p yaraus-models seq_model::birth -- --ignored --nocapture"]
fn the_shipped_rule_never_meets_a_settle_with_a_loss_during_creation() {
    for (name, start) in [
        ("shipped, stuck, one loss", STUCK),
        ("shipped, fresh, one loss", FRESH),
    ] {
        let o = explore(name, Rules::SHIPPED, start, 1);
        assert!(o.reached.is_none(), "{name}: a rollback met a settle");
    }
}

#[test]
fn each_weaker_rule_lets_a_rollback_meet_a_settle() {
    for (rules, start) in [
        (Rules::DRAFT, STUCK),
        (Rules::NO_SETTLE_BOUND, STUCK),
        (Rules::UNSEEN_RIPE, STUCK),
        (Rules::SHORT, STUCK),
        (Rules::NO_CREATOR_BOUND, FRESH),
    ] {
        let o = explore(rules.name, rules, start, 0);
        assert!(o.reached.is_some(), "{}: no dead end found", rules.name);
    }
}

#[test]
fn a_rollback_from_a_read_past_its_lifetime_meets_a_settle() {
    // One read each is enough: the reader counts a mark, its read lives on
    // while the creator's late preparation of that node lands and is
    // settled, and the ripe answers of the others come after.
    let rules = Rules::UNBOUNDED_READ;
    let m = Model {
        goal: Some(mixed),
        losses: 0,
        attempts: [1, 1],
        ..Model::new(rules, FRESH)
    };
    let o = check(rules.name, &m);
    assert_safe(rules.name, &m, &o);
    let run = o.reached.expect("a rollback beside a settled node");
    let lines = narrate(&m, &run);
    assert!(
        lines
            .iter()
            .any(|l| l.contains(&format!("decides (age {})", round_ticks() + 1))),
        "not decided past the read's lifetime: {lines:#?}"
    );
}

#[test]
fn after_a_majority_loss_one_prepared_node_is_left_for_a_person() {
    // A rule that rolls back a lone prepared node recreates the sequence at
    // 0 and hands out 1 again.
    let m = Model {
        losses: 0,
        attempts: [3, 1],
        ..Model::new(Rules::ANY_PREPARED, AFTER_MAJORITY_LOSS)
    };
    let o = check("one prepared node enough, after a majority loss", &m);
    let (v, _) = o.violation.expect("1 handed out twice");
    assert_eq!(v, Violation::Duplicate(1));
    // The shipped rule leaves it: no rule moves it, a person decides.
    let m = Model::new(Rules::SHIPPED, AFTER_MAJORITY_LOSS);
    assert!(dead_end(&m, &State::initial(&m)));
    // The same keys with nothing handed out (a creator killed after one
    // preparation) are that dead end too: the price of the rule, whereas
    // rolling them back would have been safe there.
    let m = Model::new(Rules::SHIPPED, ONE_PREPARED);
    assert!(dead_end(&m, &State::initial(&m)));
    let m = Model {
        goal: Some(handed_out_1),
        losses: 0,
        attempts: [3, 0],
        ..Model::new(Rules::ANY_PREPARED, ONE_PREPARED)
    };
    let o = check("one prepared node enough, nothing handed out", &m);
    assert_safe("one prepared node enough, nothing handed out", &m, &o);
    assert!(o.reached.is_some());
}
