//! The `counters` model: a node's key is a counter (a small integer) or
//! MISSING, under four sets of rules (`Rules`). The state and its
//! bookkeeping are here and in `state.rs`, the steps in `step.rs`, the
//! tests in `tests.rs`.
//!
//! # The system
//!
//! N = 3 nodes, each with one counter: a small integer, or MISSING when the
//! key is gone. Two proposers (P1, P2), each making `calls` calls; a call is
//! up to `attempts` attempts until it hands out a value or gives up. An
//! attempt reads every node when the proposer knows no floor (the highest
//! counter it has seen), then proposes floor + 1 to every node; a node
//! accepts a proposal (set-if-less-than) when its counter is below it, else
//! refuses and says what it holds, which raises the proposer's floor. The
//! proposer keeps its floor from call to call, as `MajoritySequence` does.
//! A value is handed out when a majority (2) accepted it. `handed_before`
//! stands for the calls that completed before the run: the counters
//! [101, 100, 101] start with 101 handed out, [100, 100, 100] with 100.
//!
//! Requests in flight form an unordered multiset: a node executes any of
//! them at any later moment, or never (a lost message, or one that is
//! still in flight when the run ends), and a proposer counts any subset of
//! the replies that exist when it decides. Loss and reordering are thus
//! both in the model without a "drop" step. A node may lose its data at any
//! moment (`Event::Lose`): at most once in a run (a minority of the 3), or,
//! with `losses: 2`, a second time once the first lost node holds the key
//! again. By default the requests in flight to that node survive the loss,
//! as after a FLUSHALL, a DEL or an eviction; `loss_resets_connections`
//! drops them instead, as a restart does.
//!
//! # Time
//!
//! There are no clocks. A proposer's round (the requests of one read, one
//! proposal, or one repair read) is *live* from its sending until the
//! proposer decides: a proposer may stop waiting at any moment (its
//! timeout) and decide with the replies it has. Under `Quarantine` every
//! round also has a bounded lifetime, modelled as `Event::Expire`, which
//! the environment may take at any moment of a live round: the proposer
//! then counts none of that round's replies and gives the round up (a
//! proposal's value is burned). In both cases the round *ends*: its
//! requests may still reach the nodes later, but no reply of it is ever
//! counted. The quarantine is kept per node a proposer saw missing: WAITING
//! while the other proposer's round that was live at that moment has not
//! ended, READY afterwards (`Proposer::seen`). A proposer that saw a node
//! missing more than once keeps the earliest sighting (the weakest
//! requirement: more runs). Under `MissingAsZero` and `NaiveRepair` a round has no
//! lifetime and ends only when its proposer decides.
//!
//! The abstraction has limits: a lifetime is not a duration here, so a
//! round may outlive any number of other steps (a loss, a restart, another
//! proposer's whole call), as a slow network or a paused process allows;
//! and there are only two proposers, so "every round live at the sighting"
//! is the other proposer's round.
//!
//! # The rules
//!
//! * `MissingAsZero`: a missing key reads as 0 and votes like
//!   0, so it accepts any proposal.
//! * `NaiveRepair`: a missing key does not vote (a proposal finds it
//!   MISSING and changes nothing) and is not a holder; a read that counts
//!   a majority of holders and sees a node MISSING sends it, at once, SET
//!   (if still missing) to that read's highest counter, then proposes.
//! * `Quarantine`, the rule to ship: a missing key neither votes nor counts
//!   towards a read's majority; a floor needs a majority of *holders*. A
//!   proposer that saw node X missing may repair it (`Event::Repair`, at
//!   most `repairs` times) only once every round live at that sighting has
//!   ended; it then reads every node again and, if that new read counted a
//!   majority of holders or all N nodes, sends X SET (if still missing) to
//!   the highest holder's counter (0 when all N replied and every holder
//!   holds 0). A fresh sequence is created only by a read that counted all
//!   N nodes, all missing: SET 0 if missing to every node, then floor 0
//!   (with `creation_waits`, that read only counts as seeing every node
//!   missing, and the creation is made by a repair round after the same
//!   wait). Values handed out are at least 1.
//!
//! * `ZeroCompletion`, completing a missing node with 0: a missing key neither
//!   votes nor counts; a read that a majority answered, in which every
//!   holder that answered (one at least) holds exactly 0, sends the nodes
//!   it saw missing SET 0 if missing at once. No other repair, no creation.
//!
//! # How the state space is kept small
//!
//! * A read changes no node, so it is not a step of its own: each live
//!   round keeps, per node, every reply the node could have given it so far
//!   (`Proposer::hist`: the counters the node held since the request was
//!   sent), and the decision picks one of them or none. Likewise for a
//!   refused proposal and a proposal that found the key missing. Only the
//!   steps that change a node are steps: accepting a proposal, setting a
//!   missing key, losing the key. This is the same set of runs, without the
//!   interleavings of steps that commute. (A proposal, once accepted, has
//!   never been refused: its refusals are dropped from the history then.)
//! * A call makes its first attempt in the step that starts it: a call that
//!   started earlier would behave the same and be checked against a
//!   real-time bound no higher, so no violation is lost. Giving a call up
//!   shows only through the next call, so it is part of that step too.
//! * Requests that can no longer change anything are forgotten (a proposal
//!   at or below a counter, a SET on a held key, once no key can go missing
//!   any more), and P1 and P2 are interchangeable when they start alike: the
//!   search visits one state of each mirror pair, and a run found is
//!   replayed as a run of the concrete system.
//!
//! # Bounds
//!
//! The tests use one call of one attempt per proposer, one repair round
//! each and one loss (`small`): the bounds under which `MissingAsZero`,
//! `NaiveRepair` and `ZeroCompletion` already hand out a value twice.
//! `Quarantine` is also run with a proposer that knows a floor from earlier
//! calls (it proposes at once), with two attempts per call, and from all
//! keys missing without a loss; the liveness test uses two calls each and
//! no loss. With one attempt a proposer has no round left after a repair,
//! so there the quarantine wait is not needed; with two attempts it is:
//! without it (every sighting READY at once) the two-attempt test hands
//! out 101 twice, as `NaiveRepair` does. `deeper_bounds` (`deeper.rs`)
//! explores larger bounds and prints what they find.
//!
//! # What it finds
//!
//! * `MissingAsZero` hands out 101 twice: the known bug.
//! * `NaiveRepair` hands out 101 twice: a proposal accepted by a node just
//!   before it loses its data is counted, with a late acceptance elsewhere,
//!   while another proposer repairs the node from a read that did not see
//!   that proposal, and has the repaired node accept 101 again.
//! * `ZeroCompletion` hands out 1 twice, as `NaiveRepair` does: node k
//!   accepts P1's proposal 1 and loses its data; P2's read sees k missing
//!   beside two holders of 0 and completes k with 0; k accepts P2's
//!   proposal 1, and P1 counts k's first acceptance with a late one
//!   elsewhere while P2 counts k's second with the third node's.
//! * `Quarantine` finds nothing from held counters with one loss, within
//!   the bounds above. It is unsafe in two other cases:
//!   - creation: all N read missing does not mean that nothing was handed
//!     out. A creation write (SET 0 if missing) lands on a node that was
//!     created, accepted 1 and lost its data meanwhile, or a node that lost
//!     its data before the other creation writes landed makes all N read
//!     missing again; 1 is handed out twice, with one loss, with losses as
//!     restarts, and with the creation waiting out the quarantine too;
//!   - a second loss of the node once repaired: another proposer's repair
//!     of the first loss (its SET if missing, decided from an older read)
//!     lands after the second loss and sets the node below a value it had
//!     accepted for a round that is still live, which then counts that
//!     acceptance together with another node's; the quarantine waited for
//!     the rounds live when the *first* loss was seen.
//!

