//! Majority counters: the votes and the quarantined repair of `src/seq/`,
//! tied to the `timed` model (`yaraus_models::seq_model::timed`, the
//! repair as built) on three `redis-server`s, one per modelled node, all
//! holding the key `SeqKeys::new("conformance").counter("ids")`.
//!
//! # Steps and their scripts
//!
//! A node executing a request is the script the code sends for it,
//! through the library's builders: a proposal of v is propose.lua for the
//! block v..v (`{1, v}` expected); MARK is heal.lua `mark` of the missing
//! key under a fresh token (`{1, healing:…}`; its text is remembered as
//! the model's mark, numbered by the loss that emptied the node); REPAIR
//! of mark e to v is heal.lua `repair` of mark e's exact text (`{1, v}`).
//! A loss is a FLUSHALL of that node (the model keeps requests in flight
//! across it). Starting a call, an attempt or a pass, deciding, and a tick
//! run no script of their own.
//!
//! # Probes
//!
//! The model folds reads, refusals and requests that change nothing into
//! the steps that change a node, so after every step the walk also asks:
//!
//! * each live read (a floor read, a heal pass's read, a repair's fresh
//!   read) runs read.lua, read-only, on every node, and a heal pass then
//!   asks a marked node heal.lua `ripe`. The model's answer is its own
//!   `note`: the reply it records for that round now. It records one
//!   whenever a key changes or a mark ages, so every reply a decision may
//!   count is compared at the moment it is recorded.
//! * each request in flight that the model says changes nothing now (a
//!   proposal at or below the counter or to a node without one, a MARK of
//!   a key that is not missing, a REPAIR of a mark in quarantine or gone),
//!   and each request the model forgets in this step (it keeps only those
//!   that may still change a node), runs now: it must give the script's
//!   no-change reply, and the keys must still project onto the model's.
//!   A proposal equal to the counter is one; so is the repair a second
//!   heal pass sent for a mark that another pass has just repaired.
//!
//! # Time
//!
//! Ripeness is the node's clock (`TIME`) against the quarantine the
//! request carries. The model says whether a mark is ripe (its age in
//! ticks has reached the quarantine's, `timed/mod.rs` argues the
//! scaling); the request then carries a quarantine of 0 (the mark was made
//! earlier on that same clock: nothing is left) or of 10 hours (never
//! over within a test). A repair of a mark the node no longer holds is
//! sent ripe: repairs are sent only for marks read ripe, and ripeness only
//! grows. What is compared is thus the scripts' decisions on ripeness and
//! exact marks, not durations; no test waits.
//!
//! # Not tied
//!
//! A decision is the Rust side's counting (`sequence.rs`, `heal.rs`), not
//! a script: only the replies it may count are compared. The lifetime of a
//! round is the proposer's clock. Where a floor read gets no majority of
//! holders, the model's attempt fails; the code reads again leaving
//! `unborn:` marks (the creation's side, tied elsewhere), which heal.lua
//! treats as a missing key.
//!
//! # Plan
//!
//! Two processes, each with one call of up to two attempts and six heal
//! passes begun while a node lacks the counter, and two losses: every
//! state within three steps, then 50 seeded walks of up to 60 steps,
//! steered towards the steps that do something (`steer.rs`: uniform walks
//! never reached a repair).

mod replies;
mod steer;
mod timed;

use super::{Plan, walk};
use timed::Timed;
use yaraus::seq::SeqKeys;
use yaraus_models::seq_model::timed::{Model, Rules};

fn counter_key() -> String {
    SeqKeys::new("conformance")
        .counter("ids")
        .expect("a valid name")
}

#[test]
fn conformance_quarantined_repair() {
    let model = Model {
        calls: [1, 1],
        attempts: 2,
        passes: [6, 6],
        heal_when_lacking: true,
        losses: 2,
        ..Model::new(Rules::AsBuilt)
    };
    let mut replay = Timed::new(model, counter_key());
    let plan = Plan {
        depth: 3,
        walks: 50,
        steps: 60,
    };
    let steps = walk(&mut replay, plan);
    eprintln!("{steps} steps compared; reached {:?}", replay.reached);
    assert!(replay.reached.repairs > 0, "no walk repaired a node");
}
