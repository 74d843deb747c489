//! The bounds of an index's timing: each replica ticks once per interval,
//! at its own skew into it, and a command that must stop for a transition
//! gets kill-after to do so; all of that has to fit in one interval.

use super::TimingError;
use std::time::Duration;

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
}
