//! The clock of an index: interval numbers, when each is ticked, and how long
//! a tick vouches for a running command.
//!
//! Interval numbers come from the wall clock (Unix epoch), as in the seed,
//! so that replicas that never talk agree on them; each replica ticks
//! interval `n` at `(n-1)·I + skew`, its own constant skew below `I/2`
//! spreading the INCRs of one interval apart. Everything measured *from* a
//! tick (deadlines, the barrier's wait) is on the boot clock instead, which
//! no one can set back.

use crate::base::BootInstant;
use crate::timing::index as rules;
use crate::timing::{TimingError, drift};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How many intervals the keys of one interval are kept (for `--status`,
/// and so that a replica of another `--interval` may take the name over
/// once the fleet has been gone this long).
pub const KEEP: u32 = 6;

/// An index's timing, as one replica keeps it.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    interval: Duration,
    skew: Duration,
    kill_after: Duration,
}

impl Timing {
    /// Checks the user's values ([`crate::timing::index::check`]); a skew
    /// not given is drawn at random below half the interval, a kill-after
    /// not given is [`crate::timing::index::default_kill_after`].
    pub fn new(
        interval: Duration,
        skew: Option<Duration>,
        kill_after: Option<Duration>,
    ) -> Result<Timing, TimingError> {
        rules::check(interval, skew, kill_after)?;
        Ok(Timing {
            interval,
            skew: skew.unwrap_or_else(|| random_skew(interval / 2)),
            kill_after: kill_after.unwrap_or_else(|| rules::default_kill_after(interval)),
        })
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    pub fn interval_ms(&self) -> u64 {
        self.interval.as_millis() as u64
    }

    pub fn skew(&self) -> Duration {
        self.skew
    }

    pub fn kill_after(&self) -> Duration {
        self.kill_after
    }

    /// How long the keys of one interval are kept.
    pub fn keep_ms(&self) -> u64 {
        self.interval_ms() * u64::from(KEEP)
    }

    /// How late a tick may come (or take) before the command it should have
    /// vouched for is stopped: a quarter interval.
    pub fn overdue(&self) -> Duration {
        self.interval / 4
    }

    /// How long after a tick was sent the command it vouched for may run:
    /// until the next tick is overdue, plus kill-after to stop it.
    pub fn validity(&self) -> Duration {
        self.interval + self.overdue() + self.kill_after
    }

    /// How long after a reply every command that a tick sent before it
    /// vouched for is gone, on any replica's clock: the validity and its
    /// drift margin.
    pub fn others_gone_after(&self) -> Duration {
        let v = self.validity();
        v + drift(v)
    }

    /// The number of the interval whose tick is due at `wall` (time since the
    /// epoch): `ceil(now / I)` of the seed, with the skew taken off `now`.
    pub fn number_at(&self, wall: Duration) -> u64 {
        let shifted = wall.saturating_sub(self.skew).as_millis() as u64;
        shifted / self.interval_ms() + 1
    }

    /// When interval `number` is ticked (time since the epoch).
    pub fn tick_at(&self, number: u64) -> Duration {
        Duration::from_millis((number - 1) * self.interval_ms()) + self.skew
    }

    /// The number of the interval whose tick is due now.
    pub fn number_now(&self) -> u64 {
        self.number_at(wall_now())
    }

    /// The instant (boot clock) of the tick of `number`: now, if it is due.
    pub fn tick_instant(&self, number: u64) -> BootInstant {
        let wall = wall_now();
        BootInstant::now() + self.tick_at(number).saturating_sub(wall)
    }
}

/// Time since the Unix epoch.
pub fn wall_now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
}

/// A random skew below `half`, in whole milliseconds.
fn random_skew(half: Duration) -> Duration {
    let drawn = crate::base::random::random_below(half);
    Duration::from_millis(drawn.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn numbers_follow_the_seed_shifted_by_the_skew() {
        let t = Timing::new(ms(1000), Some(ms(300)), None).unwrap();
        // ceil(now / I) at now - skew, with a tick exactly on its instant.
        assert_eq!(t.number_at(ms(10_300)), 11);
        assert_eq!(t.tick_at(11), ms(10_300));
        assert_eq!(t.number_at(ms(10_299)), 10);
        assert_eq!(t.number_at(ms(11_299)), 11);
        assert_eq!(t.validity(), ms(1000 + 250 + 250));
    }

    #[test]
    fn bad_values_are_usage_errors() {
        assert!(Timing::new(ms(99), None, None).is_err());
        assert!(Timing::new(ms(1000), Some(ms(500)), None).is_err());
        assert!(Timing::new(ms(1000), None, Some(ms(251))).is_err());
        let t = Timing::new(ms(1000), None, None).unwrap();
        assert!(t.skew() < ms(500));
        assert_eq!(t.kill_after(), ms(250));
        let t = Timing::new(Duration::from_secs(60), Some(ms(0)), None).unwrap();
        assert_eq!(t.kill_after(), Duration::from_secs(5));
    }
}
