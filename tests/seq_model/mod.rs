//! An exhaustive explorer of the majority sequence (`src/seq/`) when a node
//! loses its data: every interleaving of a small, bounded system is visited
//! (breadth first, so that a violation comes with a shortest run), under
//! several sets of rules, checking in every reachable state that
//!
//! * no value is handed out twice (across proposers and calls), and
//! * real-time order holds: a call that starts after another call handed
//!   out vX hands out a value above vX.
//!
//! # The system
//!
//! N = 3 nodes (Redis masters), each with the sequence's key; two
//! proposers (P1, P2) calling `next`. Requests in flight form an unordered
//! multiset: a node executes any of them at any later moment, or never (a
//! lost message, or one still in flight when the run ends), and a proposer
//! counts any subset of the replies that exist when it decides. Loss and
//! reordering are thus both in the model without a "drop" step. A node may
//! lose its data at any moment, a minority (one node) at a time.
//!
//! # Layout, and why
//!
//! * `explorer.rs`: this model's `Violation`, beside the search shared by
//!   every model checker (`tests/explorer/`: the search, its hash, and the
//!   narration of a run, for any `System`), so that a model is only its
//!   steps.
//! * `counters/`: the model where a key is a counter or missing, under the
//!   rules `MissingAsZero` (a missing key read as 0), `NaiveRepair`, `Quarantine` and
//!   `ZeroCompletion` ("complete a missing node with 0").
//! * `two_phase/`: the model of the protocol now being implemented, where a
//!   key may also hold a mark (`unborn:T`) or a prepared state (`creating:X`), and a
//!   sequence is created in two phases of compare-and-set (`TwoPhase`). Its
//!   keys and requests differ enough from `counters` to be a model of its
//!   own rather than a fifth set of rules there.
//! * `timed/`: the quarantined repair as built (`src/seq/heal.rs`),
//!   with clocks: a key may hold a quarantine mark, real time advances in
//!   ticks, every round counts replies only within its lifetime T and a
//!   mark ripens after Q, each bounded soundly for clocks whose rates drift
//!   by ρ (`timed/mod.rs` has the scaling). The other models are untimed
//!   (a lifetime there is an event, not a duration), so they cannot tell a
//!   quarantine of 10 s from one of 4 s: hence a model of its own, under
//!   the rules `AsBuilt`, `ShortQuarantine`, `MinorityRead`, `NoLifetime`
//!   and `RepairFromRipeRead` (the repair from the read that saw the mark ripe).
//! * `birth/`: creating a sequence with clocks, and ending a creation
//!   that stopped half-way (`[unborn, creating:X, creating:X]`) by rolling
//!   back prepared states older than a quarantine of their own: the rule
//!   of `src/seq/create.rs`, its weaker variants (each lets a rollback meet
//!   a settle, a dead end), and the majority loss that stays a person's.
//! * `deeper.rs`: the explorations too slow for a debug build (ignored;
//!   `cargo test --release -p yaraus-models seq_model:: -- --ignored --nocapture`, or
//!   `deeper_timed` alone for the timed model); each prints the table of
//!   what each case found.
//!
//! Each model keeps its state small the same way: a request that writes
//! nothing is not a step of its own; each live round keeps, per node, every
//! reply the node could have given it so far, and the decision picks one
//! of them or none. Only writes are steps. States that differ only by what
//! no step can observe (P1 and P2 swapped, requests that can no longer
//! change anything, the numbering of tokens) are merged.
//!
//! # What it finds
//!
//! * `MissingAsZero` hands out 101 twice.
//! * `NaiveRepair` and `ZeroCompletion` hand out a value twice: a node
//!   accepts a proposal, loses its data, and is set back (to the read's
//!   highest counter, or to 0) from a read that did not see that proposal,
//!   while the proposal's acceptance is still counted.
//! * `Quarantine` finds nothing from held counters with one loss; its
//!   creation and a second loss of a repaired node are unsafe.
//! * `TwoPhase` hands out 1 twice with a single loss during creation: a
//!   failed phase 1 leaves the state it prepared on a node that had lost its
//!   data, and a later creation completes that state with 0 beside a holder
//!   of 1 (`two_phase/tests.rs` has the run, step by step). Creation without a
//!   loss, a loss among holders, and a restart beside a frozen node are
//!   safe within the bounds of the tests.
//! * `TwoPhase` with ids drawn from the view (`CreationIds::OfView`, the rule of
//!   `src/seq/view.rs`) blocks that run but hands out 1 twice one step
//!   further (`two_phase/view_tests.rs`, 30 steps, one loss): the failed
//!   phase 1's CAS to a third node executes late, every non-holder then
//!   is prepared for that creation's id beside a holder of 1, and the adoption rule
//!   completes it with 0.
//! * `TwoPhase` with the final rule (`CreationIds::Final`, now in
//!   `src/seq/view.rs`: a view with a holder never creates, a view of marks
//!   creates with the view's id, a view prepared for one creation everywhere adopts it,
//!   any other view backs off) stops both runs at step 19 (P2's view mixes
//!   a mark with prepared nodes) and is safe within every bound explored
//!   (`two_phase/final_tests.rs`, `deeper.rs`), one loss during creation
//!   included. It is not live: one loss during a creation can leave a mark
//!   beside prepared nodes with nothing in flight, a view every proposer backs off
//!   from forever (11 steps).
//!
//! * `timed`, the quarantined repair as built (T = 5 s, Q = 10 s, ρ = 1 %,
//!   ticks of 2 s: a round lives 3 ticks, the quarantine is 4), hands out
//!   no value twice within the bounds explored (`timed/tests.rs`;
//!   `deeper_timed`: two processes that both propose and heal, with one
//!   loss, with a second loss during or after the quarantine, or with two
//!   attempts each (113 million states); a proposer with two calls, or two
//!   attempts, beside a healer, two losses). Each change of it hands out
//!   101 twice, by the same run shape: the lost node accepted
//!   101 for a round that is still counting, is repaired to 100, accepts
//!   101 again for another proposer, and both rounds count it:
//!   - `ShortQuarantine` (Q = 4 s < T): the repair lands within the first
//!     round's lifetime (17 steps);
//!   - `MinorityRead`: the repair is set from the one holder that did not
//!     accept the first round's 101, which was handed out before the loss;
//!   - `NoLifetime`: the first round counts the old vote after T;
//!   - `RepairFromRipeRead` at Q = 10 s = 2T: the read that saw the mark
//!     ripe began before the first round's late acceptance, within T of
//!     it; none at Q = 15 s, beyond 2T(1 + ρ)/(1 − ρ) in ticks.
//!
//!   With ticks of 2.5 s the scaling rounds the margin away (3 and 3) and
//!   the model finds the rule as built unsafe: the rounding only ever adds
//!   runs.
//!
//! # Reading a run
//!
//! Each line is a step, followed by the nodes' keys after it. A decision
//! lists the replies the proposer counts; a reply that wrote nothing (a
//! counter read, a refusal) was returned by the node at some earlier moment
//! of that round, when it held that key.

pub mod birth;
pub mod counters;
#[cfg(test)]
mod deeper;
mod explorer;
mod in_flight;
pub mod timed;
mod two_phase;

/// Nodes (Redis masters holding the counter).
pub const N: usize = 3;
/// A majority of N.
pub const MAJORITY: usize = 2;
/// Processes calling `next` concurrently.
pub const PROPOSERS: usize = 2;
/// No node / no proposer.
pub const NONE: u8 = u8::MAX;

pub fn node_name(n: u8) -> String {
    format!("node {}", n + 1)
}

pub fn proposer_name(p: u8) -> String {
    format!("P{}", p + 1)
}
