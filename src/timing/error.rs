//! A timing value that breaks a rule: the values involved, and which
//! settings they came from, so that the front end can name its flags.
//!
//! The domains' files (lock.rs, index.rs, kill_after.rs) build it, so it
//! names none of them: the words it shows, which cite their limits, are in
//! message.rs.

use crate::base::setting::Setting;
use std::time::Duration;

/// A timing value that breaks one of the rules, with the values involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimingError {
    /// The command's time to stop does not fit inside the claim's validity
    /// (with room for one renewal before its SIGTERM, when `renewed_every`).
    KillAfterDoesNotFit {
        kill_after: Duration,
        validity: Duration,
        renewed_every: Option<Duration>,
        /// What sets the claim's length (a lock's ttl, a lease's expire).
        length: Setting,
    },
    /// A lock's ttl is below [`super::lock::MIN_TTL`].
    TtlTooShort { ttl: Duration },
    /// A lock's ttl is above [`super::lock::MAX_TTL`].
    TtlTooLong { ttl: Duration },
    /// An index interval below [`super::index::MIN_INTERVAL`].
    IntervalTooShort { interval: Duration },
    /// An index interval that is not a whole number of milliseconds.
    IntervalNotWholeMilliseconds { interval: Duration },
    /// An index skew of half the interval or more.
    SkewTooLarge { skew: Duration, interval: Duration },
    /// An index kill-after above a quarter of the interval.
    KillAfterTooLongForInterval {
        kill_after: Duration,
        interval: Duration,
    },
}

impl std::error::Error for TimingError {}

/// A broken rule is a usage error: the user's values cannot work. The
/// message (message.rs) names the settings as the front end spells them; a
/// caller that wants the values matches on the [`TimingError`]
/// before converting it.
impl From<TimingError> for crate::error::Error {
    fn from(e: TimingError) -> crate::error::Error {
        crate::error::Error::Usage(e.to_string())
    }
}
