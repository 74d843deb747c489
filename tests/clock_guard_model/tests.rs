//! The cases: the shipped rule finds nothing, each broken rule a shortest
//! run to an instant used twice.

use super::{Bounds, Model, Rules, Violation};
use crate::explorer::{self, check};

/// Three holders one after another (clean release, expiry, theft after a
/// freeze), clocks slewing and stepping back, the server's stepping. A
/// third holder is what a release that lowers the record needs: it wrongs
/// the holder after the next.
const HANDOVERS: Bounds = Bounds {
    holders: 3,
    forward_steps: false,
    lost_record: None,
};

/// Clocks stepping forward too.
const FORWARD_STEPS: Bounds = Bounds {
    holders: 3,
    forward_steps: true,
    lost_record: None,
};

/// Two holders (a third would find the record the second wrote, as in
/// `HANDOVERS`), the pool restarting empty between them,
/// `--max-clock-offset 1` with every host within it: hosts still disagree
/// by two ticks.
const LOST_RECORD: Bounds = Bounds {
    holders: 2,
    forward_steps: false,
    lost_record: Some(1),
};

fn run(name: &str, rules: Rules, bounds: Bounds) -> Option<Violation> {
    let m = Model { rules, bounds };
    let o = check(name, &m);
    if rules == Rules::OwnClockWithMargin {
        explorer::assert_safe(name, &m, &o);
        assert_eq!(o.most, bounds.holders as u32, "not every holder made ids");
    }
    o.violation.map(|(v, _)| v)
}

#[test]
fn the_shipped_rule_never_uses_an_instant_twice_across_handovers() {
    run("handovers", Rules::OwnClockWithMargin, HANDOVERS);
}

#[test]
fn the_shipped_rule_never_uses_an_instant_twice_with_forward_steps() {
    run("forward steps", Rules::OwnClockWithMargin, FORWARD_STEPS);
}

#[test]
fn the_shipped_rule_never_uses_an_instant_twice_after_a_lost_record() {
    run("lost record", Rules::OwnClockWithMargin, LOST_RECORD);
}

#[test]
fn a_horizon_on_the_servers_clock_is_caught() {
    let v = run("broken: server clock", Rules::ServerClockHorizon, HANDOVERS);
    assert!(matches!(v, Some(Violation::SharedInstant { .. })));
}

#[test]
fn a_handover_without_the_margin_is_caught() {
    let v = run("broken: no margin", Rules::NoMargin, HANDOVERS);
    assert!(matches!(v, Some(Violation::SharedInstant { .. })));
}

/// The release's floor at the horizon its lease found is never what
/// decides: a holder's command started once its wall clock passed that
/// horizon plus the margin, and the highest offset it saw (the release's
/// own reading included) keeps its reading at least there. Only a clock
/// stepping forward and back between two readings would lower it, and
/// that breaks the shipped rule as well (the command's own last ids above
/// the horizon): the assumption docs/safety.md states.
#[test]
fn a_release_below_the_found_horizon_changes_nothing_within_the_assumptions() {
    let v = run(
        "release lowers (redundant)",
        Rules::ReleaseBelowFound,
        HANDOVERS,
    );
    assert_eq!(v, None);
}

#[test]
fn a_release_that_does_not_read_the_clock_again_is_caught() {
    let v = run(
        "broken: release without reading",
        Rules::ReleaseWithoutReading,
        FORWARD_STEPS,
    );
    assert!(matches!(v, Some(Violation::SharedInstant { .. })));
}
