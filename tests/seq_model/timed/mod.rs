//! The `timed` model: the quarantined repair as built
//! (`src/seq/heal.rs`), with clocks. A node's key is a counter, MISSING, or
//! a quarantine mark; every round counts replies only within its lifetime
//! T, and a marked node is set again only once the quarantine Q has passed
//! on its own clock. The state and its bookkeeping are here and in
//! `state.rs`, the steps in `step.rs`, the tests in `tests.rs`.
//!
//! # The system
//!
//! N = 3 nodes; two processes, each with a budget of calls of `next` (up
//! to `attempts` attempts each: read a majority of holders if no floor is
//! known, then propose floor + 1, as in `counters/`) and of heal passes. A
//! process that is not in a round may start either at any moment (the
//! code starts a pass from a call that saw a node lacking; any moment is
//! more runs; the debug-build tests start one only while a node lacks the
//! counter, `heal_when_lacking`, which is fewer). A node may lose its data (`Event::Lose`) while every other
//! node holds the counter: a minority at a time, the same node again
//! during its quarantine or after its repair, up to `losses` in a run.
//! Requests in flight survive a loss (a FLUSHALL; a restart that drops
//! them is a subset: a request may never be executed anyway).
//!
//! A heal pass (`AsBuilt`): a read of every node; with a majority of
//! holders counted, a node counted MISSING is sent MARK (compare-and-set
//! of the missing key to a fresh mark, timestamped by the node's clock
//! when it executes it), and a node whose mark it counted *ripe* (the
//! quarantine over on the node's clock) is repaired: a *fresh* read of
//! every node, begun after that reply, and with a majority of holders
//! counted, REPAIR (compare-and-set of the exact mark to the highest
//! counter read; the node checks ripeness again when it executes it). The
//! code asks "ripe" in a request of its own after the read; here the read's
//! reply from a marked node says it, which is more runs (ripeness only
//! grows; a mark lost in between fails the exact compare-and-set anyway).
//! Marks are numbered by the loss that emptied the node: a loss wipes a
//! mark, and a REPAIR of the old mark then does nothing.
//!
//! # Time, and why its scaling is sound
//!
//! Real time is a count of ticks of `tick_ms`; `Event::Tick` advances it,
//! and everything else happens between ticks. No clock is kept: each
//! clock runs at a rate within [1 − ρ, 1 + ρ] of real time, and the model
//! allows, in real time, the most that any such clocks allow:
//!
//! * a round (read or proposal) started at tick s may decide with the
//!   replies it got up to tick s + `round_ticks`, where `round_ticks` =
//!   ceil(T / ((1 − ρ) tick)): T on the slowest proposer clock is
//!   T / (1 − ρ) of real time, and a continuous span d covers at most
//!   ceil(d / tick) tick boundaries. At the next tick it expires: it counts
//!   none of its replies (a late decision counts no vote, and the floor it
//!   could learn from refusals is a reply that may as well be lost);
//! * a mark made at tick m may be found ripe from tick m +
//!   `quarantine_ticks` on, where `quarantine_ticks` = floor(Q / ((1 + ρ)
//!   tick)): Q on the fastest node clock is Q / (1 + ρ) of real time, and
//!   a span d covers at least floor(d / tick) tick boundaries.
//!
//! Every run with real clocks (each event at real time t placed at tick
//! floor(t / tick), events of one tick in their order) is thus a run of
//! the model: a model with no violation has none with real clocks within
//! its bounds. Ages saturate (a round's at its expiry, a mark's at ripe),
//! so the state space is finite. At today's figures (T = 5 s, Q = 10 s,
//! ρ = 1 %) and 2 s ticks, a round lives 3 ticks and the quarantine is 4:
//! the model keeps a margin of one tick, where the continuous argument
//! keeps 4.8 s; coarser ticks would lose the inequality (2.5 s ticks give
//! 3 and 3, which the model rightly finds unsafe: the scaling only rounds
//! in the direction of more runs).
//!
//! # The rules
//!
//! * `AsBuilt`: as above.
//! * `ShortQuarantine`: the same, with Q = 4 s < T.
//! * `MinorityRead`: the fresh read repairs from one holder.
//! * `NoLifetime`: rounds never expire: a vote counted after T (a round's
//!   age still shows it, saturating at T + 1 tick).
//! * `RepairFromRipeRead`: the repair uses the read in
//!   which the mark was ripe (a read begun before the node was ripe), all
//!   in one round that lives T: unsafe unless Q > 2T(1 + ρ)/(1 − ρ).
//!
//! # How the state space is kept small
//!
//! As in `counters/`: reads are not steps (each live round keeps, per
//! node, the replies it could have had so far: `Proc::hist`), a decision
//! picks one of them or none per node, only writes and ticks are steps,
//! requests that can no longer change anything are forgotten, and the
//! states that differ only by the names of the nodes (which start alike,
//! and which every rule treats alike), or of the two processes when they
//! start alike, are merged.

