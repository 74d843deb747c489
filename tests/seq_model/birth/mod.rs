//! The `birth` model: creating a sequence with clocks, and ending a
//! creation that stopped half-way. A node's key is MISSING, a mark
//! (`unborn:g`), a prepared state (`creating:x`, with its age on the node's
//! clock) or a counter; creators read every node (marking missing keys),
//! prepare every node by compare-and-set of the mark read, and settle each
//! to 0 once every node said prepared; proposers hand out values from a
//! majority as in `timed/`. The state and its bookkeeping are here and in
//! `state.rs`, the steps in `step.rs`, the tests in `tests.rs`.
//!
//! # Why time
//!
//! Without time (`two_phase/`, the rule `Final`), one loss or one killed
//! creator leaves `[unborn, creating:X, creating:X]` with nothing in flight,
//! which no rule may create from: a late settle of X could still land. The
//! rule explored here (`Rules::SHIPPED`, `src/seq/create.rs`) bounds that
//! with the clocks, as the quarantine bounds a lost vote (`timed/`):
//!
//! 1. a prepared state records the node's clock (`creating:<ms>:<hex>`);
//! 2. a creator settles only if its marking read and its preparation both
//!    ended within T of the read's start, on its own clock;
//! 3. a settle lands only on a prepared state younger than T on its node's
//!    clock;
//! 4. a read that got every node's answer within its lifetime T (as every
//!    round), no holder, every node a mark or prepared, a majority prepared
//!    for one creation, and every prepared node *ripe* (older than the
//!    creation quarantine Qc on its clock, as it said) rolls every prepared
//!    node back to a fresh mark, by compare-and-set of its exact state (the
//!    node checks its age again); from marks only, a creation proceeds as
//!    before. Nobody adopts a creation prepared everywhere any more: it is
//!    rolled back too.
//!
//! Every prepared state of X was written after every creator of X began its
//! read (each read that node as the mark that X replaced, and a mark is
//! written once); so every settle of X lands within 2T (in real time, with
//! drift) of such a start, and no node of X is ripe before Qc after it:
//! with Qc > 2T(1 + ρ)/(1 − ρ), every settle of X has landed before any
//! node of X is ripe, so a node seen ripe is never settled and a rollback
//! never meets a settle. Nor was a node the read counted as a mark settled
//! since: a preparation replacing that mark came after the read's start and
//! within T of its creator's start, at least Qc before any node of X is
//! ripe, whereas the ripe answers came within T of the read's start, and
//! Qc > 2T (`Rules::UNBOUNDED_READ` drops the read's bound, and a late
//! preparation's settle lands beside the rollback). A majority prepared for
//! X means at most a minority of nodes was ever settled by X, so nothing was
//! handed out from it; a lone prepared node beside marks may be what is
//! left of a creation whose holders a majority loss wiped
//! (`after_hand_out`), which no rule may recreate at 0.
//!
//! # Time, as in `timed/`
//!
//! Ticks of real time; a round started at tick s decides at most at s +
//! ceil(T / ((1 − ρ) tick)); a settle lands while a state's age in ticks is
//! at most ceil(T / ((1 − ρ) tick)); a state is ripe from floor(Qc / ((1 +
//! ρ) tick)) ticks on. Every run with real clocks is a run of the model.
//!
//! # Losses
//!
//! A loss turns a key to MISSING. With `minority`, a node counts as lost
//! until it holds a counter again, and no other node is lost meanwhile (as
//! in `two_phase/`); without it, any node may be lost (a majority loss).
//!
//! # What is not in it
//!
//! The quarantined repair of a node beside a majority of holders
//! (`timed/` has it): here such a node stays without the counter, and the
//! sequence goes on with the majority.

pub mod state;
mod step;
#[cfg(test)]
mod tests;

use crate::seq_model::explorer::Violation;
use crate::seq_model::{N, NONE, PROPOSERS, node_name};

