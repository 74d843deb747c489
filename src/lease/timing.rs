//! The timing of a worker-id lease and its safeguards.
//!
//! The safeguards carry a safety claim (a new holder does not start its
//! command while a previous holder whose record was lost may still run its
//! own), so they live in the library, where an embedder cannot skip them by
//! accident: [`Timing::safeguarded`] is the only way to a [`Timing`] (its
//! fields are private), and a [`super::Leaser`] is made from one.

use crate::claim::validity;
use crate::error::Result;
use crate::supervise::hold::kill_after_within;
use std::time::Duration;

/// Timing of a run after the safeguards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    interval: Duration,
    delay: Duration,
    expire: Duration,
    kill_after: Duration,
}

/// Timing as given on the command line.
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
    /// the new holder starts its own. A value that breaks one is raised, with
    /// a warning (returned); without safeguards all are kept as given.
    ///
    /// `--kill-after` is not a safeguard but part of the promise (the command
    /// is gone by the deadline): one that does not fit is refused, always.
    pub fn safeguarded(req: Requested) -> Result<(Timing, Vec<String>)> {
        let mut warnings = Vec::new();
        let fmt = |d: Duration| humantime::format_duration(d).to_string();
        let (mut expire, mut interval) = (req.expire, req.interval);
        if req.safeguards && expire < Duration::from_secs(1) {
            let min = Duration::from_secs(1);
            warnings.push(format!(
                "WARNING: --expire {} is too short; using {} instead",
                fmt(expire),
                fmt(min)
            ));
            expire = min;
        }
        if req.safeguards && interval > expire / 2 {
            let max = expire / 2;
            warnings.push(format!(
                "WARNING: --interval {} is too long for --expire {}; using {} instead",
                fmt(interval),
                fmt(expire),
                fmt(max)
            ));
            interval = max;
        }
        let validity = validity(expire);
        let kill_after = kill_after_within(
            req.kill_after,
            validity,
            interval,
            req.safeguards,
            "--expire",
        )?;
        let min_delay = interval * 2 + kill_after;
        let mut delay = req.delay.unwrap_or(min_delay);
        if req.safeguards && delay < min_delay {
            warnings.push(format!(
                "WARNING: --delay {} is shorter than 2 x interval + kill-after; using {} instead",
                fmt(delay),
                fmt(min_delay)
            ));
            delay = min_delay;
        }
        let timing = Timing {
            interval,
            delay,
            expire,
            kill_after,
        };
        Ok((timing, warnings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

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
        assert!(matches!(e, Error::Usage(_)), "{e}");
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
