//! The deeper bounds: explorations too slow for a debug build, run by
//! hand in release (`cargo test --release -p yaraus-models seq_model:: -- --ignored
//! --nocapture`; `SEQ_MODEL_CASES=words` runs the cases whose name
//! contains them). Each case states what it is expected to find; the test
//! prints a table of what each found (states, seconds), the figures that
//! the design notes quote, so that they are measured, not copied.
//! `deeper_timed` is the table of the `timed` model (the quarantined
//! repair with clocks): `cargo test --release -p yaraus-models seq_model::deeper::deeper_timed
//! -- --ignored --nocapture`.

use crate::seq_model::counters::{FRESH, HOLD_100, Model, Rules, SKEWED};
use crate::seq_model::explorer::deeper::Table;
use crate::seq_model::explorer::{Outcome, System, Violation, check, check_compact};
use crate::seq_model::timed;
use crate::seq_model::two_phase::{CreationIds, MISSING, TwoPhase};

/// What a deeper exploration is expected to find.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Safe,
    Duplicate(u8),
}

/// Explores one case; returns its line of the table, or the failure.
fn case<M: System<Violation = Violation>>(
    name: &str,
    m: &M,
    expect: Expect,
) -> Result<String, String> {
    row(name, m, expect, &check(name, m))
}

/// The line of the table of what `o` found, or the failure.
fn row<M: System<Violation = Violation>>(
    name: &str,
    m: &M,
    expect: Expect,
    o: &Outcome<M::Event, Violation>,
) -> Result<String, String> {
    let found = o.violation.as_ref().map(|(v, _)| *v);
    let ok = match expect {
        Expect::Safe => found.is_none(),
        Expect::Duplicate(v) => found == Some(Violation::Duplicate(v)),
    };
    let line = format!(
        "| {name} | {} | {} | {} | {:.0} s |",
        m.rules(),
        o.states,
        found.map_or("nothing".to_string(), |v| format!("{v:?}")),
        o.seconds
    );
    ok.then_some(line)
        .ok_or_else(|| format!("{name}: expected {expect:?}, found {found:?}"))
}