/// Room for requests in flight.
pub const CAP: usize = 24;
/// The key is missing; also "no floor known".
pub const MISSING: u8 = u8::MAX;
/// A mark is UNBORN + 8t + g: the node's g-th mark, `t` 0 for a read's
/// mark (`unborn:<hex>`), x + 1 for a mark rolled back from `creating:x`
/// (`unborn:<hex>:<x>`: the rollback says which creation it undid).
pub const UNBORN: u8 = 64;
/// `creating:x` (the creation of `State::views[x]`) is PREPARED + x.
pub const PREPARED: u8 = 128;
/// Creation ids (slots of `State::views`).
pub const IDS: usize = 6;
/// Counters stay below this.
pub const VALUES: u8 = 8;

pub fn holder(k: u8) -> bool {
    k < UNBORN
}
pub fn is_unborn(k: u8) -> bool {
    (UNBORN..PREPARED).contains(&k)
}
pub fn is_prepared(k: u8) -> bool {
    (PREPARED..MISSING).contains(&k)
}
pub fn unborn(tag: u8, g: u8) -> u8 {
    assert!(g < 6 && tag <= IDS as u8, "marks outgrew the model");
    UNBORN + 8 * tag + g
}
/// A mark's tag: 0, or the creation it undid + 1.
pub fn tag(k: u8) -> u8 {
    (k - UNBORN) / 8
}
pub fn generation(k: u8) -> u8 {
    (k - UNBORN) % 8
}

/// How a rollback is decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rollback {
    /// A majority of the nodes must be prepared for one creation (else one
    /// prepared node is enough).
    pub majority: bool,
    /// Every prepared node must have said ripe in the read (else the
    /// rollback is sent, and each node checks its own age).
    pub seen_ripe: bool,
}

/// Which algorithm the processes and nodes follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    pub name: &'static str,
    /// A view prepared everywhere for one creation is settled.
    pub adopt: bool,
    pub rollback: Option<Rollback>,
    /// A settle lands only on a state younger than T.
    pub settle_bound: bool,
    /// A creator settles only if its read and preparation ended within T.
    pub creator_bound: bool,
    /// A read counts replies, and decides, only within T of its start.
    /// Without it a read lives on past T, and may then decide only a
    /// rollback (the variant that isolates that bound).
    pub read_bound: bool,
    /// Qc in milliseconds.
    pub rollback_ms: u64,
}

const RULE: Rollback = Rollback {
    majority: true,
    seen_ripe: true,
};

impl Rules {
    /// The rule as shipped (the module docs).
    pub const SHIPPED: Rules = Rules {
        name: "shipped",
        adopt: false,
        rollback: Some(RULE),
        settle_bound: true,
        creator_bound: true,
        read_bound: true,
        rollback_ms: 15_000,
    };
    /// The draft: prepared states older than T rolled back from any view
    /// with a prepared node, settles at any age, adoption kept.
    pub const DRAFT: Rules = Rules {
        name: "draft",
        adopt: true,
        rollback: Some(Rollback {
            majority: false,
            seen_ripe: false,
        }),
        settle_bound: false,
        creator_bound: false,
        read_bound: true,
        rollback_ms: 5_000,
    };
    /// As shipped, one prepared node enough for a rollback.
    pub const ANY_PREPARED: Rules = Rules {
        name: "one prepared node enough",
        rollback: Some(Rollback {
            majority: false,
            seen_ripe: true,
        }),
        ..Rules::SHIPPED
    };
    /// As shipped, settles at any age.
    pub const NO_SETTLE_BOUND: Rules = Rules {
        name: "settles at any age",
        settle_bound: false,
        ..Rules::SHIPPED
    };
    /// As shipped, rollbacks sent without the read seeing every node ripe.
    pub const UNSEEN_RIPE: Rules = Rules {
        name: "rollback not seen ripe",
        rollback: Some(Rollback {
            majority: true,
            seen_ripe: false,
        }),
        ..Rules::SHIPPED
    };
    /// As shipped, with Qc = 10 s (the healing quarantine).
    pub const SHORT: Rules = Rules {
        name: "Qc = 10 s",
        rollback_ms: 10_000,
        ..Rules::SHIPPED
    };
    /// As shipped, but the creator's preparation may end any time after
    /// its read.
    pub const NO_CREATOR_BOUND: Rules = Rules {
        name: "creator unbounded",
        creator_bound: false,
        ..Rules::SHIPPED
    };
    /// As shipped, but a rollback may be decided from a read past its
    /// lifetime: its ripe answers counted long after the marks it saw.
    pub const UNBOUNDED_READ: Rules = Rules {
        name: "rollback without the read's lifetime bound",
        read_bound: false,
        ..Rules::SHIPPED
    };
}

