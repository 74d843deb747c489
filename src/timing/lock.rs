//! A lock's timing: how long it may live, how often it is extended, how
//! long a release may take, and how often a waiter tries again.

use super::error::TimingError;
use std::time::Duration;

/// The shortest ttl accepted: the lock must outlive the round trips that
/// take and extend it.
pub const MIN_TTL: Duration = Duration::from_millis(100);
/// The longest ttl accepted (Redis's PX takes anything, people rarely mean it).
pub const MAX_TTL: Duration = Duration::from_secs(365 * 24 * 3600);

/// The shortest and longest random pause between two attempts at a busy
/// lock (redsync's defaults). With wake-ups it is only the fallback poll: a
/// release ends it.
pub const RETRY_PAUSE: (Duration, Duration) =
    (Duration::from_millis(50), Duration::from_millis(250));

/// Checks a lock's ttl against [`MIN_TTL`] and [`MAX_TTL`].
pub fn check_ttl(ttl: Duration) -> Result<Duration, TimingError> {
    if ttl < MIN_TTL {
        return Err(TimingError::TtlTooShort { ttl });
    }
    if ttl > MAX_TTL {
        return Err(TimingError::TtlTooLong { ttl });
    }
    Ok(ttl)
}

/// How often a held lock is extended: every third of its ttl, so that two
/// extensions in a row may fail before it runs out.
pub fn extend_every(ttl: Duration) -> Duration {
    ttl / 3
}

/// The bound on a release that fans out to the masters in one round of
/// `round`: twice that, so that one slow master still gets its delete.
pub fn release(round: Duration) -> Duration {
    round * 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttls_outside_the_bounds_are_refused() {
        assert!(check_ttl(Duration::from_millis(99)).is_err());
        assert!(check_ttl(MIN_TTL).is_ok());
        assert!(check_ttl(MAX_TTL + Duration::from_secs(1)).is_err());
        assert_eq!(
            extend_every(Duration::from_secs(30)),
            Duration::from_secs(10)
        );
    }
}
