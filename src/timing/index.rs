//! The clock of an index: interval numbers, when each is ticked, how long
//! a tick vouches for a running command, and the bounds its values must
//! keep.
//!
//! Interval numbers come from the wall clock (Unix epoch), as in the seed,
//! so that replicas that never talk agree on them; each replica ticks
//! interval `n` at `(n-1)·I + skew`, its own constant skew below `I/2`
//! spreading the INCRs of one interval apart. Everything measured *from* a
//! tick (deadlines, the barrier's wait) is on the boot clock instead, which
//! no one can set back. A command that must stop for a transition gets
//! kill-after to do so; all of that has to fit in one interval ([`check`]).

use super::drift::drift;
use super::error::TimingError;
use crate::base::BootInstant;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The shortest interval accepted: it must exceed the clock skew between
/// replicas and a round trip to Redis by far.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// The kill-after of an index when none is given: a quarter interval, or 5 s
/// if that is less.
pub fn default_kill_after(interval: Duration) -> Duration {
    (interval / 4).min(Duration::from_secs(5))
}

/// Checks the user's values: `interval` at least [`MIN_INTERVAL`] and in
/// whole milliseconds (interval numbers are counted in them), `skew` below
/// half of it, `kill_after` at most a quarter of it.
pub fn check(
    interval: Duration,
    skew: Option<Duration>,
    kill_after: Option<Duration>,
) -> Result<(), TimingError> {
    if interval < MIN_INTERVAL {
        return Err(TimingError::IntervalTooShort { interval });
    }
    if interval.subsec_nanos() % 1_000_000 != 0 {
        return Err(TimingError::IntervalNotWholeMilliseconds { interval });
    }
    if let Some(skew) = skew.filter(|&s| s >= interval / 2) {
        return Err(TimingError::SkewTooLarge { skew, interval });
    }
    if let Some(kill_after) = kill_after.filter(|&k| k > interval / 4) {
        return Err(TimingError::KillAfterTooLongForInterval {
            kill_after,
            interval,
        });
    }
    Ok(())
}

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
    /// Checks the user's values ([`check`]); a skew not given is drawn at
    /// random below half the interval, a kill-after not given is
    /// [`default_kill_after`].
    pub fn new(
        interval: Duration,
        skew: Option<Duration>,
        kill_after: Option<Duration>,
    ) -> Result<Timing, TimingError> {
        check(interval, skew, kill_after)?;
        Ok(Timing {
            interval,
            skew: skew.unwrap_or_else(|| random_skew(interval / 2)),
            kill_after: kill_after.unwrap_or_else(|| default_kill_after(interval)),
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

    /// How often a replica waiting to start its command looks again: a
    /// fiftieth of the interval, from 5 ms (no busy loop) to 200 ms (a long
    /// interval does not make the start late).
    pub fn start_poll(&self) -> Duration {
        (self.interval / 50).clamp(Duration::from_millis(5), Duration::from_millis(200))
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
    fn values_outside_the_interval_are_refused() {
        assert!(check(ms(99), None, None).is_err());
        assert!(check(Duration::from_micros(100_500), None, None).is_err());
        assert!(check(ms(1000), Some(ms(500)), None).is_err());
        assert!(check(ms(1000), Some(ms(499)), Some(ms(250))).is_ok());
        assert!(check(ms(1000), None, Some(ms(251))).is_err());
        assert_eq!(default_kill_after(ms(1000)), ms(250));
        assert_eq!(
            default_kill_after(Duration::from_secs(60)),
            Duration::from_secs(5)
        );
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