/// T = 5 s, ρ = 1 %, ticks of 2 s.
pub const ROUND_MS: u64 = 5_000;
pub const DRIFT_PERCENT: u64 = 1;
pub const TICK_MS: u64 = 2_000;

/// Ticks within which a round decides, and a settle lands: ceil(T / ((1 −
/// ρ) tick)).
pub fn round_ticks() -> u8 {
    let ticks = (ROUND_MS * 100).div_ceil((100 - DRIFT_PERCENT) * TICK_MS);
    u8::try_from(ticks).unwrap()
}

/// Ticks after which a prepared state may be ripe: floor(Qc / ((1 + ρ)
/// tick)).
pub fn rollback_ticks(rules: &Rules) -> u8 {
    u8::try_from(rules.rollback_ms * 100 / ((100 + DRIFT_PERCENT) * TICK_MS)).unwrap()
}

/// Where a run starts.
#[derive(Clone, Copy, Debug)]
pub struct Start {
    pub nodes: [u8; N],
    /// The views of the creations prepared at the start (by id): the marks
    /// read.
    pub views: [[u8; N]; IDS],
    /// Each node's next mark.
    pub gens: [u8; N],
    /// Values handed out before.
    pub handed: u32,
}

const NO_VIEW: [u8; N] = [MISSING; N];

/// No node holds anything.
pub const FRESH: Start = Start {
    nodes: [MISSING; N],
    views: [NO_VIEW; IDS],
    gens: [0; N],
    handed: 0,
};

/// The creation X of the view [unborn:0 ×3] prepared nodes 2 and 3, and
/// node 1 holds a mark: its creator was killed between two writes, or node
/// 1 lost its data after it; nothing in flight.
pub const STUCK: Start = Start {
    nodes: [UNBORN + 1, PREPARED, PREPARED],
    views: first_view(),
    gens: [2, 1, 1],
    handed: 0,
};

/// X prepared every node, settled nodes 2 and 3, 1 was handed out, and
/// node 1's settle never landed; then nodes 2 and 3 lost their data at
/// once (a majority loss).
pub const AFTER_MAJORITY_LOSS: Start = Start {
    nodes: [PREPARED, MISSING, MISSING],
    views: first_view(),
    gens: [1, 1, 1],
    handed: 1 << 1,
};

/// X prepared node 1 only (its creator was killed), nodes 2 and 3 marked
/// again since: the same keys a majority loss leaves from
/// `AFTER_MAJORITY_LOSS` once read, with nothing handed out.
pub const ONE_PREPARED: Start = Start {
    nodes: [PREPARED, UNBORN + 1, UNBORN + 1],
    views: first_view(),
    gens: [1, 2, 2],
    handed: 0,
};

const fn first_view() -> [[u8; N]; IDS] {
    let mut views = [NO_VIEW; IDS];
    views[0] = [UNBORN; N];
    views
}

