//! The deeper bounds: explorations too slow for a debug build, run by hand
//! in release (`cargo test --release -p yaraus-models hilo_model:: -- --ignored
//! --nocapture`; `HILO_MODEL_CASES=words` runs the cases whose name
//! contains them). Each case states what it is expected to find; the test
//! prints a table of what each found (states, seconds), so that the figures
//! quoted in `mod.rs` are measured, not copied. All of it takes about six
//! minutes (the largest case, 52 million states, four) and 6 GB.

use crate::hilo_model::explorer::check;
use crate::hilo_model::explorer::deeper::Table;
use crate::hilo_model::findings::bounded;
use crate::hilo_model::model::{Gate, Model, Rules, Spread, UNLIMITED, Watch};

/// What a deeper exploration is expected to find.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// No violation, and some state has this many windows created.
    Safe(u32),
    Violation,
}

/// Explores one case; returns its line of the table, or the failure.
fn case(name: &str, m: &Model, expect: Expect) -> Result<String, String> {
    let o = check(name, m);
    let found = o.violation.as_ref().map(|(v, run)| (*v, run.len()));
    let ok = match expect {
        Expect::Safe(windows) => found.is_none() && o.most == windows,
        Expect::Violation => found.is_some(),
    };
    let line = format!(
        "| {name} | {} | {} | {} | {:.1} s |",
        o.states,
        o.most,
        found.map_or("nothing".to_string(), |(v, steps)| format!(
            "{v:?} in {steps} steps"
        )),
        o.seconds
    );
    ok.then_some(line).ok_or_else(|| {
        format!(
            "{name}: expected {expect:?}, found {found:?}, most {}",
            o.most
        )
    })
}

/// Restarts gated by `gate`, unlimited in number.
fn gated(gate: Gate, rules: Rules, shards: usize, runs: usize) -> Model {
    Model {
        gate,
        ..bounded(rules, shards, runs, UNLIMITED)
    }
}

#[test]
#[ignore = "minutes in release: cargo test --release -p yaraus-models hilo_model:: -- --ignored --nocapture"]
fn deeper_bounds() {
    use Expect::{Safe, Violation};
    use Rules::*;
    let keep = Gate::KeepHighest;
    let cases = [
        (
            "protocol, 2 shards, 3 runs, 1 restart",
            bounded(Protocol, 2, 3, 1),
            Safe(6),
        ),
        (
            "protocol, 3 shards, 3 runs, 1 restart",
            bounded(Protocol, 3, 3, 1),
            Safe(9),
        ),
        (
            "protocol, 3 shards, 2 runs, 2 restarts",
            bounded(Protocol, 3, 2, 2),
            Safe(6),
        ),
        (
            "protocol, 3 shards, 3 runs, 2 restarts",
            bounded(Protocol, 3, 3, 2),
            Safe(9),
        ),
        (
            "protocol, 3 shards, 2 runs, 3 restarts",
            bounded(Protocol, 3, 2, 3),
            Violation,
        ),
        (
            "protocol, 2 shards, 3 runs, gated restarts",
            gated(keep, Protocol, 2, 3),
            Safe(6),
        ),
        (
            "protocol, 3 shards, 3 runs of one window, gated restarts",
            Model {
                spread: Spread::One,
                ..gated(keep, Protocol, 3, 3)
            },
            Safe(3),
        ),
        (
            "protocol, W=2, reservers, 2 shards, 3 runs, 1 restart",
            Model {
                size: 2,
                watch: Watch::Ids,
                ..bounded(Protocol, 2, 3, 1)
            },
            Safe(6),
        ),
        (
            "(a) create unfenced, 3 shards, 3 runs, 1 restart",
            bounded(CreateUnfenced, 3, 3, 1),
            Safe(9),
        ),
        (
            "(a) create unfenced, 2 shards, 3 runs, gated restarts",
            gated(keep, CreateUnfenced, 2, 3),
            Safe(6),
        ),
        (
            "(d) fence unordered, 2 shards, 3 runs, 1 restart",
            bounded(FenceUnordered, 2, 3, 1),
            Safe(6),
        ),
        (
            // 3 shards, 3 runs of one window or one per shard: more than
            // 60 million states (the last writer wins: fewer refusals).
            "(d) fence unordered, 3 shards, 3 runs of one window, 1 restart",
            Model::new(FenceUnordered, 3, 3, 1),
            Safe(3),
        ),
        (
            "(d) fence unordered, 2 shards, 3 runs, gated restarts",
            gated(keep, FenceUnordered, 2, 3),
            Safe(6),
        ),
        (
            "(b) no raise, 3 shards, 3 runs, 1 restart",
            bounded(NoRaise, 3, 3, 1),
            Violation,
        ),
        (
            "(b) no raise, 2 shards, 3 runs, no restart",
            bounded(NoRaise, 2, 3, 0),
            Safe(6),
        ),
        (
            "(c) create after its own raise, 3 shards, 3 runs, 1 restart",
            bounded(CreateAfterOwnRaise, 3, 3, 1),
            Violation,
        ),
        (
            "(c) create after its own raise, 2 shards, 3 runs, no restart",
            bounded(CreateAfterOwnRaise, 2, 3, 0),
            Safe(6),
        ),
        (
            "raise unfenced, 3 shards, 3 runs, 1 restart",
            bounded(RaiseUnfenced, 3, 3, 1),
            Violation,
        ),
        (
            "raise unfenced, 2 shards, 3 runs, no restart",
            bounded(RaiseUnfenced, 2, 3, 0),
            Safe(6),
        ),
        (
            "protocol, 3 shards, 2 runs, restarts counted since the last raise phase",
            gated(Gate::SinceLastRaise, Protocol, 3, 2),
            Violation,
        ),
    ];
    let mut table = Table::new(
        "HILO_MODEL_CASES",
        &["case", "states", "most windows", "found", "time"],
    );
    for (name, m, expect) in &cases {
        table.case(name, || case(name, m, *expect));
    }
    table.finish();
}
