//! The checks on the checker: that its symmetry reduction loses nothing,
//! and that the reservers' watch can fail.
//!
//! * Merging states that differ by a renaming of the shards
//!   (`System::canon`) is exact when the shards are interchangeable: the
//!   representatives reached are exactly the representatives of every
//!   state the unreduced model reaches.
//! * Under `Watch::Ids` the invariant is the harm itself, an id handed out
//!   twice; variant (b) must reach it (a window created twice is harmless
//!   until a reserver hands its ids out again).

use std::collections::HashSet;

use crate::hilo_model::explorer::{System, Violation, all_states, check};
use crate::hilo_model::findings::bounded;
use crate::hilo_model::model::{Gate, Model, Rules, Spread, Watch};

#[test]
fn merging_renamed_shards_loses_no_state() {
    let cases = [
        Model::new(Rules::Protocol, 3, 2, 1),
        Model::new(Rules::CreateAfterOwnRaise, 3, 2, 1),
        Model {
            gate: Gate::SinceLastRaise,
            ..Model::new(Rules::Protocol, 3, 2, 3)
        },
        Model {
            spread: Spread::PerShard,
            ..Model::new(Rules::Protocol, 3, 2, 0)
        },
    ];
    for m in cases {
        let plain = Model {
            symmetry: false,
            ..m.clone()
        };
        let merged = all_states(&m);
        let all = all_states(&plain);
        let canon: HashSet<_> = all.iter().map(|&s| m.canon(s)).collect();
        println!(
            "{}: {} states, {} representatives",
            plain.rules(),
            all.len(),
            merged.len()
        );
        assert!(merged.len() < all.len(), "nothing merged");
        assert!(canon == merged, "the representatives differ");
    }
}

#[test]
fn reservers_hand_an_id_out_twice_without_the_raise_phase() {
    let m = Model {
        size: 2,
        watch: Watch::Ids,
        ..bounded(Rules::NoRaise, 2, 2, 1)
    };
    let o = check(
        "(b) no raise, W=2, reservers, 2 shards, 2 runs, 1 restart",
        &m,
    );
    let (v, _) = o.violation.expect("an id handed out twice");
    assert!(matches!(v, Violation::IdTwice { .. }));
}
