//! Every timing rule, in one place, each named with its reason.
//!
//! The user gives a handful of durations (`timeout`, a lease's `expire`,
//! `interval` and `delay`, a lock's `ttl`, `kill_after`, an index's
//! `interval` and `skew`); everything else yaraus waits for is derived from
//! them, or named, here, so that one can read why a limit is what it is.
//! Every named duration of the library lives here (`tests/layers.rs` checks
//! it), one file per domain or concern, each with its why; the README's
//! table of timing rules is their index, with each value.
//!
//! * [`Timeouts`] (this file): every wait on Redis, from the user's `timeout`;
//! * [`drift`]: how much of a ttl a holder may count on; [`kill_after`]:
//!   the time a command gets to stop, inside the claim;
//! * [`lock`], [`lease`], [`index`], [`sequence`], [`hilo`]: each domain's;
//! * [`retry`]: riding out what passes; [`wake`]: waiters woken by a
//!   release; [`clock_guard`]: the worker id's clock guard;
//! * [`supervise`]: the watchdog's own; [`serve`]: `seq serve`'s;
//!   [`listen`]: the listening ports'.
//!
//! A rule that a value breaks is a [`TimingError`], which carries the values
//! and names the settings ([`Setting`]); the front end decides how a setting
//! is spelled (the binary: its flags). As a crate [`crate::error::Error`] it
//! is a usage error (exit 2). This module imports nothing of the crate but
//! the bottom layer, so that every layer may use it.

pub mod clock_guard;
pub mod drift;
pub mod hilo;
pub mod index;
pub mod kill_after;
pub mod lease;
pub mod listen;
pub mod lock;
pub mod retry;
pub mod sequence;
pub mod serve;
pub mod supervise;
pub mod wake;

use crate::base::duration::shown;
use crate::base::setting::Setting;
use std::fmt;
use std::time::Duration;

/// How long to wait for Redis, all derived from the user's `timeout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    connect: Duration,
    response: Duration,
}

impl Timeouts {
    /// The limits of a call bounded by `timeout`.
    pub fn from_timeout(timeout: Duration) -> Timeouts {
        Timeouts {
            connect: timeout,
            // A request may also carry a WAIT of up to the timeout.
            response: timeout * 2,
        }
    }

    /// The limits of one node of a quorum, whose every dial and request is
    /// bounded by `request` (a quorum waits for replicas in its own round).
    pub fn per_request(request: Duration) -> Timeouts {
        Timeouts {
            connect: request,
            response: request,
        }
    }

    /// The user's bound itself.
    pub fn timeout(&self) -> Duration {
        self.connect
    }

    /// Dialing, TLS and the handshake (AUTH, SELECT) together.
    pub fn connect(&self) -> Duration {
        self.connect
    }

    /// One request and its reply: a request may also carry a `WAIT` of up to
    /// the timeout, so it gets that much again on top.
    pub fn response(&self) -> Duration {
        self.response
    }

    /// The bound given to `WAIT` itself: below the response timeout, so that
    /// a shortfall of replicas is reported as one rather than as a server
    /// that did not answer.
    pub fn replica_wait(&self) -> Duration {
        self.connect.min(self.response * 3 / 4)
    }

    /// The final release of a claim on one server: one request, which must
    /// never hold up the exit for long (a claim not released expires anyway).
    pub fn release(&self) -> Duration {
        self.response
    }

    /// An attempt that a signal interrupted, let finish so that what it took
    /// can be released: one script and perhaps a `WAIT`, each bounded by
    /// the response timeout.
    pub fn settle(&self) -> Duration {
        self.response * 2
    }

    /// One request to one node of a majority sequence (`seq`): a call is
    /// rounds of a dial and a request, and no round starts unless it can end
    /// within the timeout, so a round gets half of a half.
    pub fn sequence_request(&self) -> Duration {
        at_least_a_millisecond(self.timeout() / 4)
    }

    /// One request to one shard of a hilo sequence: `next` may try every
    /// shard, a dial and a request each, within about the timeout.
    pub fn shard_request(&self) -> Duration {
        at_least_a_millisecond(self.timeout() / 2)
    }

    /// One request to one master of a lock of `ttl`: a Redlock round must
    /// leave most of the ttl as validity, so it gets a tenth of it at most.
    pub fn lock_request(&self, ttl: Duration) -> Duration {
        at_least_a_millisecond(self.timeout().min(ttl / 10))
    }
}

impl Default for Timeouts {
    /// The binary's default `--timeout`, 2 s.
    fn default() -> Timeouts {
        Timeouts::from_timeout(Duration::from_secs(2))
    }
}

fn at_least_a_millisecond(d: Duration) -> Duration {
    d.max(Duration::from_millis(1))
}

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
    /// A lock's ttl is below [`lock::MIN_TTL`].
    TtlTooShort { ttl: Duration },
    /// A lock's ttl is above [`lock::MAX_TTL`].
    TtlTooLong { ttl: Duration },
    /// An index interval below [`index::MIN_INTERVAL`].
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

impl std::error::Error for TimingError {}

/// A broken rule is a usage error: the user's values cannot work. The
/// message is made here, with the settings named as the front end spells
/// them; a caller that wants the values matches on the [`TimingError`]
/// before converting it.
impl From<TimingError> for crate::error::Error {
    fn from(e: TimingError) -> crate::error::Error {
        crate::error::Error::Usage(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn every_limit_follows_from_the_timeout() {
        let t = Timeouts::from_timeout(ms(2000));
        assert_eq!((t.connect(), t.response()), (ms(2000), ms(4000)));
        assert_eq!(t.replica_wait(), ms(2000));
        assert_eq!((t.release(), t.settle()), (ms(4000), ms(8000)));
        assert_eq!(t.sequence_request(), ms(500));
        assert_eq!(t.shard_request(), ms(1000));
        assert_eq!(t.lock_request(Duration::from_secs(60)), ms(2000));
        assert_eq!(t.lock_request(ms(5000)), ms(500));
        assert_eq!(Timeouts::from_timeout(ms(2)).sequence_request(), ms(1));
    }
}
