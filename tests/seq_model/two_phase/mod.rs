//! The `TwoPhase` rules: the protocol now being implemented in `src/seq/`,
//! where a node's key holds a counter (a *holder*), a mark `unborn:T`, a
//! prepared state `creating:X` (the node prepared for the creation X), or
//! nothing (MISSING), and a sequence is created in two phases of
//! compare-and-set. This file holds the state; `tokens.rs`
//! its bookkeeping, `step.rs` the bounds, the events and a proposer's
//! rounds, `system.rs` the model as the explorer sees it, `tests.rs` the
//! tests.
//!
//! # The protocol, as modelled
//!
//! Node operations, each atomic:
//! * READ(mark T): a missing key is set to `unborn:T`; the reply is the key
//!   after that.
//! * PROPOSE(v): a holder below v takes v (Accepted); a holder at or above
//!   v says Refused(counter); a non-holder says Missing and is not written.
//! * CAS(from, to): the key is `from`: it becomes `to`, reply ok; it is
//!   `to`: ok; else fail.
//!
//! A proposer without a floor reads every node with one fresh token. Two
//! holders (or three) give the floor, their highest counter. All N replies
//! with no holder, or with holders and every non-holder `creating:X` for one
//! X, *create*: phase 1 sends every node CAS(what it read -> `creating:id`)
//! (holders: CAS(v -> v), a check), id being the greatest creation token read,
//! else the greatest mark token; if all N say ok, phase 2 sends each node
//! that was a non-holder CAS(`creating:id` -> 0); either way the proposer
//! reads again. With a floor it proposes floor + 1 to every node and hands
//! it out on two Accepted; else Refused(c) and Accepted raise the floor, and
//! fewer than two votes with a Missing among the replies forget it.
//!
//! # Losses
//!
//! A loss turns any key into MISSING. A node that lost its data counts as
//! lost until it is a holder again (a mark or a prepared state knows no counter); a
//! second loss (`losses: 2`) waits for that, so that at most a minority,
//! one node, is lost at a time. Nothing but a creation's phase 2 makes a
//! non-holder a holder, so a second loss needs the first lost node to have
//! been created again: lose, recreate, lose. Beside two holders no
//! creation is eligible, so from held counters the second loss never
//! comes. `lost_before` starts a run with a node lost already (restarted
//! empty).
//!
//! # What it finds
//!
//! These rules hand out 1 twice with one loss, during creation (the run
//! is in `tests.rs`): a phase 1 that fails still leaves the nodes it
//! prepared, so a node that lost its data after accepting 1 is prepared
//! for the older creation, and that creation, eligible again with a holder
//! of 1 and prepared nodes everywhere else, writes 0 beside the holder.
//!
//! `TwoPhase::creation_ids` chooses the id: `Greatest` (above) or `OfView`
//! (the rule of `src/seq/view.rs`: adopt X when the view has prepared nodes, no
//! mark, and every non-holder is `creating:X`; else, with no holder, an id
//! drawn from the whole view, interned in `State::views`). `OfView` is
//! unsafe too: `view_tests.rs`.
//!
//! `Final`, the rule now in `src/seq/view.rs`, creates only from a view
//! without a holder whose nodes are all marks (the view's id, as `OfView`)
//! or all prepared for the same X (X adopted, phase 1 only checks); any other view
//! backs off. Both counterexamples stop at step 19, and no run within the
//! explored bounds hands out a value twice: `final_tests.rs`.
//!
//! # Tokens
//!
//! Tokens are random: only their order matters (the greatest is chosen),
//! and any order is possible. A token is *unranked* while it is only in the
//! READs of its round; when its first READ marks a node, the step chooses
//! where it ranks among the tokens then known (`Event::Execute`'s second
//! field), which reaches every order. Ranked tokens are numbered by rank,
//! unranked ones by their READs (who sent them, to which nodes), and tokens
//! no longer anywhere are forgotten: equal situations are equal states.
//! `Names` follows each token under its changing numbers, for narration
//! only: it takes no part in equality or hashing.
//!
//! # Replies
//!
//! As in `counters`, a request that changes nothing (a READ of a key that
//! is there, a refused proposal, a CAS that is a no-op or fails) is not a
//! step: each live round keeps, per node, the replies that node could have
//! given it so far (`Proposer::hist`), and the decision picks one or none.
//! Only the requests that write are steps: marking a missing key, accepting
//! a proposal, a CAS that changes the key. A decision only takes the
//! replies its outcome depends on: a reply it leaves out was lost, and its
//! request is still in flight, which allows every later run the counted
//! reply would.

