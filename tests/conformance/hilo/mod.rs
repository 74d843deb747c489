//! Conformance of the hilo window agent's model (`tests/hilo_model/`) and
//! the shipped `fence.lua`, `raise.lua`, `create.lua` and `reserve.lua`,
//! run through the library's builders (`yaraus::hilo::script`).
//!
//! # The tie (`tie.rs`; both sides' vocabulary in `keys.rs`)
//!
//! * One `redis-server` per modelled shard; a shard restarting empty is
//!   `FLUSHALL` on it. Run r's token r + 1 is the fence the agent sends:
//!   20-digit fencing token, ':', a nonce of the run's own.
//! * A request executing (its reply received or lost: the script runs
//!   either way) is the run's script with what the run holds: its fence;
//!   the hwm it planned and the window size (raise); its window on that
//!   shard (create). A reserver taking an id is `reserve.lua` with a batch
//!   of one. Starting and planning run no script (the agent's read-only
//!   look before its fences is left out).
//! * Model ids 0..32 are sent as `BASE + id`, across 10^19, where the
//!   20-digit text carries through every digit and Lua's numbers are not
//!   exact: the scripts compare and add text, and must hold there too.
//! * The model's answer is its own script (`Shard::fence`, `raise`,
//!   `create`, `reserve`) on the shard before the step, in the script's
//!   terms (the hwm a fence replies, the fence a refusal names, the hwm a
//!   raise leaves, the ids reserved). The model does not say which check
//!   refused a create; the tie names the fence when it is not the run's
//!   (the script checks it first), the hwm otherwise.
//! * After every step each shard's keys, read with `status.lua`, must be
//!   the model's: fence text, hwm, and every open window with its cursor
//!   (all three tests keep windows, `Watch::Ids`), and a fence replies the
//!   model's count of open windows.
//!
//! No hilo script reads the server's clock, so no step waits. The model's
//! plans are a superset of the agent's (a run's windows on the shards in
//! any order; the agent takes them in shard order).
//!
//! # Coverage, and why three tests
//!
//! The exhaustive prefix reaches each state through the first run found,
//! so a step into a state already reached is never replayed: with lost
//! replies, a refusal (the run gives up) mostly lands where a lost reply
//! already led, and no fence refusal is compared within any affordable
//! depth. Hence: two shards without losses, exhaustive to depth 8, where
//! every answer is its own state; one shard with losses, exhausted (every
//! reachable state; there both runs create on the shard, so a reserver
//! chooses between two windows); three shards and three runs with losses
//! and two restarts, by random walks. Each test asserts the answers its
//! plan is sure to compare.

mod keys;
mod tie;

use super::{Plan, walk};
use tie::Hilo;
use yaraus_models::hilo_model::model::{Model, Rules, Spread, Watch};

/// Every answer the scripts give under the protocol, by script, and a
/// restart: what a walk must have compared to prove much. A create refused
/// for its hwm is not one: the fence check refuses first
/// (`tests/hilo_model/`, finding 3).
const EVERY_ANSWER: &[&str] = &[
    "Fence Fenced",
    "Fence FenceHeld",
    "Raise Raised",
    "Raise NotOurs",
    "Create Created",
    "Create NotOurs",
    "Reserve Reserved",
    "restart",
];

/// Walks `model` under `plan` beside the servers, and checks that the
/// walk compared each of `wanted`.
fn conform(model: Model, plan: Plan, wanted: &[&str]) {
    let mut hilo = Hilo::new(model);
    let compared = walk(&mut hilo, plan);
    eprintln!(
        "conformance hilo: {compared} steps compared, answers {:?}",
        hilo.seen
    );
    let missed: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|&k| !hilo.seen.contains(k))
        .collect();
    assert!(
        missed.is_empty(),
        "the walk never compared {missed:?}: lengthen its plan"
    );
}

/// One shard, two runs, windows of two ids, one empty restart, replies
/// that may be lost: every state the model reaches (the prefix exhausts
/// it). The one family whose runs both create on one shard within a short
/// walk: a reserver then chooses between two open windows.
#[test]
fn conformance_hilo_one_shard_every_state() {
    let model = Model {
        watch: Watch::Ids,
        size: 2,
        ..Model::new(Rules::Protocol, 1, 2, 1)
    };
    let plan = Plan {
        depth: 24,
        transitions: 24,
        walks: 20,
        steps: 40,
    };
    let wanted = [
        "Fence Fenced",
        "Raise Raised",
        "Raise NotOurs",
        "Create Created",
        "Reserve Reserved",
        "Reserve Reserved, two windows open",
        "restart",
    ];
    conform(model, plan, &wanted);
}

/// Two runs on two shards, windows of two ids, reservers, one empty
/// restart: every state within 8 steps, which reaches every answer (a
/// refusal and a lost reply often lead to the same state, and the prefix
/// takes the first run to each; without lost replies, each refusal is its
/// own state), then random walks through the rest.
#[test]
fn conformance_hilo_two_runs_two_shards() {
    let model = Model {
        spread: Spread::Either,
        watch: Watch::Ids,
        size: 2,
        losses: false,
        ..Model::new(Rules::Protocol, 2, 2, 1)
    };
    let plan = Plan {
        depth: 8,
        transitions: 8,
        walks: 30,
        steps: 40,
    };
    conform(model, plan, EVERY_ANSWER);
}

/// Three runs on three shards (the orders of three tokens), two empty
/// restarts, replies that may be lost (the run gives up; its requests
/// still in flight execute later, or never): random walks, most of which
/// end before a create (a lost reply or a restart ends a run), so only
/// the answers nearly every walk reaches are required of them.
#[test]
fn conformance_hilo_three_runs_lost_replies() {
    let model = Model {
        spread: Spread::Either,
        watch: Watch::Ids,
        ..Model::new(Rules::Protocol, 3, 3, 2)
    };
    let plan = Plan {
        depth: 4,
        transitions: 4,
        walks: 150,
        steps: 60,
    };
    let wanted = [
        "Fence Fenced",
        "Fence FenceHeld",
        "Raise Raised",
        "Raise NotOurs",
        "restart",
    ];
    conform(model, plan, &wanted);
}
