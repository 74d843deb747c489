//! What the model finds about the protocol itself: it is safe under the
//! fault assumption (at most one empty restart, two or three shards, lost
//! replies, requests delayed past their run's end), and under the
//! assumption made exact (any number of restarts, as long as another
//! shard keeps the highest hwm raised everywhere); the same words read as
//! counting restarts are not enough. Two of the checks are redundant:
//! CREATE's fence check (RAISE's carries the proof), and the order of
//! tokens in FENCE (it only makes progress sure; `liveness.rs`). RAISE's
//! fence check is the one that matters.
//!
//! The explorations here are the ones a debug build affords (two runs;
//! three with one window per run); `deeper.rs` runs larger bounds in
//! release.

use crate::hilo_model::explorer::{assert_safe, check};
use crate::hilo_model::model::{Event, Gate, Model, Rules, Spread, UNLIMITED, Watch};

/// `rules` with `shards` shards, `runs` runs, `restarts` empty restarts,
/// runs planning one window or one per shard, replies that may be lost.
pub(crate) fn bounded(rules: Rules, shards: usize, runs: usize, restarts: u8) -> Model {
    Model {
        spread: Spread::Either,
        ..Model::new(rules, shards, runs, restarts)
    }
}

/// Explores `m`, asserts it safe, and that some state has `windows`
/// windows created (every run may succeed: safe is not idle).
pub(crate) fn safe(name: &str, m: &Model, windows: u32) {
    let o = check(name, m);
    assert_safe(name, m, &o);
    assert_eq!(o.most, windows, "{name}: windows created at most");
}

#[test]
fn the_protocol_is_safe_with_two_shards_two_runs_and_a_restart() {
    let m = bounded(Rules::Protocol, 2, 2, 1);
    safe("protocol, 2 shards, 2 runs, 1 restart", &m, 4);
}

#[test]
fn the_protocol_is_safe_with_three_shards_two_runs_and_a_restart() {
    let m = bounded(Rules::Protocol, 3, 2, 1);
    safe("protocol, 3 shards, 2 runs, 1 restart", &m, 6);
}

#[test]
fn the_protocol_is_safe_with_three_runs_of_one_window() {
    let m = Model::new(Rules::Protocol, 2, 3, 1);
    safe("protocol, 2 shards, 3 runs of one window, 1 restart", &m, 3);
}

#[test]
fn the_protocol_is_safe_while_another_shard_keeps_the_highest_hwm() {
    // Any number of restarts, any shard, as long as, when a shard
    // restarts, another holds an hwm at least the highest one a run had
    // acknowledged by every shard.
    for (shards, windows) in [(2, 4), (3, 6)] {
        let m = Model {
            gate: Gate::KeepHighest,
            ..bounded(Rules::Protocol, shards, 2, UNLIMITED)
        };
        safe(
            &format!("protocol, {shards} shards, 2 runs, gated restarts"),
            &m,
            windows,
        );
    }
}

#[test]
fn the_assumption_read_as_counting_restarts_is_not_enough() {
    // "At no time have all shards lost their hwm since the last completed
    // raise phase", read as "not every shard restarted since": A restarts
    // after R1's raise reached it but before the phase completed; the
    // phase completes (B raised), R1 creates, and then B may restart,
    // being the only one restarted "since". Neither shard holds the hwm.
    let m = Model {
        gate: Gate::SinceLastRaise,
        ..bounded(Rules::Protocol, 2, 2, UNLIMITED)
    };
    let o = check(
        "protocol, 2 shards, restarts since the last raise phase",
        &m,
    );
    let (_, run) = o.violation.as_ref().expect("a violation");
    let restarts = run
        .iter()
        .filter(|e| matches!(e, Event::Restart(_)))
        .count();
    assert_eq!(restarts, 2, "both shards restart, one at a time");
}

#[test]
fn creates_fence_check_is_not_needed() {
    // Two runs that both create both fenced and raised a shard x that did
    // not restart; a fence changes only by another fence, so their
    // fence-to-raise spans on x do not interleave, and the later run read
    // the earlier run's hwm from x. CREATE's checks filter windows a run
    // already planned safely: they cannot make two plans overlap.
    let m = bounded(Rules::CreateUnfenced, 2, 2, 1);
    safe("create unfenced, 2 shards, 2 runs, 1 restart", &m, 4);
    let m = bounded(Rules::CreateUnfenced, 3, 2, 1);
    safe("create unfenced, 3 shards, 2 runs, 1 restart", &m, 6);
}

#[test]
fn a_fence_that_takes_any_token_is_still_safe() {
    // Last writer wins: of two runs whose fence-to-raise spans on x
    // overlap, the raise of the one that did not fence x last is refused.
    // What the order of tokens buys is progress (`liveness.rs`).
    let m = bounded(Rules::FenceUnordered, 2, 2, 1);
    safe("fence unordered, 2 shards, 2 runs, 1 restart", &m, 4);
    let m = bounded(Rules::FenceUnordered, 3, 2, 1);
    safe("fence unordered, 3 shards, 2 runs, 1 restart", &m, 6);
}

#[test]
fn raises_fence_check_is_the_one_that_matters() {
    // Without it, CREATE's fence check still protects while no shard
    // restarts (the later run fences the create's shard after the create,
    // so after the raise there); one restart breaks it.
    let m = bounded(Rules::RaiseUnfenced, 2, 2, 0);
    safe("raise unfenced, 2 shards, 2 runs, no restart", &m, 4);
    let m = bounded(Rules::RaiseUnfenced, 2, 2, 1);
    let o = check("raise unfenced, 2 shards, 2 runs, 1 restart", &m);
    assert!(o.violation.is_some(), "raise unfenced: no violation");
}

#[test]
fn with_reservers_no_id_is_handed_out_twice() {
    let m = Model {
        size: 2,
        watch: Watch::Ids,
        ..bounded(Rules::Protocol, 2, 2, 1)
    };
    safe(
        "protocol, W=2, reservers, 2 shards, 2 runs, 1 restart",
        &m,
        4,
    );
}