mod step;
mod system;
mod tokens;

pub use step::{CreationIds, Event, TwoPhase};
#[cfg(test)]
mod final_tests;
#[cfg(test)]
mod runs;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod view_tests;

use std::hash::{Hash, Hasher};

use crate::seq_model::explorer::Violation;
use crate::seq_model::{N, NONE, PROPOSERS};

/// The key is missing; also "no floor known".
pub const MISSING: u8 = u8::MAX;
/// `unborn:t` is MARK + t (a holder's counter is below MARK).
const MARK: u8 = 128;
/// `creating:t` is PREPARED + t.
const PREPARED: u8 = 192;
/// Ranked tokens are below this (they are history bits of a read).
const TOKENS: u8 = 16;
/// A READ's token field: a ranked token, or UNRANKED + a label.
const UNRANKED: u8 = 64;
/// Unranked tokens at most.
const LABELS: u8 = 16;
/// Room for requests in flight.
const CAP: usize = 32;
/// Room for interned views (`CreationIds::OfView`).
const VIEWS: usize = 6;
/// An unused slot of `State::views`: sorts after every entry.
const NO_VIEW: [u8; N + 1] = [u8::MAX; N + 1];

pub fn holder(c: u8) -> bool {
    c < MARK
}
fn is_mark(c: u8) -> bool {
    (MARK..PREPARED).contains(&c)
}
fn is_prepared(c: u8) -> bool {
    (PREPARED..MISSING).contains(&c)
}
fn has_token(c: u8) -> bool {
    (MARK..MISSING).contains(&c)
}
fn token(c: u8) -> u8 {
    if is_mark(c) { c - MARK } else { c - PREPARED }
}
fn with_token(c: u8, t: u8) -> u8 {
    if is_mark(c) { MARK + t } else { PREPARED + t }
}
pub fn prepared(t: u8) -> u8 {
    PREPARED + t
}
fn mark(t: u8) -> u8 {
    MARK + t
}

// Request kinds.
pub const READ: u8 = 0;
pub const PROPOSE: u8 = 1;
pub const CAS: u8 = 2;

/// A request in flight: `who` is the proposer whose live round sent it, or
/// NONE once that round has ended (the node may still execute it; nobody
/// counts the reply). `a`: READ's token, PROPOSE's value, CAS's `from`;
/// `b`: CAS's `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Msg {
    pub kind: u8,
    pub node: u8,
    pub who: u8,
    pub a: u8,
    pub b: u8,
}

const EMPTY: Msg = Msg {
    kind: u8::MAX,
    node: u8::MAX,
    who: u8::MAX,
    a: u8::MAX,
    b: u8::MAX,
};

// A proposer's phase: no live round, or its live round's kind.
pub const IDLE: u8 = 0;
pub const READING: u8 = 1;
/// Phase 1 of a creation.
pub const CREATING: u8 = 2;
pub const PROPOSING: u8 = 3;

// History bits. READING: a holder's counter c is bit c - base (below 32),
// `unborn:t` bit 32 + t, `creating:t` bit 48 + t. PROPOSING: Refused(c) is
// bit c - base. CREATING: B_OK.
pub const B_MISSING: u8 = 62;
pub const B_ACCEPTED: u8 = 63;
pub const B_OK: u8 = 0;
/// No reply counted from a node (`Event::Decide`).
pub const R_NONE: u8 = u8::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Proposer {
    pub calls: u8,
    pub in_call: bool,
    /// Rounds (reads, phases 1, proposals) started in the current call.
    pub rounds: u8,
    pub phase: u8,
    /// The value the live PROPOSING round proposes.
    pub value: u8,
    /// Highest counter known, MISSING when none is.
    pub floor: u8,
    /// Highest value handed out (anywhere) when the current call started.
    pub start_max: u8,
    /// CREATING: the creation's token, and the keys read (the CASes' `from`).
    pub id: u8,
    pub view: [u8; N],
    /// Nodes the live round's request may still reach.
    pub pending: u8,
    /// Per node, the history bits of the replies it may have given the live
    /// round so far.
    pub hist: [u64; N],
}

