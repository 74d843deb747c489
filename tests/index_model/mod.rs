//! An exhaustive explorer of `yaraus index`'s safe transitions: every
//! interleaving of a small, bounded system of replicas sharing one Redis is
//! visited (breadth first, so that a violation comes with a shortest run),
//! checking in every reachable state that all alive children, over all
//! replicas, were told the same replica count and pairwise distinct
//! indexes. A start is a step, so this also checks that no child starts
//! with (i, r) beside an alive child with a count other than r or with i.
//!
//! # The protocol, as modelled
//!
//! Redis holds, per interval n, `count[n]`, `who[n]` (replica -> rank) and
//! `transition[n]` (a set), and `last`. Replica R ticks interval n at
//! (n - 1) * I + skew; the tick script, holding = R's child's pair or none:
//! refuses when `last > n` (the seal); gives R its rank in n (the same on a
//! retry); raises `last`; its pair is (who[n-1][R] - 1, count[n-1]) when R
//! is in who[n-1]; if R holds nothing or holds that pair, R joins
//! transition[n] ("settled"). The confirm script for m adds R to
//! transition[m] when R is in who[m-1].
//!
//! R stops its child when a reply's pair differs from the child's (or is
//! none), and confirms that tick once the child is dead; a settled reply to
//! tick m (sent at s) extends the child's deadline to s + V; the watchdog
//! kills a child at its deadline. R, childless, starts a child with the
//! pair of its latest tick m if that tick succeeded and R received the
//! reply (a tick sent since forbids it), the barrier passed
//! (`|transition[m]| >= count[m-1]` and `now >= recv(m-1) + V + D`, or
//! `now >= recv(m) + V + D`), and `now < send(m) + V - kill_after`; the
//! child's deadline is send(m) + V.
//!
//! # The system
//!
//! Two or three replicas; intervals 1..=3 to 1..=5; I = 2, V = I + 2
//! (slack 1, kill_after 1), D = 0 (all skews 0) unless a case says
//! otherwise; time runs to the last tick's due time plus V. Replicas may be
//! late by any amount, skip intervals, and interleave between every two
//! store operations; at most one fault (a tick's request or reply lost, or
//! a timeout) and at most one crash (SIGKILL, restart with an empty memory)
//! per run, as each case says; confirms may be lost freely; children may
//! exit at any moment. `model/step.rs` lists the modelling choices and
//! why; `model/replica.rs` what a replica does.
//!
//! # Layout, and why
//!
//! * `explorer.rs`: this model's `Violation`, beside the search shared with
//!   the seq model (`tests/explorer/`: the search, storing each state once,
//!   its hash, the narration of a run).
//! * `model/`: the state and the store's scripts (`mod.rs`), the events
//!   and the atomic-tick reduction (`step.rs`), a replica's conditions and
//!   actions (`replica.rs`), the model as the explorer sees it: invariant,
//!   goal, symmetry, narration (`system.rs`).
//! * `findings.rs`: what the model finds about the protocol.
//! * `checks.rs`: that the checker can fail (each guard removed breaks the
//!   protocol), that it is not vacuous, that its reduction loses nothing.
//! * `deeper.rs`: larger bounds, ignored: `cargo test --release --test
//!   index_model -- --ignored --nocapture` prints a table.
//!
//! States are kept small so that equal futures are equal states: a time
//! whose every condition holds for good becomes 0, a claim past its
//! validity loses its pair, requests that can no longer change anything
//! are dropped (`State::tidy`), replicas of equal skew are sorted
//! (`System::canon`), and a tick is one step (`Model::atomic`; the exact
//! three-step model is kept, and checked against it).
//!
//! # What it finds
//!
//! 1. The protocol as specified is unsafe, with no fault, 2 replicas, 5
//!    intervals (`findings.rs`, 19 steps): R2 runs (1, 2) under tick 2 and
//!    misses interval 3 (late); its tick 4 has no pair (R2 is not in
//!    who[3]), so R2 stops its child; its tick 5, sent at once, gives
//!    (1, 2) again (who[4] = {R1:1, R2:2}) and is settled, so the stopping
//!    child's deadline moves to send(5) + V. R1, alone in who[3], starts
//!    (0, 1) under tick 4 at recv(3) + V, exactly when R2's child would
//!    have died: R1 believes it is the only replica while R2's child runs
//!    as index 1 of 2. The bound recv(m-1) + V covers children vouched for
//!    before tick m-1; a settled reply at m+1 vouches again for a child
//!    that tick m, or a missed tick, had disowned.
//! 2. Never extending a child being stopped is not enough: if tick 4's reply
//!    is lost, R2 never learns that its child must stop, and tick 5 extends
//!    it; the same start follows (one fault).
//! 3. The fix: tick m's settled reply extends the child only if tick m - 1
//!    vouched for it (the child started under m - 1, or m - 1's settled
//!    reply extended it); any gap (a tick skipped, refused, lost, timed
//!    out, or whose pair changed) ends its extensions and the child runs
//!    out its deadline (`Extension::Contiguous`). Safe within every bound
//!    explored: 2 replicas to 5 intervals with a fault and a crash, skews 0
//!    and 1 with D = 1, I = 4, kill_after 0; 3 replicas to 4 intervals, or
//!    3 with a fault or a crash (`deeper.rs`). Its price is liveness: a
//!    child whose replica missed one reply is restarted.
//! 4. The protocol relies on a restarted replica never ticking an interval
//!    below one its previous incarnation sent: a tick sent just before a
//!    crash strays, executes late and settles R as holding nothing in
//!    interval 3 while the new incarnation, its clock behind (an NTP step
//!    across the restart), starts under tick 2. With the clock read anew
//!    at the restart (the model's default) this cannot happen. A tick
//!    script that refuses ticks from an older incarnation (an id per
//!    process) would remove the assumption; not modelled.
//! 5. The fallback `now >= recv(m) + V + D` never fires: with (c),
//!    `now < send(m) + V - kill_after`, and recv(m) >= send(m), both cannot
//!    hold. The model with and without it reaches the same states. A
//!    replica that does not know recv(m-1) (its first tick after a start,
//!    or after missing m-1) never starts under m; when a member of
//!    who[m-1] stays silent, nobody starts under m and children wait for
//!    m + 1 (liveness only).
//! 6. Each guard matters: without the barrier, without its time condition,
//!    without the seal, extending a child whose pair changed, or starting
//!    under an older answered tick, the search finds a violation within 3
//!    or 4 intervals (`checks.rs`).
//!
//! # Reading a run
//!
//! Each line is a step, then the state after it: the time, `last`, each
//! interval's `who` and `transition`, and each replica's child (pair <
//! deadline, "stopping"), tick awaited, strays and confirms in flight.
//! "recv 0" in a start means long past (the condition on it holds for
//! good).

mod explorer;
pub mod model;

#[cfg(test)]
mod checks;
#[cfg(test)]
mod deeper;
#[cfg(test)]
mod findings;