mod mirror;
mod packed;
mod state;
mod step;
#[cfg(test)]
mod tests;

use crate::seq_model::explorer::Violation;
use crate::seq_model::{N, NONE, PROPOSERS, node_name};

/// Room for requests in flight.
pub const CAP: usize = 24;
/// Values stay below this.
pub const VALUE_LIMIT: u8 = 127;
/// A node's key when missing; also "no floor known".
pub const MISSING: u8 = u8::MAX;
/// A node's key when it holds mark e (the node's e-th loss, from 0): MARK + e.
pub const MARK: u8 = 200;

pub fn is_counter(k: u8) -> bool {
    k < MARK
}

/// Which algorithm the processes and nodes follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// The quarantined repair as built (T = 5 s, Q = 10 s, ρ = 1 %).
    AsBuilt,
    /// As built, with a quarantine shorter than a round (Q = 4 s).
    ShortQuarantine,
    /// The repair's fresh read needs one holder, not a majority.
    MinorityRead,
    /// Rounds count replies however late they decide.
    NoLifetime,
    /// The repair uses the read in which the mark was seen ripe (one round
    /// of lifetime T), not a fresh read begun after.
    RepairFromRipeRead,
}

/// The clocks, in milliseconds, and their scaling into ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// T: how long a round counts replies, on its proposer's clock.
    pub round_ms: u64,
    /// Q: the quarantine, on the marked node's clock.
    pub quarantine_ms: u64,
    /// ρ, in percent: every clock's rate is within 1 ± ρ of real time.
    pub drift_percent: u64,
    /// Real time per tick.
    pub tick_ms: u64,
}

/// The figures as built (`src/timing/sequence.rs`), in ticks of 2 s.
pub const TODAY: Timing = Timing {
    round_ms: 5_000,
    quarantine_ms: 10_000,
    drift_percent: 1,
    tick_ms: 2_000,
};

impl Timing {
    /// The last tick (from the round's start) at which a round may still
    /// decide counting replies: ceil(T / ((1 − ρ) tick)).
    pub fn round_ticks(&self) -> u8 {
        let num = self.round_ms * 100;
        let den = (100 - self.drift_percent) * self.tick_ms;
        u8::try_from(num.div_ceil(den)).expect("a round of fewer than 256 ticks")
    }

    /// The first tick (from the mark) at which a mark may be ripe:
    /// floor(Q / ((1 + ρ) tick)).
    pub fn quarantine_ticks(&self) -> u8 {
        let num = self.quarantine_ms * 100;
        let den = (100 + self.drift_percent) * self.tick_ms;
        u8::try_from(num / den).expect("a quarantine of fewer than 256 ticks")
    }
}

/// One exploration: the rules, the clocks, and the bounds.
#[derive(Clone, Debug)]
pub struct Model {
    pub rules: Rules,
    pub timing: Timing,
    /// Calls of `next` per process.
    pub calls: [u8; PROPOSERS],
    /// Attempts per call.
    pub attempts: u8,
    /// Heal passes per process.
    pub passes: [u8; PROPOSERS],
    /// The floor each process knows at the start (from earlier calls).
    pub floors: [Option<u8>; PROPOSERS],
    /// Data losses in a run.
    pub losses: u8,
    /// A heal pass starts only while some node lacks the counter (the
    /// code starts one after a call saw a node lacking): fewer runs, for
    /// the debug-build tests; the deeper explorations start one anywhere.
    pub heal_when_lacking: bool,
    /// Every node holds this at the start; it was handed out before.
    pub base: u8,
    /// Stop at the first state this holds in, and return the run to it.
    pub goal: Option<fn(&State) -> bool>,
    /// Visit one state of each set of symmetric states (the nodes renamed,
    /// the processes swapped when they start alike).
    pub mirror: bool,
    /// States the search may visit before it gives up (a memory guard).
    pub limit: usize,
}

impl Model {
    /// Two processes that know the floor 100, one call of one attempt and
    /// two heal passes each, one loss; the clocks of `rules`.
    pub fn new(rules: Rules) -> Model {
        let timing = match rules {
            Rules::ShortQuarantine => Timing {
                quarantine_ms: 4_000,
                ..TODAY
            },
            _ => TODAY,
        };
        Model {
            rules,
            timing,
            calls: [1, 1],
            attempts: 1,
            passes: [2, 2],
            floors: [Some(100), Some(100)],
            losses: 1,
            heal_when_lacking: false,
            base: 100,
            goal: None,
            mirror: true,
            limit: 5_000_000,
        }
    }