/// Stable names of the tokens, for narration: equal whatever they hold.
#[derive(Clone, Copy, Debug)]
pub struct Names {
    ranked: [u8; TOKENS as usize],
    unranked: [u8; LABELS as usize],
    minted: u8,
}

impl PartialEq for Names {
    fn eq(&self, _: &Names) -> bool {
        true
    }
}
impl Eq for Names {}
impl PartialOrd for Names {
    fn partial_cmp(&self, other: &Names) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Names {
    fn cmp(&self, _: &Names) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct State {
    pub nodes: [u8; N],
    pub losses: u8,
    /// The last node that lost its data, NONE before any loss.
    pub lost: u8,
    /// Ranked tokens (0 .. tokens), lowest first.
    pub tokens: u8,
    /// Values handed out (bit v - base), the one before the run included.
    pub handed: u32,
    pub violation: Option<Violation>,
    pub p: [Proposer; PROPOSERS],
    pub len: u8,
    /// Requests in flight, sorted; EMPTY past `len`.
    pub msgs: [Msg; CAP],
    /// `CreationIds::OfView`: the views a creation's id was drawn for, each
    /// `[key of node 1, .., key of node N, id]`, sorted, NO_VIEW past the
    /// last; an entry is kept while its id and every token of its view are
    /// somewhere else in the state (else a fresh token stands for it).
    pub views: [[u8; N + 1]; VIEWS],
    pub names: Names,
}

/// Hashes the state in a few words (`names` left out).
impl Hash for State {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let b = |x: u8, i: u32| u64::from(x) << (8 * i);
        h.write_u64(
            b(self.nodes[0], 0)
                | b(self.nodes[1], 1)
                | b(self.nodes[2], 2)
                | b(self.losses, 3)
                | b(self.lost, 4)
                | b(self.len, 5)
                | b(self.tokens, 6),
        );
        h.write_u32(self.handed);
        for pr in &self.p {
            h.write_u64(
                b(pr.calls, 0)
                    | b(u8::from(pr.in_call), 1)
                    | b(pr.rounds, 2)
                    | b(pr.phase, 3)
                    | b(pr.value, 4)
                    | b(pr.floor, 5)
                    | b(pr.start_max, 6)
                    | b(pr.id, 7),
            );
            h.write_u32(
                u32::from(pr.view[0])
                    | u32::from(pr.view[1]) << 8
                    | u32::from(pr.view[2]) << 16
                    | u32::from(pr.pending) << 24,
            );
            for &x in &pr.hist {
                h.write_u64(x);
            }
        }
        for v in self.views.iter().take_while(|v| **v != NO_VIEW) {
            h.write_u32(u32::from_le_bytes(*v));
        }
        for x in self.msgs() {
            h.write_u64(
                u64::from(x.kind)
                    | u64::from(x.node) << 8
                    | u64::from(x.who) << 16
                    | u64::from(x.a) << 24
                    | u64::from(x.b) << 32,
            );
        }
    }
}

/// Applies a renumbering of ranked tokens to a key.
fn map_cell(c: u8, f: &[u8; TOKENS as usize]) -> u8 {
    if has_token(c) {
        with_token(c, f[usize::from(token(c))])
    } else {
        c
    }
}

/// The key a READ reply in history bit `i` stands for.
pub fn read_cell(base: u8, i: u8) -> u8 {
    match i {
        0..32 => base + i,
        32..48 => mark(i - 32),
        _ => prepared(i - 48),
    }
}

/// The history bit of a READ reply `c` (not MISSING).
pub fn read_bit(base: u8, c: u8) -> u8 {
    if holder(c) {
        assert!(
            c >= base && c - base < 32,
            "counter {c} outside the history bits"
        );
        c - base
    } else if is_mark(c) {
        32 + token(c)
    } else {
        48 + token(c)
    }
}
