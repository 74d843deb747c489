//! Majority counters: the votes and the quarantined repair of `src/seq/`
//! on three `redis-server`s (one per modelled node), key
//! `SeqKeys::new("conformance").counter("ids")`, tied to the `timed` model
//! (the repair as built) and, for the votes, to the `counters` model under
//! `Quarantine` without its repair: that repair sets a key if it is still
//! missing, which no shipped script does (heal.lua sets only over its exact
//! mark, which is what `timed` models).
//!
//! # Steps, scripts and probes
//!
//! A node executing a request runs the script the code sends, through the
//! library's builders: a proposal of v is propose.lua for v..v; MARK is
//! heal.lua `mark` of the missing key under a fresh token (its text is
//! remembered as the model's mark, numbered by the loss that emptied the
//! node); REPAIR of mark e to v is heal.lua `repair` of e's exact text. A
//! loss is a FLUSHALL of the node. Other steps run no script of their own.
//!
//! The models fold reads and requests that change nothing into the steps
//! that change a node, so after every step the walk also runs:
//! * each live read (read.lua, read-only, on every node, and heal.lua
//!   `ripe` on a marked node in a heal pass), against the model's own
//!   `note`, the reply it records for that round now: it records one
//!   whenever a key changes or a mark ages, so every reply a decision may
//!   count is compared when recorded;
//! * each request in flight that the model says changes nothing now, and
//!   each one it forgets in the step (it keeps only those that may still
//!   change a node): each must give its no-change reply and write nothing.
//!   A proposal equal to the counter is one (a vote that accepts it is
//!   caught at step 3); the repair a second heal pass sent for a mark that
//!   another pass has just repaired is another.
//!
//! # Time
//!
//! Ripeness is the node's clock (`TIME`) against the quarantine a request
//! carries. The model says whether a mark is ripe (its age in ticks,
//! scaled soundly in `timed/mod.rs`); the request carries 0 (the mark was
//! made earlier on that clock: nothing is left) or 10 hours (never over in
//! a test). A repair of a mark the node no longer holds goes ripe: repairs
//! are sent only for marks read ripe, and ripeness only grows. So the
//! scripts' ripeness and exact-mark decisions are compared; no test waits.
//!
//! # Not tied
//!
//! Decisions are the Rust side's counting (`sequence.rs`, `heal.rs`): only
//! the replies they may count are compared; a round's lifetime is the
//! proposer's clock. Where a floor read gets no majority of holders the
//! model's attempt fails, while the code reads again leaving `unborn:`
//! marks (the creation's side), which heal.lua treats as a missing key.
//!
//! # Plans
//!
//! Every state within three steps, then seeded walks (`timed`: 50 of up to
//! 60 steps, two processes with a call of two attempts and six heal passes
//! each, two losses; `counters`: 30 of up to 50, its default bounds),
//! steered towards the steps that do something (`steer.rs`: uniform walks
//! never reached a repair). `CONFORMANCE_WALKS=N` walks more.

mod replies;
mod steer;
mod timed;
mod votes;

use super::{Plan, walk};
use timed::Timed;
use yaraus::seq::SeqKeys;
use yaraus_models::seq_model::counters::{self, SKEWED};
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
        transitions: 3,
        walks: 50,
        steps: 60,
    };
    let steps = walk(&mut replay, plan);
    eprintln!("{steps} steps compared; reached {:?}", replay.reached);
    assert!(replay.reached.repairs > 0, "no walk repaired a node");
}

#[test]
fn conformance_votes() {
    let model = counters::Model {
        repairs: 0,
        ..counters::Model::new(counters::Rules::Quarantine, SKEWED, Some(101))
    };
    let mut replay = votes::Votes::new(model, counter_key());
    let plan = Plan {
        depth: 3,
        transitions: 3,
        walks: 30,
        steps: 50,
    };
    let steps = walk(&mut replay, plan);
    eprintln!("{steps} steps compared");
}
