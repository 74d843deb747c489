//! An exhaustive explorer of the wake-one protocol of waiters
//! (`src/claim/wake.lua`, `src/claim/wake.rs`, the wait loop of
//! `src/claim/wait.rs`, and the lock's and the pool's acquire and release
//! scripts): every interleaving of a few waiters for a resource of one or a
//! few places on one Redis server, with deaths, the queue key vanishing,
//! and (in the variants) stops, expiries, polls and closed subscriptions,
//! checking that no waiter is left for the fallback poll unless a message
//! was lost.
//!
//! # What is modelled
//!
//! A resource with CAP places (1: a lock; 2 or 3: a semaphore, a pool),
//! the queue key (a sorted set of waiters' places, scored by arrival), a
//! channel per waiter (`wake:KEY:MEMBER`) and the shared one (`wake:KEY`).
//! A waiter's life (`model.rs`, [`model::Phase`]), each step one atomic
//! script or one client action:
//!
//! 1. `Fresh`: its first attempt, without a place: it takes a free place,
//!    or is refused and does not queue.
//! 2. `Refused`: it subscribes, to its own channel and the shared one.
//! 3. `Armed`: its second attempt, with its place: it takes a free place
//!    and leaves the queue (`ZREM`), or it joins the queue (`ZADD NX`).
//! 4. `Waiting`: it reads a message, if one was delivered to it, and makes
//!    the same attempt. Messages are counted, not merged: a connection
//!    buffers them, and each read is one attempt.
//! 5. `Holding`: it releases. The same script frees its place, then pops
//!    the queue's head and publishes on that waiter's channel until a
//!    publish is heard (the waiter is subscribed: `Armed`, `Waiting`, or
//!    stopped); heard by nobody in the queue, it publishes on the shared
//!    channel, which every subscriber hears but the releaser (its own
//!    place is the payload). A holder is unsubscribed: taking a place
//!    unsubscribes (`Wakeups::disarm`), and the taking script already took
//!    its place out of the queue, so that until it unsubscribes only the
//!    shared channel can reach it, which loses nobody's message.
//!
//! Faults: any waiter but a holder may die (unsubscribed; its place stays
//! queued until popped), though not with a message unread unless a variant
//! says so, since that is a lost message; the queue key may vanish at any
//! moment (its TTL lapsed, a restart), the places staying. Variants add
//! stopped waiters (SIGSTOP for good: alive, subscribed, no step), expired
//! leases (a holder's place freed with nothing published), polls (a
//! waiting waiter's attempt without a message, at any moment) and closed
//! subscriptions (the buffered messages lost; the waiter notices, tries
//! again at once without its place, subscribes again and makes its second
//! attempt, its place staying queued meanwhile: `Wakeups::closed`).
//!
//! A place's score is its waiter's index (w0 arrived first), whichever
//! order the waiters act in: that includes every real order (rename the
//! waiters), and orders a skewed clock could give. A waiter may wait
//! between any two of its steps: a late arrival or a barging newcomer is a
//! `Fresh` waiter acting late. Polls are not steps unless a variant says
//! so: the point is that none is needed.
//!
//! # What is checked, and why that is enough
//!
//! * `Stranded`: a *quiescent* state (no waiter can take a protocol step:
//!   none fresh, refused, armed or holding, and no waiting waiter with a
//!   message to read) where a live waiter waits. Nobody holds there, so
//!   every place is free, and only a poll would move it.
//!
//!   That a per-state check suffices: every protocol step lowers a
//!   measure ([`model::rank`]: the phases' weights, then the messages
//!   unread), and a poll lowers it or changes only the queue; `survey.rs`
//!   checks this over every reachable step. So in any run with finitely
//!   many faults in which every possible step is eventually taken, there
//!   are finitely many protocol steps, and the run ends in a quiescent
//!   state. A state that is not quiescent but *doomed* (a free place, a
//!   waiter, and no future in which it is served) thus leads to a
//!   reachable quiescent state where that waiter still waits, which the
//!   check catches. No stranded state reachable therefore means: in every
//!   such run, every waiter that neither dies nor stops ends up holding,
//!   with no poll.
//!
//! * `Unwoken`, stronger, per state: the woken waiters (alive, not
//!   stopped, a message unread, or one lost with a closed subscription and
//!   about to try again), which will attempt without a poll and may not
//!   die first, are at least min(free places, waiting waiters). Every free
//!   place somebody waits for has a woken waiter on its way, at every
//!   moment, not only at the end of runs. It implies the first (a
//!   quiescent state with a waiter has none woken and every place free).
//!   It holds because a release adds one free place and wakes a queued
//!   listener, or every listener when none is queued; a woken waiter's
//!   attempt takes a place, or is refused because none is free; and a
//!   waiter starts waiting only refused (no place free). The case that
//!   needs the count rather than this sketch, checked by the explorer: a
//!   release reaching a waiter that has a message already (from the shared
//!   channel while armed, its second attempt then refused and queued).
//!
//! * `Crowd`: a release that finds a listener queued delivers exactly one
//!   message (sticky: a broken variant, `Wake::OneThenAll`, shows it can
//!   fail). `survey.rs` also measures the most messages one release sends,
//!   with and without a listener queued, against wake-all's.
//!
//! The explorer also counts the most messages unread at once.
//!
//! # What it finds
//!
//! * The protocol strands nobody, `Unwoken` included: 3 to 5 waiters with
//!   1 place, 3 to 5 with 2, 5 with 3 (`tests.rs`: 275 to 37,207 states);
//!   with polls, or closed subscriptions, 4 waiters; 6 and 7 waiters with
//!   1 to 3 places (up to 7.2 million states), and 5 or 6 with polls and
//!   closed subscriptions as well (`deeper.rs`). Polls reach no state that
//!   runs without them do not (4 waiters).
//! * A release that finds a listener queued sends one message; wake-all
//!   sends one to each listener, 3 of 4 waiters. Wake-one still sends to
//!   every listener when none is queued: waiters armed (subscribed, their
//!   second attempt not yet made) and waiters queued before the queue
//!   vanished; up to 3 with 4 waiters, which makes the most messages
//!   unread at once the same as wake-all's (4 with 4 waiters, 9 with 6).
//!   The armed waiters would have attempted anyway: each such message
//!   costs one refused attempt more. The crowd is only the waiters that
//!   subscribed within a round trip of the release.
//! * Each broken variant is caught, with a shortest run (3 waiters, one
//!   place):
//!   - `Wake::HeadOnly`, no dead-skip loop: w1 queued dies, w2 queues
//!     behind it, w0's release pops w1 and publishes to nobody; w2 is
//!     stranded (9 steps).
//!   - `Order::AttemptFirst`, the second attempt before subscribing: w0
//!     releases between w1's queued refusal and its subscription; the pop
//!     finds nobody listening and the shared channel nobody either; w1
//!     subscribes and waits (6 steps, w2 dying to end the run). Also with
//!     wake-all. `Order::NoSecondAttempt`: a release between the first
//!     refusal and the subscription (5 steps).
//!   - `Wake::OneThenAll`: `Crowd` (5 steps).
//! * The documented costs, each bounded by the fallback poll:
//!   - A woken waiter that dies before its attempt takes the message with
//!     it: w0's release wakes w1 alone, w1 dies, w2 is stranded (9 steps).
//!     Wake-all does not strand there (the others were woken too).
//!   - A stopped waiter at the head still listens, so the release stops
//!     there (9 steps); likewise a waiter whose host vanished while the
//!     server still counts its half-open connection as a subscriber.
//!     Wake-all does not strand there either.
//!   - An expired lease publishes nothing (6 steps), in either design.
//!
//! # Not modelled
//!
//! Several masters (a lock on a majority: a waiter listens on each, and
//! each master queues and wakes on its own); the undos of a waiting
//! waiter (a failed majority's leftovers, a claim taken and released
//! again after a failed check, whose place is its own payload); the bound
//! of 32 pops per release (`WAKE_TRIES`, after which it publishes on the
//! shared channel: at least what the model's loop does); a waiter that
//! cannot subscribe (it has no place and polls); the
//! bound on subscribing again (`RESUBSCRIBES`, then it polls); time.
//!
//! # Layout
//!
//! * `model.rs`: the phases, the scripts, the faults.
//! * `system.rs`: the model as the explorer sees it: the events, the
//!   checks, the narration.
//! * `survey.rs`: a pass over every reachable step: the progress measure,
//!   the messages per release.
//! * `tests.rs`: the protocol at the default bounds, each broken variant
//!   and each documented cost, the survey's figures.
//! * `deeper.rs`: larger bounds and every fault at once, ignored: `cargo
//!   test -p yaraus-models wake_model:: -- --ignored --nocapture` (2.5 minutes in a
//!   debug build) prints a table.

use crate::explorer;

#[cfg(test)]
mod deeper;
pub mod model;
mod survey;
mod system;
#[cfg(test)]
mod tests;
