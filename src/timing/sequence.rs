//! The majority sequence's clocks: how long a round may count votes, and
//! how long a node that lost its counter waits before it is set again.
//!
//! A node that lost its data may have voted, just before, for a proposal
//! still on its way to another node; set again at once (even to the highest
//! counter a majority holds), it could accept the same value a second time
//! and the old round count both votes. So every round that counts votes
//! lives at most [`ROUND_LIFETIME`] on its proposer's boot clock, and the
//! emptied node waits [`QUARANTINE`], on its *own* clock (Redis `TIME`),
//! from the moment it was found empty and marked: by then every round that
//! could hold one of its lost votes has ended. The two clocks never need to
//! agree; only their rates must stay within [`DRIFT_PERCENT`] of real time,
//! which [`quarantine_outlasts_every_round`] checks for the figures chosen.
//!
//! A refused round is tried again after a random pause, growing from
//! [`FIRST_ROUND_PAUSE`] to [`MAX_ROUND_PAUSE`]: the client of a sequence
//! and `seq serve`'s sequencers pause alike.

use std::time::Duration;

/// How long a round of the sequence (or a lock's fencing vote) may count
/// votes, from just before its first request, on the proposer's boot clock.
pub const ROUND_LIFETIME: Duration = Duration::from_secs(5);

/// The largest rate drift of any clock against real time, in percent: far
/// above what NTP lets a clock run off (500 ppm), so that only a clock
/// that is broken, not one that is merely wrong, breaks the bound.
pub const DRIFT_PERCENT: u32 = 1;

/// How long a node found without its counter waits, on its own clock,
/// before it is set again from a majority.
pub const QUARANTINE: Duration = Duration::from_secs(10);

/// How long a node prepared for a creation (`creating:<ms>:<id>`) waits,
/// on its own clock, before a read that finds the creation stopped may
/// roll it back to a mark: every settle of the creation lands within two
/// round lifetimes of its creators' reads, and this outlasts them at
/// [`DRIFT_PERCENT`] (`src/seq/create.rs`, the model `tests/seq_model/birth/`).
pub const CREATION_QUARANTINE: Duration = Duration::from_secs(15);

/// How often one process looks for nodes to mark or repair, at most.
pub const HEAL_EVERY: Duration = Duration::from_secs(1);

/// How often a long-running subcommand (`seq serve`, `hilo agent
/// --every`) sweeps the counters it uses for nodes to mark or repair, with
/// no request needed: a wiped node is marked within this, and set again
/// within this after its quarantine. A sweep lists the node's keys with
/// `SCAN`, so it is seconds, not milliseconds.
pub const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// The first random pause after a refused round (another proposer's round
/// won the nodes, or no majority answered): a round is about a millisecond
/// on a LAN, so two proposers that collided are apart again after a couple.
/// Each pause is drawn below the bound, which doubles up to
/// [`MAX_ROUND_PAUSE`], so that proposers do not collide again in step.
pub const FIRST_ROUND_PAUSE: Duration = Duration::from_millis(2);

/// The longest random pause between two refused rounds: what contention
/// adds to one call stays a fraction of a second.
pub const MAX_ROUND_PAUSE: Duration = Duration::from_millis(200);

/// Whether `quarantine` on the slowest node clock outlasts `round` on the
/// fastest proposer clock, with `margin` to spare: the slowest clock counts
/// (1 − ρ) per second, the fastest (1 + ρ).
pub fn quarantine_outlasts_every_round(
    quarantine: Duration,
    round: Duration,
    margin: Duration,
) -> bool {
    let rho = f64::from(DRIFT_PERCENT) / 100.0;
    let real_round = round.as_secs_f64() / (1.0 - rho);
    let real_quarantine = quarantine.as_secs_f64() / (1.0 + rho);
    real_quarantine >= real_round + margin.as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quarantine_outlasts_a_round_at_the_worst_drift() {
        assert!(quarantine_outlasts_every_round(
            QUARANTINE,
            ROUND_LIFETIME,
            Duration::from_secs(4)
        ));
        assert!(!quarantine_outlasts_every_round(
            ROUND_LIFETIME,
            ROUND_LIFETIME,
            Duration::ZERO
        ));
        assert!(HEAL_EVERY < QUARANTINE);
        assert!(SWEEP_EVERY < QUARANTINE);
    }

    #[test]
    fn a_stopped_creation_outlasts_its_creator_and_its_settles() {
        assert!(quarantine_outlasts_every_round(
            CREATION_QUARANTINE,
            2 * ROUND_LIFETIME,
            Duration::from_secs(4)
        ));
        assert!(!quarantine_outlasts_every_round(
            QUARANTINE,
            2 * ROUND_LIFETIME,
            Duration::ZERO
        ));
    }
}
