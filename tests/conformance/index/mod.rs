//! Conformance of `yaraus index`: the index model's steps
//! (`yaraus_models::index_model`) replayed against `tick.lua` and
//! `confirm.lua` on one real `redis-server`, the model's one Redis.
//!
//! # The tie
//!
//! Replica r of the model is a client whose id is its name ("R1"); the
//! index is `conformance:index:{index}`. Each event that touches the store
//! runs the invocation the code makes (`yaraus::index::script`):
//!
//! * a tick executed (`Tick` answered or with its reply lost, `Execute`, a
//!   `Stray` executing late): `script::Tick` for its interval n, holding
//!   the pair the child had when the tick was sent (`Slot` ticks with the
//!   running command's pair, `Replica` with none). Its reply, read as
//!   `Index::tick` reads it, must equal the model's `Store::tick`: refused
//!   with `last` (the seal), or the rank in n, the pair (rank and count of
//!   n-1), whether the replica joined transition[n], and that set's size;
//! * `Confirm(r, m)`: `script::Confirm` for m; the size of transition[m],
//!   or none when r took no part in m-1;
//! * `Start(r)`: the model folds the barrier's read into the start; the
//!   code reads SCARD of transition[m] (`Index::confirmations`) and
//!   compares it with the pair's count from tick m's reply, which the model
//!   takes to be count[m-1] at the start (final: the seal). Both figures
//!   are compared.
//!
//! A tick whose request is lost, a crash, a child dying, time passing, and
//! giving up run no script; the store must still be the model's after them.
//! After every step the keys are read back (`held.rs`): `last`, and per
//! interval the counter, the ranks, the transition set, all of them.
//!
//! # Time
//!
//! The model's time is abstract and its store never expires; the scripts
//! read no clock but PEXPIRE every key by the interval times
//! `timing::index::KEEP`. The code's own `Timing` of a 60 s interval makes
//! that 6 minutes, far beyond a test, so no key expires under the walk (and
//! the projection checks that every key does carry an expiry).
//!
//! # What the model cannot show the scripts
//!
//! Under the seal the model drops a stray tick that would be refused and a
//! confirm that could add nothing (`State::tidy`), so a stray is never
//! refused here (a late tick is) and confirm.lua's -1 is never asked for.
//! The interval-in-use answer (another `--interval`) is not in the model.

mod held;
mod tie;

use crate::conformance::{Plan, walk};
use std::time::Duration;
use tie::IndexReplay;
use yaraus_models::index_model::model::{Extension, Model, Rules};

/// The interval the replicas send: its keep (6 intervals) outlasts a test.
const INTERVAL: Duration = Duration::from_secs(60);

/// The protocol as built (contiguous extensions, the seal).
fn built(replicas: usize, ticks: u8) -> Model {
    Model::new(Extension::Contiguous, Rules::Protocol, replicas, ticks)
}

/// Walks `replay` under `plan`, shows what the scripts answered, and
/// checks that the answers `reached` (those the exhaustive prefix is sure
/// to meet, whatever the seed) came up: a tie that ran no script would
/// compare nothing.
fn check(replay: &mut IndexReplay, plan: Plan, reached: &[&str]) {
    let compared = walk(replay, plan);
    eprintln!(
        "{compared} steps compared; the scripts answered {:?}",
        replay.seen
    );
    for kind in reached {
        assert!(
            replay.seen.contains_key(kind),
            "no {kind:?} in {:?}",
            replay.seen
        );
    }
}

/// Two replicas, four intervals, a fault and a crash, ticks in one step.
#[test]
fn conformance_index_two_replicas_with_a_fault_and_a_crash() {
    let mut model = built(2, 4);
    model.faults = 1;
    model.crashes = 1;
    let mut replay = IndexReplay::new(model, "2 replicas, 4 intervals", INTERVAL);
    let plan = Plan {
        depth: 4,
        transitions: 4,
        walks: 60,
        steps: 80,
    };
    let reached = [
        "tick counted, no pair",
        "tick counted, settled",
        "tick sealed",
    ];
    check(&mut replay, plan, &reached);
}

/// Three replicas, three intervals, a fault, each tick in three steps
/// (sent, executed, answered), so that stray ticks and ranks up to 3 meet.
#[test]
fn conformance_index_three_replicas_exact_ticks() {
    let mut model = built(3, 3);
    model.faults = 1;
    model.atomic = false;
    let mut replay = IndexReplay::new(model, "3 replicas, 3 intervals, exact", INTERVAL);
    let plan = Plan {
        depth: 3,
        transitions: 3,
        walks: 50,
        steps: 80,
    };
    check(&mut replay, plan, &["tick counted, no pair"]);
}
