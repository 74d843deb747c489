//! The deeper bounds: more waiters and places, and every fault at once,
//! too slow for the default run (ignored: `cargo test -p yaraus-models wake_model::
//! -- --ignored --nocapture`, faster with `--release`;
//! `WAKE_MODEL_CASES=words` runs the cases whose name contains them).
//! Each case states what it is expected to find; the test prints a table
//! of what each found (states, seconds), so that the figures quoted in
//! `mod.rs` are measured, not copied.

use crate::wake_model::explorer::deeper::Table;
use crate::wake_model::explorer::{System, check};
use crate::wake_model::model::{Model, Order, Violation, Wake};

/// Explores one case; returns its line of the table, or the failure.
fn case(name: &str, m: &Model, expect: Option<Violation>) -> Result<String, String> {
    let o = check(name, m);
    let found = o.violation.as_ref().map(|(v, run)| (*v, run.len()));
    let line = format!(
        "| {name} | {} | {} | {} | {} | {:.1} s |",
        m.rules(),
        o.states,
        o.most,
        found.map_or("nothing".to_string(), |(v, steps)| format!(
            "{v:?} in {steps} steps"
        )),
        o.seconds
    );
    (found.map(|(v, _)| v) == expect)
        .then_some(line)
        .ok_or_else(|| format!("{name}: expected {expect:?}, found {found:?}"))
}

#[test]
#[ignore = "minutes in a debug build: cargo test -p yaraus-models wake_model:: -- --ignored --nocapture"]
fn deeper_bounds() {
    let mut table = Table::new(
        "WAKE_MODEL_CASES",
        &["case", "rules", "states", "most unread", "found", "time"],
    );
    let every_fault = |n, cap| Model {
        polls: true,
        drops: true,
        ..Model::new(n, cap)
    };
    let mut cases = Vec::new();
    for (n, cap) in [(6, 1), (6, 2), (6, 3), (7, 1), (7, 2), (7, 3)] {
        cases.push((
            format!("{n} waiters, {cap} place(s)"),
            Model::new(n, cap),
            None,
        ));
    }
    for (n, cap) in [(5, 1), (5, 2), (6, 1), (6, 2)] {
        cases.push((
            format!("{n} waiters, {cap} place(s), polls, closed subscriptions"),
            every_fault(n, cap),
            None,
        ));
    }
    for (n, cap) in [(6, 1), (6, 2)] {
        let m = Model::new(n, cap);
        let broken = Model {
            unwoken: false,
            ..m
        };
        cases.extend([
            (
                format!("{n} waiters, {cap} place(s), head only"),
                Model {
                    wake: Wake::HeadOnly,
                    ..broken
                },
                Some(Violation::Stranded),
            ),
            (
                format!("{n} waiters, {cap} place(s), woken waiters die"),
                Model {
                    woken_may_die: true,
                    ..broken
                },
                Some(Violation::Stranded),
            ),
            (
                format!("{n} waiters, {cap} place(s), attempt first"),
                Model {
                    order: Order::AttemptFirst,
                    ..broken
                },
                Some(Violation::Stranded),
            ),
            (
                format!("{n} waiters, {cap} place(s), waiters stop"),
                Model {
                    stops: true,
                    ..broken
                },
                Some(Violation::Stranded),
            ),
            (
                format!("{n} waiters, {cap} place(s), wake all, woken die, stops"),
                Model {
                    wake: Wake::All,
                    woken_may_die: true,
                    stops: true,
                    ..every_fault(n, cap)
                },
                None,
            ),
        ]);
    }
    for (name, m, expect) in &cases {
        table.case(name, || case(name, m, *expect));
    }
    table.finish();
}
