//! Waiters woken by a release instead of their next poll (claim/wake.rs):
//! how a woken crowd spreads out, how long a waiter woken by one master of
//! several waits for the others, and how long a waiter's place in a queue
//! outlives it.

use std::time::Duration;

/// The most a woken waiter waits before its attempt, so that a crowd of
/// waiters woken by one release does not try in the same millisecond.
pub const WAKE_SPREAD: Duration = Duration::from_millis(5);

/// The most a waiter woken alone by one of several masters waits for a
/// majority of them to say so too: a release reaches them all within a
/// round and a disk flush, so this bound is reached only where a master
/// lacks the waiter's place (it was out of reach when the waiter queued, or
/// restarted), and then the waiter tries anyway.
pub const MAJORITY_WAIT: Duration = Duration::from_millis(20);

/// How long what a waiter leaves behind (its place in a queue, a waiting
/// writer's mark among shared holders) outlives its last attempt, for a
/// waiter that attempts at least every `pause` plus `attempt`: two of
/// those cycles, so that a live waiter renews it before it runs out even
/// when one attempt is late, and one that vanished holds the others back
/// this long at most.
pub fn waiter_keep(pause: Duration, attempt: Duration) -> Duration {
    2 * (pause + attempt)
}
