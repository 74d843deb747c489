//! Riding out what passes: the pauses between attempts while the servers
//! cannot be reached, how often a waiting command says so, and how long a
//! one-shot command waits when its user gave no bound.
//!
//! A failover, a restart (`LOADING`), a master without its replicas
//! (`MASTERDOWN`) or a refused connection lasts seconds to a minute. A
//! command retries through it, with pauses that grow from [`FIRST_PAUSE`]
//! to [`MAX_PAUSE`] (so that a dead server costs a dial every couple of
//! seconds, not a busy loop) and are drawn at random within the upper half
//! of their range (so that a fleet that lost its server at one instant does
//! not come back in step), until the bound its user gave.

use crate::base::random::random_below;
use std::time::Duration;

/// The pause after the first attempt that could not reach its servers: a
/// connection refused during a restart is often accepted a moment later.
pub const FIRST_PAUSE: Duration = Duration::from_millis(100);

/// The longest pause between two attempts: a command is at most this late
/// once its servers are back, and a fleet of waiting commands dials a dead
/// server no more than once per client per this.
pub const MAX_PAUSE: Duration = Duration::from_secs(2);

/// While waiting, say so again this often: a wait of hours leaves a
/// readable log, and a person reading it knows the command is alive.
pub const REPORT_EVERY: Duration = Duration::from_secs(30);

/// How long an attempt has to be undone around the bound:
/// the last attempt starts this long before the bound at the latest, and
/// its `WAIT`s for replicas end this long before the bound, so that one
/// that falls short releases what it took itself before it; and
/// what an attempt cut off at the bound took may take this long to be
/// released after it. A release on a live connection is one round trip
/// (well under a millisecond on a LAN); a server that does not answer in
/// this time is frozen or gone, and what the attempt took there expires
/// with its ttl. It is the only time a command spends past its bound.
pub const UNDO_WITHIN: Duration = Duration::from_millis(200);

/// The bound of a one-shot command (`init`, `stats`, `list`, `seq next`,
/// `hilo next`, …) whose user gave none: five times the per-request
/// timeout, 10 s at the default 2 s. That is at least two attempts of a
/// full timeout each, and longer than a restarted Redis with a small data
/// set takes to load or a Sentinel with a short `down-after-milliseconds`
/// takes to promote a replica; yet a command run from cron or a script
/// still ends, as a systemd unit's start does within its timeout. A command
/// that supervises (`run`, `lock`, `index`) waits as long as it takes
/// unless told otherwise, as `flock` and `consul lock` do.
pub fn one_shot_wait(timeout: Duration) -> Duration {
    timeout * 5
}

/// The growing pauses of one wait.
#[derive(Clone, Debug)]
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff { next: FIRST_PAUSE }
    }
}

impl Backoff {
    /// The next pause, drawn within the upper half of its range (at least
    /// `floor`); the range doubles up to [`MAX_PAUSE`].
    pub fn pause(&mut self, floor: Duration) -> Duration {
        let range = self.next.max(floor);
        self.next = (self.next * 2).min(MAX_PAUSE);
        range / 2 + random_below(range - range / 2)
    }

    /// Back to [`FIRST_PAUSE`]: the servers answered.
    pub fn reset(&mut self) {
        self.next = FIRST_PAUSE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_grow_to_the_cap_and_stay_in_the_upper_half() {
        let mut backoff = Backoff::default();
        let mut ranges = Vec::new();
        for _ in 0..8 {
            let range = backoff.next;
            let pause = backoff.pause(Duration::ZERO);
            assert!(
                pause >= range / 2 && pause <= range,
                "{pause:?} of {range:?}"
            );
            ranges.push(range.as_millis());
        }
        assert_eq!(ranges, [100, 200, 400, 800, 1600, 2000, 2000, 2000]);
        backoff.reset();
        let floor = Duration::from_secs(1);
        let pause = backoff.pause(floor);
        assert!(pause >= floor / 2 && pause <= floor, "{pause:?}");
        assert_eq!(
            one_shot_wait(Duration::from_secs(2)),
            Duration::from_secs(10)
        );
    }
}
