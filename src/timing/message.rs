//! What a broken timing rule tells the user: the values, the limit they
//! break and what to give instead.
//!
//! A message cites its limit from the domain's file (a lock's
//! `lock::MIN_TTL`, an index's `index::MIN_INTERVAL`, `kill_after::room`),
//! and those files build the [`TimingError`]; so the words live here, apart
//! from the enum (error.rs), which names no domain.

use super::error::TimingError;
use super::{index, kill_after, lock};
use crate::base::duration::shown;
use crate::base::setting::Setting;
use std::fmt;

impl fmt::Display for TimingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Setting::{Interval, KillAfter, Skew, Ttl};
        let fmt = shown;
        match *self {
            TimingError::KillAfterDoesNotFit {
                kill_after,
                validity,
                renewed_every,
                length,
            } => {
                let room = kill_after::room(validity, renewed_every);
                let renewals = match renewed_every {
                    Some(every) => format!(", renewed every {}", shown(every)),
                    None => String::new(),
                };
                write!(
                    f,
                    "{KillAfter} {} does not fit: the claim is valid for {}{renewals}, and the \
                     command must be gone by then; give {KillAfter} {} or less, or a longer \
                     {length}",
                    shown(kill_after),
                    shown(validity),
                    shown(room)
                )
            }
            TimingError::TtlTooShort { ttl } => write!(
                f,
                "{Ttl} {} is too short: a lock must live at least {} to outlast the round trips \
                 that take and extend it",
                fmt(ttl),
                fmt(lock::MIN_TTL)
            ),
            TimingError::TtlTooLong { ttl } => write!(
                f,
                "{Ttl} {} is too long: at most {}; a lock held longer is extended while its \
                 command runs",
                fmt(ttl),
                fmt(lock::MAX_TTL)
            ),
            TimingError::IntervalTooShort { interval } => write!(
                f,
                "{Interval} {} is too short: give at least {} (it must exceed the clock skew \
                 between replicas and a round trip to Redis by far)",
                fmt(interval),
                fmt(index::MIN_INTERVAL)
            ),
            TimingError::IntervalNotWholeMilliseconds { interval } => write!(
                f,
                "{Interval} {} is not a whole number of milliseconds",
                fmt(interval)
            ),
            TimingError::SkewTooLarge { skew, interval } => write!(
                f,
                "{Skew} {} must be below half the interval ({})",
                fmt(skew),
                fmt(interval / 2)
            ),
            TimingError::KillAfterTooLongForInterval {
                kill_after,
                interval,
            } => write!(
                f,
                "{KillAfter} {} is too long for {Interval} {}: give {} or less (a command that \
                 takes longer to stop holds up the whole fleet's transition)",
                fmt(kill_after),
                fmt(interval),
                fmt(interval / 4)
            ),
        }
    }
}