/// One exploration.
#[derive(Clone, Debug)]
pub struct Model {
    pub rules: Rules,
    pub start: Start,
    /// Attempts (a read, or a proposal) per process.
    pub attempts: [u8; PROPOSERS],
    pub losses: u8,
    /// A minority (one node) lost at a time.
    pub minority: bool,
    pub goal: Option<fn(&Model, &State) -> bool>,
    pub limit: usize,
}

impl Model {
    pub fn new(rules: Rules, start: Start) -> Model {
        Model {
            rules,
            start,
            attempts: [2, 1],
            losses: 1,
            minority: true,
            goal: None,
            limit: 6_000_000,
        }
    }
}

// Request kinds.
pub const READ: u8 = 0;
pub const PROPOSE: u8 = 1;
/// Compare-and-set of mark `a` to `creating:b`.
pub const PREP: u8 = 2;
/// `creating:a` to 0.
pub const SETTLE: u8 = 3;
/// `creating:a`, ripe, to a fresh mark.
pub const ROLLBACK: u8 = 4;

/// A request in flight: `who` is the process whose live round sent it, or
/// NONE once that round has ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Msg {
    pub kind: u8,
    pub node: u8,
    pub who: u8,
    pub a: u8,
    pub b: u8,
}

pub const EMPTY: Msg = Msg {
    kind: u8::MAX,
    node: u8::MAX,
    who: u8::MAX,
    a: u8::MAX,
    b: u8::MAX,
};

// Phases.
pub const IDLE: u8 = 0;
pub const READING: u8 = 1;
pub const PREPARING: u8 = 2;
pub const PROPOSING: u8 = 3;

// History bits. READING: counter v bit v, `creating:x` bit 8 + x, ripe bit
// 14 + x, a mark bit 20 + 6t + g. PREPARING: B_OK. PROPOSING: refused at v
// bit v, no counter B_NONE.
pub const B_OK: u8 = 0;
pub const B_NONE: u8 = 15;
/// No reply counted.
pub const R_NONE: u8 = u8::MAX;
/// PROPOSING: the node accepted.
pub const R_ACCEPTED: u8 = 254;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Proc {
    pub attempts: u8,
    pub phase: u8,
    pub age: u8,
    pub value: u8,
    pub floor: u8,
    /// PREPARING: the creation id.
    pub id: u8,
    pub accepted: u8,
    pub pending: u8,
    pub hist: [u64; N],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct State {
    pub nodes: [u8; N],
    /// Ticks since a prepared node was prepared, saturating at ripe.
    pub age: [u8; N],
    pub gens: [u8; N],
    /// Nodes lost and not holders since (bit mask).
    pub lost: u8,
    pub losses: u8,
    pub handed: u32,
    pub violation: Option<Violation>,
    pub views: [[u8; N]; IDS],
    /// Creations (bit per id) rolled back on some node.
    pub rolled: u8,
    /// A settle landed after a rollback of its creation, or a rollback
    /// landed beside a holder: the dead end of a rollback.
    pub mixed: bool,
    pub p: [Proc; PROPOSERS],
    pub len: u8,
    pub msgs: [Msg; CAP],
}

/// One step of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Tick,
    Lose(u8),
    Execute(Msg),
    /// A read if no floor is known, else a proposal of floor + 1.
    Attempt(u8),
    Decide(u8, [u8; N]),
}

pub fn key_text(k: u8) -> String {
    match k {
        MISSING => "MISSING".to_string(),
        k if is_unborn(k) && tag(k) == 0 => format!("unborn:{}", generation(k)),
        k if is_unborn(k) => format!("unborn:{}:X{}", generation(k), tag(k)),
        k if is_prepared(k) => format!("creating:X{}", k - PREPARED + 1),
        k => k.to_string(),
    }
}

pub fn node_text(s: &State, n: usize) -> String {
    let k = s.nodes[n];
    if is_prepared(k) {
        format!("{} (age {})", key_text(k), s.age[n])
    } else {
        key_text(k)
    }
}

pub fn name(n: usize) -> String {
    node_name(n as u8)
}
