//! An exhaustive explorer of the hilo window agent's protocol (`yaraus`'s
//! distributed hi-lo, `src/hilo/`): every interleaving of a small, bounded
//! system of agent runs and independent Redis shards is visited (breadth
//! first, so that a violation comes with a shortest run), checking in every
//! reachable state that no two windows ever created, on any shard at any
//! time, share an id: no id can be handed out twice.
//!
//! # The protocol, as modelled
//!
//! Each shard holds a fence (the token of the run that fenced it last), a
//! high-water mark (hwm: every id below it may be in a window somewhere)
//! and windows [start, end) with a cursor; it may restart empty at any
//! moment, losing all three. An agent run R, token T (tokens unique, in
//! any order relative to the runs' starts: the lock that should serialise
//! runs is assumed broken), has three phases, each one script per shard,
//! and moves on only when every shard accepted the last:
//!
//! 1. FENCE: refused if the shard's fence is present and above T; else
//!    fence = T, reply the hwm.
//! 2. g = the highest hwm replied (0 if none); the run plans k windows
//!    [g + i*W, g + (i+1)*W) (one on a shard of its choice, or one per
//!    shard in any order), new = g + k*W. RAISE: refused unless fence = T;
//!    else hwm = max(hwm, new).
//! 3. CREATE [a, b) on its shard: refused unless fence = T and hwm >= b.
//!
//! Requests execute at any later moment or never (delays, losses, strays
//! of runs that gave up); a reply may be lost (the run gives up);
//! reservers take the lowest id of the lowest open window
//! (`Watch::Ids`). `model/step.rs` lists the modelling choices and why.
//!
//! # The system
//!
//! Two or three shards, two or three runs, W = 1 (2 with reservers), at
//! most one empty restart unless a case says otherwise, or restarts gated
//! by the fault assumption made exact (`Gate::KeepHighest`: a shard
//! restarts only while another holds the highest hwm some run had
//! acknowledged everywhere), in any number.
//!
//! # Layout, and why
//!
//! * `explorer.rs`: this model's `Violation`, beside the search shared with
//!   the other models (`tests/explorer/`: the search, storing each state
//!   once, its hash, the narration of a run).
//! * `model/`: the state and the bounds (`mod.rs`), a shard's scripts
//!   (`shard.rs`), what a run does with its replies (`run.rs`), the events
//!   (`step.rs`), the model as the explorer sees it: invariant, goals,
//!   symmetry, narration (`system.rs`).
//! * `findings.rs`: what the model finds about the protocol.
//! * `variants.rs`: the departures and the faults that break it.
//! * `liveness.rs`: goals: windows get created; what the order of tokens
//!   is for.
//! * `checks.rs`: that the symmetry reduction loses nothing, that the
//!   reservers' watch can fail.
//! * `deeper.rs`: larger bounds, ignored: `cargo test --release --test
//!   hilo_model -- --ignored --nocapture` prints a table.
//!
//! States are small (`u8` fields, fixed arrays, id sets as `u32` masks):
//! a run forgets what it can no longer use (`Run::tidy`), sending is
//! folded into the acknowledgement that allows it, and shards are merged
//! by symmetry (`System::canon`).
//!
//! # What it finds
//!
//! 1. The protocol is safe: 2 shards and 2 runs (5,572 states), 3 shards
//!    and 2 runs (48,568), 2 shards and 3 runs (373,270), 3 shards and 3
//!    runs (13,393,532, release), each with one empty restart, lost
//!    replies and delayed requests; and with any number of restarts gated
//!    by the assumption made exact. Safe is not idle: every run can create
//!    its windows (the most windows created is counted).
//! 2. The assumption must be read as "some shard always holds the highest
//!    hwm raised everywhere". Restarts one at a time are not enough: two
//!    shards restarted one after the other (never both down at once) lose
//!    it (variant (e)), and so does "not every shard restarted since the
//!    last completed raise phase", since a shard that restarts during a
//!    raise phase, after its raise, does not count. Three shards and two
//!    restarts are safe (two runs, 151,588 states; three runs, 52,387,441);
//!    three restarts are not (`deeper.rs`).
//! 3. CREATE's fence check is redundant (variant (a) is safe at every
//!    bound explored): two runs that both create both fenced and raised a
//!    shard x that did not restart, a fence changes only by another fence,
//!    so their fence-to-raise spans on x do not interleave, and the later
//!    one read the earlier one's hwm from x. CREATE's hwm check follows
//!    from its fence check. They are defence in depth.
//! 4. FENCE's order of tokens is for liveness, not safety (variant (d) is
//!    safe): with the last writer winning, two runs may each fence one
//!    shard last and both be refused at RAISE, no fault needed
//!    (`liveness.rs`); with the order, the greatest token among runs that
//!    overlap always gets through when nothing fails.
//! 5. RAISE's fence check is the one that matters: without it, CREATE's
//!    fence check protects only while no shard restarts.
//! 6. No RAISE phase (b), creating before every shard raised (c), two
//!    restarts of two shards (e), one shard (f): each breaks with the run
//!    printed; (b) and (c) need the restart: without one they are safe.
//!
//! # Reading a run
//!
//! Each line is a step, then the state after it: each shard's fence (a
//! token: Rn's is n) and hwm, each run's phase and its requests per shard
//! (sent, or acknowledged), and the ghost: every window ever created, the
//! ids created twice.

mod explorer;
pub mod model;

#[cfg(test)]
mod checks;
#[cfg(test)]
mod deeper;
#[cfg(test)]
mod findings;
#[cfg(test)]
mod liveness;
#[cfg(test)]
mod variants;