#[test]
#[ignore = "minutes in release: cargo test --release -p yaraus-models seq_model:: -- --ignored --nocapture"]
fn deeper_bounds() {
    let q = |initial, before| Model::new(Rules::Quarantine, initial, before);
    let counters = [
        (
            "held, 1 call x 2 attempts",
            Model {
                calls: 1,
                ..q(HOLD_100, Some(100))
            },
            Expect::Safe,
        ),
        (
            "[101, 100, 101], 1 call x 2 attempts",
            Model {
                calls: 1,
                ..q(SKEWED, Some(101))
            },
            Expect::Safe,
        ),
        (
            "held, 2 calls x 1 attempt",
            Model {
                attempts: 1,
                ..q(HOLD_100, Some(100))
            },
            Expect::Safe,
        ),
        (
            "held, P1 knows floor 100, 2 calls x 1 attempt",
            Model {
                attempts: 1,
                floors: [Some(100), None],
                ..q(HOLD_100, Some(100))
            },
            Expect::Safe,
        ),
        (
            "held, a second loss, floors known, 2 calls x 1 attempt",
            Model {
                attempts: 1,
                losses: 2,
                floors: [Some(100), Some(100)],
                ..q(HOLD_100, Some(100))
            },
            Expect::Duplicate(101),
        ),
        (
            "held, a second loss, restarts, floors known, 2 calls x 1 attempt",
            Model {
                attempts: 1,
                losses: 2,
                floors: [Some(100), Some(100)],
                loss_resets_connections: true,
                ..q(HOLD_100, Some(100))
            },
            Expect::Duplicate(101),
        ),
        (
            "all missing, restarts, 1 call x 1 attempt, no repair",
            Model {
                calls: 1,
                attempts: 1,
                repairs: 0,
                loss_resets_connections: true,
                ..q(FRESH, None)
            },
            Expect::Duplicate(1),
        ),
        (
            "all missing, creation waits, 1 call x 2 attempts",
            Model {
                calls: 1,
                creation_waits: true,
                ..q(FRESH, None)
            },
            Expect::Duplicate(1),
        ),
    ];
    let c = |initial, before| TwoPhase::new(initial, before);
    // The rules of `src/seq/view.rs`: unsafe (`two_phase/view_tests.rs`), by a
    // run deeper than these bounds.
    let v = |initial, before| TwoPhase {
        creation_ids: CreationIds::OfView,
        ..TwoPhase::new(initial, before)
    };
    // The rule now in `src/seq/view.rs` (`two_phase/final_tests.rs`).
    let f = |initial, before| TwoPhase {
        creation_ids: CreationIds::Final,
        ..TwoPhase::new(initial, before)
    };
    let two_phase = [
        (
            "two-phase, all missing, no loss, 1 call x 4 rounds",
            TwoPhase {
                losses: 0,
                ..c([MISSING; 3], None)
            },
            Expect::Safe,
        ),
        (
            "two-phase, all hold 0, one loss, 1 call x 3 rounds",
            TwoPhase {
                rounds: [3, 3],
                ..c([0; 3], None)
            },
            Expect::Safe,
        ),
        (
            "two-phase, [101, 100, MISSING], 1 call x 3 rounds",
            TwoPhase {
                rounds: [3, 3],
                lost_before: Some(2),
                ..c([101, 100, MISSING], Some(101))
            },
            Expect::Safe,
        ),
        (
            "two-phase (ids of views), all missing, no loss, 4 and 3 rounds",
            TwoPhase {
                losses: 0,
                rounds: [4, 3],
                ..v([MISSING; 3], None)
            },
            Expect::Safe,
        ),
        (
            "two-phase (ids of views), all missing, one loss, 4 and 2 rounds",
            TwoPhase {
                rounds: [4, 2],
                ..v([MISSING; 3], None)
            },
            Expect::Safe,
        ),
        (
            "two-phase (ids of views), all hold 0, one loss, 1 call x 3 rounds",
            TwoPhase {
                rounds: [3, 3],
                ..v([0; 3], None)
            },
            Expect::Safe,
        ),
        (
            "two-phase (ids of views), [101, 100, MISSING], 1 call x 3 rounds",
            TwoPhase {
                rounds: [3, 3],
                lost_before: Some(2),
                ..v([101, 100, MISSING], Some(101))
            },
            Expect::Safe,
        ),
        (
            "two-phase (final rule), all missing, no loss, 4 and 3 rounds",
            TwoPhase {
                losses: 0,
                rounds: [4, 3],
                ..f([MISSING; 3], None)
            },
            Expect::Safe,
        ),
        (
            "two-phase (final rule), all missing, one loss, 4 and 2 rounds",
            TwoPhase {
                rounds: [4, 2],
                ..f([MISSING; 3], None)
            },
            Expect::Safe,
        ),
        (
            "two-phase (final rule), all missing, one loss, 4 and 3 rounds",
            TwoPhase {
                rounds: [4, 3],
                ..f([MISSING; 3], None)
            },
            Expect::Safe,
        ),
        (
            "two-phase (final rule), all missing, one loss, 5 and 2 rounds",
            TwoPhase {
                rounds: [5, 2],
                ..f([MISSING; 3], None)
            },
            Expect::Safe,
        ),
        (
            "two-phase (final rule), all hold 0, one loss, 1 call x 3 rounds",
            TwoPhase {
                rounds: [3, 3],
                ..f([0; 3], None)
            },
            Expect::Safe,
        ),
        (
            "two-phase (final rule), [101, 100, MISSING], 1 call x 3 rounds",
            TwoPhase {
                rounds: [3, 3],
                lost_before: Some(2),
                ..f([101, 100, MISSING], Some(101))
            },
            Expect::Safe,
        ),
    ];
    let mut table = Table::new(
        "SEQ_MODEL_CASES",
        &["case", "rules", "states", "finds", "time"],
    );
    for (name, m, expect) in counters {
        let m = Model {
            limit: 60_000_000,
            ..m
        };
        table.case(name, || case(name, &m, expect));
    }
    for (name, m, expect) in two_phase {
        let m = TwoPhase {
            limit: 60_000_000,
            ..m
        };
        table.case(name, || case(name, &m, expect));
    }
    table.finish();
}