    pub fn lifetime(&self) -> bool {
        self.rules != Rules::NoLifetime
    }

    /// Holders a repair's read needs.
    pub fn repair_holders(&self) -> usize {
        if self.rules == Rules::MinorityRead {
            1
        } else {
            crate::seq_model::MAJORITY
        }
    }
}

// Request kinds. Reads are not messages: see `Proc::hist`.
pub const PROPOSE: u8 = 1;
/// Compare-and-set of a missing key to a fresh mark.
pub const MARK_REQ: u8 = 2;
/// Compare-and-set of mark `who` to the value, once ripe.
pub const REPAIR: u8 = 3;

/// A request in flight: kind, node, `who` (PROPOSE: the process whose live
/// round sent it, or NONE once that round has ended; REPAIR: the mark it
/// expects), and the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Msg(pub u32);

pub const EMPTY: Msg = Msg(u32::MAX);

impl Msg {
    pub fn new(kind: u8, node: u8, who: u8, val: u8) -> Msg {
        Msg(u32::from_be_bytes([kind, node, who, val]))
    }
    pub fn kind(self) -> u8 {
        self.0.to_be_bytes()[0]
    }
    pub fn node(self) -> u8 {
        self.0.to_be_bytes()[1]
    }
    pub fn who(self) -> u8 {
        self.0.to_be_bytes()[2]
    }
    pub fn val(self) -> u8 {
        self.0.to_be_bytes()[3]
    }
    /// The same proposal, its round over.
    pub fn stale(self) -> Msg {
        Msg::new(self.kind(), self.node(), NONE, self.val())
    }
}

// Phases of a process.
pub const IDLE: u8 = 0;
/// Reading a floor.
pub const READING: u8 = 1;
pub const PROPOSING: u8 = 2;
/// A heal pass's first read.
pub const HEAL_READ: u8 = 3;
/// A repair's fresh read.
pub const REPAIR_READ: u8 = 4;

// History bits (`Proc::hist`): the replies a node may have given.
/// Counters base .. base + H_SPAN − 1: bit (counter − base).
pub const H_SPAN: u8 = 16;
/// The key missing (a proposal: missing or marked, no vote).
pub const H_MISSING: u32 = 1 << 16;
/// Mark e, ripe: bit H_RIPE << e.
pub const H_RIPE: u32 = 1 << 17;

// Reply codes of a decision (besides counters).
pub const R_NONE: u8 = u8::MAX;
pub const R_ACCEPTED: u8 = 254;
pub const R_MISSING: u8 = 253;
/// Mark e, ripe: R_RIPE + e.
pub const R_RIPE: u8 = 240;

/// A process: its budgets used, its call, and its live round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Proc {
    pub calls: u8,
    pub passes: u8,
    pub in_call: bool,
    pub attempts: u8,
    pub phase: u8,
    /// The value proposed by the live proposal.
    pub value: u8,
    pub floor: u8,
    /// The highest value handed out when the current call started.
    pub start_max: u8,
    /// Ticks since the live round started.
    pub age: u8,
    /// Nodes that accepted the live proposal (bit mask).
    pub accepted: u8,
    /// Nodes that may still reply to the live round (bit mask).
    pub pending: u8,
    /// Per node, the replies it may have given the live round so far.
    pub hist: [u32; N],
    /// REPAIR_READ: the node to repair, and its mark (MARK + e).
    pub target: u8,
    pub target_mark: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct State {
    /// Counter, MISSING, or MARK + e.
    pub nodes: [u8; N],
    /// Ticks since the marked node (at most one) was marked, saturating at
    /// the quarantine.
    pub mark_age: u8,
    pub losses: u8,
    /// Values handed out (bit v − base), the base included.
    pub handed: u32,
    pub violation: Option<Violation>,
    pub p: [Proc; PROPOSERS],
    pub len: u8,
    /// Requests in flight, sorted; EMPTY past `len`.
    pub msgs: [Msg; CAP],
}

/// One step of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Real time advances one tick.
    Tick,
    /// The node's key disappears.
    Lose(u8),
    /// The node executes the request and changes.
    Execute(Msg),
    /// Starts a call and makes its first attempt at once.
    StartCall(u8),
    /// Another attempt of the current call.
    Attempt(u8),
    /// Starts a heal pass: reads every node.
    StartPass(u8),
    /// The process decides its live round with one reply code per node.
    Decide(u8, [u8; N]),
}

pub fn key_text(k: u8) -> String {
    match k {
        MISSING => "MISSING".to_string(),
        k if k >= MARK => format!("healing#{}", k - MARK + 1),
        k => k.to_string(),
    }
}
