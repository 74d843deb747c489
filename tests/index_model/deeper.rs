//! The deeper bounds: explorations too slow for a debug build, run by hand
//! in release (`cargo test --release -p yaraus-models index_model:: -- --ignored
//! --nocapture`; `INDEX_MODEL_CASES=words` runs the cases whose name
//! contains them). Each case states what it is expected to find; the test
//! prints a table of what each found (states, seconds), so that the figures
//! quoted in `mod.rs` are measured, not copied. All of it takes about ten
//! minutes (the largest case two) and up to 7 GB.

use crate::index_model::checks::assert_atomic_matches_exact;
use crate::index_model::explorer::check;
use crate::index_model::explorer::deeper::Table;
use crate::index_model::findings::fixed;
use crate::index_model::model::{Extension, Model, Rules};

/// What a deeper exploration is expected to find.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Safe,
    Violation,
}

/// Explores one case; returns its line of the table, or the failure.
fn case(name: &str, m: &Model, expect: Expect) -> Result<String, String> {
    let o = check(name, m);
    let found = o.violation.as_ref().map(|(v, run)| (*v, run.len()));
    let ok = match expect {
        Expect::Safe => found.is_none() && o.most as usize == m.replicas,
        Expect::Violation => found.is_some(),
    };
    let line = format!(
        "| {name} | {} | {} | {:.0} s |",
        o.states,
        found.map_or("nothing".to_string(), |(v, steps)| format!(
            "{v:?} in {steps} steps"
        )),
        o.seconds
    );
    ok.then_some(line)
        .ok_or_else(|| format!("{name}: expected {expect:?}, found {found:?}"))
}

#[test]
#[ignore = "minutes in release: cargo test --release -p yaraus-models index_model:: -- --ignored --nocapture"]
fn deeper_bounds() {
    let cases = [
        (
            "as specified, 3 replicas, ticks 1..=5",
            Model {
                extension: Extension::AsSpecified,
                ..fixed(3, 5)
            },
            Expect::Violation,
        ),
        (
            "unless stopping, 2 replicas, ticks 1..=5",
            Model {
                extension: Extension::UnlessStopping,
                ..fixed(2, 5)
            },
            Expect::Safe,
        ),
        (
            "unless stopping, 2 replicas, ticks 1..=5, a fault",
            Model {
                extension: Extension::UnlessStopping,
                faults: 1,
                ..fixed(2, 5)
            },
            Expect::Violation,
        ),
        (
            "contiguous, 2 replicas, ticks 1..=5, a fault, a crash",
            Model {
                faults: 1,
                crashes: 1,
                ..fixed(2, 5)
            },
            Expect::Safe,
        ),
        (
            "contiguous, 2 replicas, skews 0 and 1, D = 1, ticks 1..=5, a fault",
            Model {
                skews: [0, 1, 0],
                drift: 1,
                faults: 1,
                symmetry: false,
                ..fixed(2, 5)
            }
            .with_default_horizon(),
            Expect::Safe,
        ),
        (
            "contiguous, 2 replicas, I = 4 (V = 6), ticks 1..=4, a fault, a crash",
            Model {
                interval: 4,
                faults: 1,
                crashes: 1,
                ..fixed(2, 4)
            }
            .with_default_horizon(),
            Expect::Safe,
        ),
        (
            "contiguous, 2 replicas, kill_after 0, slack 2, ticks 1..=5, a fault",
            Model {
                kill_after: 0,
                slack: 2,
                faults: 1,
                ..fixed(2, 5)
            }
            .with_default_horizon(),
            Expect::Safe,
        ),
        (
            "contiguous, exact steps, 2 replicas, ticks 1..=4, a fault",
            Model {
                atomic: false,
                faults: 1,
                ..fixed(2, 4)
            },
            Expect::Safe,
        ),
        (
            "contiguous, 3 replicas, ticks 1..=4",
            fixed(3, 4),
            Expect::Safe,
        ),
        (
            "contiguous, 3 replicas, ticks 1..=3, a fault",
            Model {
                faults: 1,
                ..fixed(3, 3)
            },
            Expect::Safe,
        ),
        (
            "contiguous, 3 replicas, ticks 1..=3, a crash",
            Model {
                crashes: 1,
                ..fixed(3, 3)
            },
            Expect::Safe,
        ),
    ];
    let mut table = Table::new("INDEX_MODEL_CASES", &["case", "states", "found", "time"]);
    for (name, m, expect) in &cases {
        assert_eq!(m.rules, Rules::Protocol);
        table.case(name, || case(name, m, *expect));
    }
    if table.selected("atomic against exact") {
        let m = Model {
            faults: 1,
            crashes: 1,
            ..fixed(2, 3)
        };
        assert_atomic_matches_exact(&m);
        let m = fixed(2, 4);
        assert_atomic_matches_exact(&m);
        table.row(
            "| atomic against exact: 2 replicas, ticks 1..=3 with a fault and a crash, \
             and ticks 1..=4 | equal | | |"
                .to_string(),
        );
    }
    table.finish();
}