/// The `timed` model's deeper cases: both processes heal anywhere (not
/// only while a node lacks the counter), know the floor 100, and (unless
/// said) make one call of one attempt and two heal passes each. The case
/// where both make two attempts is the largest measured (113 million
/// states, half an hour and 3.3 GB with the compact store); the others
/// take seconds. The filter (`SEQ_MODEL_CASES`, words of a case's name)
/// runs them one by one.
fn timed_safe_cases() -> Vec<(&'static str, timed::Model, Expect)> {
    use timed::{Model as T, Rules};
    let t = T::new;
    vec![
        (
            "timed, as built, 1 call x 1 attempt",
            t(Rules::AsBuilt),
            Expect::Safe,
        ),
        (
            "timed, as built, 1 call x 2 attempts",
            T {
                attempts: 2,
                ..t(Rules::AsBuilt)
            },
            Expect::Safe,
        ),
        (
            "timed, as built, 2 calls x 1 attempt",
            T {
                calls: [2, 2],
                ..t(Rules::AsBuilt)
            },
            Expect::Safe,
        ),
        (
            "timed, as built, a second loss (lose, heal, lose again)",
            T {
                losses: 2,
                ..t(Rules::AsBuilt)
            },
            Expect::Safe,
        ),
        (
            "timed, as built, a proposer (1 call x 2 attempts) and a healer (4 passes), 2 losses",
            T {
                calls: [1, 0],
                attempts: 2,
                passes: [0, 4],
                losses: 2,
                ..t(Rules::AsBuilt)
            },
            Expect::Safe,
        ),
        (
            "timed, as built, a proposer (2 calls) and a healer (4 passes), 2 losses",
            T {
                calls: [2, 0],
                passes: [0, 4],
                losses: 2,
                ..t(Rules::AsBuilt)
            },
            Expect::Safe,
        ),
    ]
}

/// The `timed` model's cases that hand out 101 twice (and the ripe-read
/// draft with a quarantine long enough): the same bounds.
fn timed_broken_cases() -> Vec<(&'static str, timed::Model, Expect)> {
    use timed::{Model as T, Rules, TODAY, Timing};
    let t = T::new;
    vec![
        (
            "timed, as built, ticks of 2.5 s (3 and 3: the margin lost)",
            T {
                timing: Timing {
                    tick_ms: 2_500,
                    ..TODAY
                },
                ..t(Rules::AsBuilt)
            },
            Expect::Duplicate(101),
        ),
        (
            "timed, Q = 4 s < T",
            t(Rules::ShortQuarantine),
            Expect::Duplicate(101),
        ),
        (
            "timed, repair from one holder",
            t(Rules::MinorityRead),
            Expect::Duplicate(101),
        ),
        (
            "timed, no lifetime",
            t(Rules::NoLifetime),
            Expect::Duplicate(101),
        ),
        (
            "timed, repair from the ripe read, Q = 10 s = 2T",
            t(Rules::RepairFromRipeRead),
            Expect::Duplicate(101),
        ),
        (
            "timed, repair from the ripe read, Q = 15 s > 2T(1 + ρ)/(1 − ρ)",
            T {
                timing: Timing {
                    quarantine_ms: 15_000,
                    ..TODAY
                },
                ..t(Rules::RepairFromRipeRead)
            },
            Expect::Safe,
        ),
    ]
}

#[test]
#[ignore = "minutes in release: cargo test --release -p yaraus-models seq_model::deeper::deeper_timed -- --ignored --nocapture"]
fn deeper_timed() {
    let mut table = Table::new(
        "SEQ_MODEL_CASES",
        &["case", "rules", "states", "finds", "time"],
    );
    for (name, m, expect) in timed_safe_cases().into_iter().chain(timed_broken_cases()) {
        // The compact store: the deepest of these reach a hundred million
        // states, over 20 GB in the arena; the limit is about 7 GB of it.
        let m = timed::Model {
            limit: 250_000_000,
            ..m
        };
        table.case(name, || row(name, &m, expect, &check_compact(name, &m)));
    }
    table.finish();
}
