//! The timing of a worker-id lease and its safeguards.
//!
//! The safeguards carry a safety guarantee (a new holder does not start its
//! command while a previous holder whose record was lost may still run its
//! own), so they live in the library, where an embedder cannot skip them by
//! accident: [`Timing::safeguarded`] is the only way to a [`Timing`] (its
//! fields are private), and a [`crate::lease::Leaser`] is made from one.

use super::drift::validity;
use super::error::TimingError;
use super::kill_after;
use crate::base::setting::Setting;
use std::fmt;
use std::time::Duration;

/// Timing of a run after the safeguards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    interval: Duration,
    delay: Duration,
    expire: Duration,
    kill_after: Duration,
}

/// Timing as the user gave it.
#[derive(Debug, Clone, Copy)]
pub struct Requested {
    pub interval: Duration,
    pub delay: Option<Duration>,
    pub expire: Duration,
    pub kill_after: Option<Duration>,
    pub safeguards: bool,
}

impl Timing {
    /// How often the lease is renewed (and a wait for a free id retried).
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// How long to wait after leasing before the command starts.
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// The lease length written at each acquire and renewal.
    pub fn expire(&self) -> Duration {
        self.expire
    }

    /// The time the command gets between SIGTERM and SIGKILL.
    pub fn kill_after(&self) -> Duration {
        self.kill_after
    }

    /// Applies the safeguards: expire ≥ 1s, interval ≤ expire/2, delay ≥
    /// 2 × interval + kill-after. The last makes sure that a previous holder
    /// whose record was lost (failover, restart without persistence) has seen
    /// the ownership error at its next renewal and killed its command before
    /// the new holder starts its own. A value that breaks one is raised, and
    /// the change returned; without safeguards all are kept as given.
    ///
    /// The kill-after is not a safeguard but part of the promise (the command
    /// is gone by the deadline): one that does not fit is refused, always.
    pub fn safeguarded(req: Requested) -> Result<(Timing, Vec<Adjustment>), TimingError> {
        let mut adjusted = Vec::new();
        let (mut expire, mut interval) = (req.expire, req.interval);
        if req.safeguards && expire < MIN_EXPIRE {
            adjusted.push(Adjustment::ExpireRaised {
                given: expire,
                used: MIN_EXPIRE,
            });
            expire = MIN_EXPIRE;
        }
        if req.safeguards && interval > expire / 2 {
            let used = expire / 2;
            adjusted.push(Adjustment::IntervalLowered {
                given: interval,
                expire,
                used,
            });
            interval = used;
        }
        let renewal_room = req.safeguards.then_some(interval);
        let kill_after = kill_after::within(
            req.kill_after,
            validity(expire),
            renewal_room,
            Setting::Expire,
        )?;
        let min_delay = interval * 2 + kill_after;
        let mut delay = req.delay.unwrap_or(min_delay);
        if req.safeguards && delay < min_delay {
            adjusted.push(Adjustment::DelayRaised {
                given: delay,
                used: min_delay,
            });
            delay = min_delay;
        }
        let timing = Timing {
            interval,
            delay,
            expire,
            kill_after,
        };
        Ok((timing, adjusted))
    }
}

/// The shortest lease the safeguards allow.
const MIN_EXPIRE: Duration = Duration::from_secs(1);

/// The random pause between two attempts of a run waiting for a free id:
/// from half the renewal `interval` to all of it, so that waiters started
/// together spread out. With wake-ups it is only the fallback poll, for an
/// id freed without a release (a lease that expired, an id freed by hand,
/// a pool grown by `init`).
pub fn poll_pause(interval: Duration) -> (Duration, Duration) {
    (interval / 2, interval)
}

/// A value the safeguards changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adjustment {
    /// The lease was shorter than a second.
    ExpireRaised { given: Duration, used: Duration },
    /// The renewal interval left no second chance inside the lease.
    IntervalLowered {
        given: Duration,
        expire: Duration,
        used: Duration,
    },
    /// The grace delay was shorter than a lost holder may need to stop.
    DelayRaised { given: Duration, used: Duration },
}

impl fmt::Display for Adjustment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Setting::{Delay, Expire, Interval};
        let fmt = crate::base::duration::shown;
        match *self {
            Adjustment::ExpireRaised { given, used } => write!(
                f,
                "{Expire} {} is too short; using {} instead",
                fmt(given),
                fmt(used)
            ),
            Adjustment::IntervalLowered {
                given,
                expire,
                used,
            } => write!(
                f,
                "{Interval} {} is too long for {Expire} {}; using {} instead",
                fmt(given),
                fmt(expire),
                fmt(used)
            ),
            Adjustment::DelayRaised { given, used } => write!(
                f,
                "{Delay} {} is shorter than 2 x interval + kill-after; using {} instead",
                fmt(given),
                fmt(used)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn req(interval: u64, delay: Option<u64>, expire: u64, kill_after: Option<u64>) -> Requested {
        Requested {
            interval: ms(interval),
            delay: delay.map(ms),
            expire: ms(expire),
            kill_after: kill_after.map(ms),
            safeguards: true,
        }
    }

    fn t(interval: u64, delay: u64, expire: u64, kill_after: u64) -> Timing {
        Timing {
            interval: ms(interval),
            delay: ms(delay),
            expire: ms(expire),
            kill_after: ms(kill_after),
        }
    }

    #[test]
    fn defaults_pass_the_safeguards() {
        let (safe, warnings) = Timing::safeguarded(req(1000, None, 1_800_000, None)).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(safe, t(1000, 7000, 1_800_000, 5000));
    }

    #[test]
    fn unsafe_values_are_raised() {
        let (safe, warnings) = Timing::safeguarded(req(2000, Some(0), 500, Some(100))).unwrap();
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert_eq!(safe, t(500, 1100, 1000, 100));
    }

    #[test]
    fn a_kill_after_longer_than_the_lease_allows_is_refused_even_without_safeguards() {
        let e = Timing::safeguarded(req(500, None, 2000, Some(1800))).unwrap_err();
        assert!(matches!(e, TimingError::KillAfterDoesNotFit { .. }), "{e}");
        let mut r = req(500, None, 2000, Some(1800));
        r.safeguards = false;
        assert!(
            Timing::safeguarded(r).is_ok(),
            "1.8 s fits in a 1.978 s lease"
        );
        r.kill_after = Some(ms(2000));
        assert!(Timing::safeguarded(r).is_err());
    }
}