mod state;
mod step;
#[cfg(test)]
mod tests;

use crate::seq_model::explorer::Violation;
use crate::seq_model::{N, NONE, PROPOSERS, node_name, proposer_name};

pub use state::{Options, Reply, describe_reply, handed_bit};

/// A node's counter when its key is missing; also "no floor known".
pub const MISSING: u8 = u8::MAX;
/// Room for requests in flight.
pub const CAP: usize = 24;
/// Values stay below this (7 bits in a request).
pub const VALUE_LIMIT: u8 = 127;

/// Start states: every node holds 100 (100 handed out before).
pub const HOLD_100: [Option<u8>; N] = [Some(100), Some(100), Some(100)];
/// Node 2 missed the proposal of 101, which was handed out.
pub const SKEWED: [Option<u8>; N] = [Some(101), Some(100), Some(101)];
/// A fresh sequence: every key missing.
pub const FRESH: [Option<u8>; N] = [None, None, None];
/// Just created: every node holds 0, nothing handed out.
pub const CREATED: [Option<u8>; N] = [Some(0), Some(0), Some(0)];

/// Which algorithm the proposers and nodes follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// The shipped scripts: a missing key reads as 0 and votes like 0.
    MissingAsZero,
    /// A missing key does not vote; a read that sees it missing beside a
    /// majority of holders sets it to that read's maximum at once.
    NaiveRepair,
    /// A missing key neither votes nor counts; it is repaired only after a
    /// quarantine wait and a fresh read; a fresh sequence is created only
    /// from a read of all N nodes, all missing.
    Quarantine,
    /// A missing key neither votes nor counts; a
    /// read that a majority answered, in which every holder that answered
    /// (one at least) holds exactly 0, completes the nodes it saw missing
    /// at once with SET 0 if missing. Nothing else repairs or creates.
    ZeroCompletion,
}

/// One exploration: the rules, where the counters start, and the bounds.
#[derive(Clone, Debug)]
pub struct Model {
    pub rules: Rules,
    /// Each node's counter at the start (`None`: key missing).
    pub initial: [Option<u8>; N],
    /// The highest value handed out before the run, by a call that
    /// completed before any call of the run started.
    pub handed_before: Option<u8>,
    /// The floor each proposer knows at the start (from earlier calls).
    pub floors: [Option<u8>; PROPOSERS],
    /// Calls per proposer.
    pub calls: u8,
    /// Attempts (read if no floor is known, then propose) per call.
    pub attempts: u8,
    /// Repair rounds per proposer (Quarantine).
    pub repairs: u8,
    /// Data losses in a run; a second one only once the first lost node
    /// holds the key again.
    pub losses: u8,
    /// A loss is a restart: the requests in flight to that node are lost
    /// with its connections (otherwise they are still executed afterwards,
    /// as after a FLUSHALL, a DEL or an eviction).
    pub loss_resets_connections: bool,
    /// Quarantine variant: a read that finds all N keys missing does not
    /// create the sequence; it counts as seeing every node missing, and
    /// the creation waits, like a repair, for the rounds live then.
    pub creation_waits: bool,
    /// Stop at the first state this holds in, and return the run to it.
    pub goal: Option<fn(&State) -> bool>,
    /// Visit one state of each mirror pair (P1 and P2 swapped).
    pub mirror: bool,
    /// States the search may visit before it gives up (a memory guard).
    pub limit: usize,
    /// The lowest counter value the history bits tell apart (see
    /// `Proposer::hist`): the lowest initial counter.
    pub base: u8,
}

impl Model {
    pub fn new(rules: Rules, initial: [Option<u8>; N], handed_before: Option<u8>) -> Model {
        Model {
            rules,
            initial,
            handed_before,
            floors: [None; PROPOSERS],
            calls: 2,
            attempts: 2,
            repairs: 1,
            losses: 1,
            loss_resets_connections: false,
            creation_waits: false,
            goal: None,
            mirror: true,
            limit: 5_000_000,
            base: initial.iter().flatten().copied().min().unwrap_or(0),
        }
    }
}

// Request kinds. Reads are not messages: see `Proposer::hist`.
pub const PROPOSE: u8 = 1;
/// Set-if-missing (a repair or a creation); nobody waits for its reply.
pub const SET: u8 = 2;

/// A request in flight, in 16 bits: kind, node, `who` (the proposer whose
/// live round sent it, or NONE once that round has ended: the node may
/// still execute it, nobody counts the reply) and the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Msg(pub u16);

pub const EMPTY: Msg = Msg(u16::MAX);

impl Msg {
    pub fn new(kind: u8, node: u8, who: u8, val: u8) -> Msg {
        assert!(val < 128);
        let who = if who == NONE { 3 } else { who };
        Msg(u16::from(kind & 1) << 15
            | u16::from(node) << 13
            | u16::from(who) << 11
            | u16::from(val))
    }
    pub fn kind(self) -> u8 {
        if self.0 >> 15 == 1 { PROPOSE } else { SET }
    }
    pub fn node(self) -> u8 {
        (self.0 >> 13 & 3) as u8
    }
    pub fn who(self) -> u8 {
        match (self.0 >> 11 & 3) as u8 {
            3 => NONE,
            w => w,
        }
    }
    pub fn val(self) -> u8 {
        (self.0 & 0x7f) as u8
    }
    /// The same request, its round over.
    pub fn stale(self) -> Msg {
        Msg(self.0 | 3 << 11)
    }
}

// What a proposer knows about a node it saw missing (Quarantine).
pub const UNSEEN: u8 = 0;
/// Seen missing while the other proposer's round was live, and that round
/// has not ended yet.
pub const WAITING: u8 = 1;
/// Seen missing, and every round live at that moment has ended.
pub const READY: u8 = 2;

// History bits (`Proposer::hist`): the replies a node may have given.
/// The key was missing at a moment when the other proposer had no live
/// round, or whose live round has ended since (READY).
pub const H_MISSING_READY: u32 = 1 << 31;
/// The key was missing only while the other proposer's current round was
/// live (WAITING for it to end).
pub const H_MISSING_WAITING: u32 = 1 << 30;
/// Counter 0 (MissingAsZero's reading of a missing key), when the base is above 0.
pub const H_ZERO: u32 = 1 << 29;
/// Counters base .. base + H_SPAN - 1: bit (counter - base).
pub const H_SPAN: u8 = 29;

// Reply codes in `Event::Decide`.
pub const R_NONE: u8 = u8::MAX;
pub const R_ACCEPTED: u8 = u8::MAX - 1;
pub const R_MISSING: u8 = u8::MAX - 2;

// A proposer's phase: no live round, or the kind of its live round.
pub const IDLE: u8 = 0;
pub const READING: u8 = 1;
pub const PROPOSING: u8 = 2;
pub const REPAIRING: u8 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Proposer {
    /// Calls started.
    pub calls: u8,
    pub in_call: bool,
    /// Attempts made in the current call.
    pub attempts: u8,
    pub phase: u8,
    /// The value proposed by the live PROPOSING round.
    pub value: u8,
    /// Highest counter known, MISSING when nothing is known.
    pub floor: u8,
    /// Highest value handed out (anywhere) when the current call started.
    pub start_max: u8,
    /// Per node, every reply the node may have given to the live round so
    /// far (H_* bits and counter bits): a read executes at some moment
    /// between its sending and the decision, and returns the counter of
    /// that moment; a proposal that is refused, or finds the key missing,
    /// changes nothing either, so it too may have been executed at any
    /// moment its request was in flight. Only accepting a proposal and
    /// setting a missing key are steps of their own (`Event::Execute`).
    pub hist: [u32; N],
    /// Nodes that accepted the live PROPOSING round's value.
    pub accepted: u8,
    /// Nodes the live round's request may still reach.
    pub pending: u8,
    /// Nodes seen missing (UNSEEN, WAITING, READY).
    pub seen: [u8; N],
    /// Repair rounds started.
    pub repairs: u8,
    /// Nodes the live REPAIRING round is for (bit mask).
    pub repairing: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct State {
    pub nodes: [u8; N],
    pub losses: u8,
    /// The last node that lost its data.
    pub lost: u8,
    /// Values handed out (bit v - base), `handed_before` included.
    pub handed: u32,
    pub violation: Option<Violation>,
    pub p: [Proposer; PROPOSERS],
    pub len: u8,
    /// Proposals and SETs in flight, sorted; EMPTY past `len`.
    pub msgs: [Msg; CAP],
}

/// One step of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The node's key disappears (restart without data, flush, failover).
    Lose(u8),
    /// The proposer's live round reaches the end of its lifetime: it gives
    /// the round up, counting none of its replies; it has received the
    /// MISSING replies of the nodes in the mask (Quarantine).
    Expire(u8, u8),
    /// The node executes the request and changes: accepts a proposal, or
    /// sets a missing key.
    Execute(Msg),
    /// Starts a call (giving up the current one, if any, after its first
    /// attempt) and makes its first attempt at once.
    StartCall(u8),
    /// Another attempt of the current call: read if no floor is known, else
    /// propose floor + 1.
    Attempt(u8),
    /// The proposer stops waiting and decides with the reply it counts from
    /// each node (R_* codes, or a counter: read, or refusing a proposal).
    Decide(u8, [u8; N]),
    /// Starts a repair round for the nodes it saw missing (Quarantine).
    Repair(u8),
}

pub fn counter_text(c: u8) -> String {
    if c == MISSING {
        "MISSING".to_string()
    } else {
        c.to_string()
    }
}

pub fn mask_names(mask: u8) -> String {
    let names: Vec<String> = (0..N as u8)
        .filter(|n| mask & (1 << n) != 0)
        .map(node_name)
        .collect();
    if names.is_empty() {
        "no node".to_string()
    } else {
        names.join(" and ")
    }
}

pub fn describe_request(x: Msg) -> String {
    let from = if x.who() == NONE {
        "a".to_string()
    } else {
        format!("{}'s", proposer_name(x.who()))
    };
    match x.kind() {
        PROPOSE => format!("{from} proposal {}", x.val()),
        _ => format!("SET {} if missing", x.val()),
    }
}
