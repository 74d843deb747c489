//! Every timing rule, in one place, each named with its reason.
//!
//! The user gives a handful of durations (`timeout`, a lease's `expire`,
//! `interval` and `delay`, a lock's `ttl`, `kill_after`, an index's
//! `interval` and `skew`); everything else yaraus waits for is derived from
//! them here, so that one can read why a limit is what it is:
//!
//! | rule | value | why |
//! | --- | --- | --- |
//! | [`Timeouts::connect`] | timeout | dialing, TLS and the handshake together |
//! | [`Timeouts::response`] | 2 × timeout | a request may carry a `WAIT` of up to timeout |
//! | [`Timeouts::per_request`] | connect = response = request | a node of a quorum: a round is a dial and a request |
//! | [`Timeouts::replica_wait`] | min(connect, ¾ response) | a `WAIT` shortfall must be reported as one, not as a server that did not answer |
//! | [`Timeouts::release`] | response | a release is one last request, bounded so that exit never hangs |
//! | [`Timeouts::settle`] | 2 × response | an interrupted attempt (a script and perhaps a `WAIT`) may finish, so that what it took is given back |
//! | [`Timeouts::sequence_request`] | timeout / 4 | a majority-sequence call is rounds of a dial and a request each, and no round starts that cannot end by timeout |
//! | [`Timeouts::shard_request`] | timeout / 2 | `hilo next` may try every shard, a dial and a request each, within about timeout |
//! | [`Timeouts::lock_request`] | min(timeout, ttl / 10) | a Redlock round must leave most of the ttl as validity |
//! | [`lock::extend_every`] | ttl / 3 | two extensions may fail before the lock runs out |
//! | [`lock::check_ttl`] | 100 ms ..= 1 year | a lock must outlast the round trips that take and extend it |
//! | [`drift::drift`] | 1% + 2 ms | the server's and the holder's clocks run at slightly different rates |
//! | [`drift::validity`] | ttl − drift | what a holder may count on, from before its request |
//! | [`kill_after::within`] | ≤ validity − interval | the command is gone by the deadline, and one renewal can be tried before its SIGTERM |
//! | [`lease::Timing::safeguarded`] | expire ≥ 1 s, interval ≤ expire / 2, delay ≥ 2 × interval + kill-after | a previous holder whose record was lost has seen so and stopped before the new holder starts |
//! | [`sequence::ROUND_LIFETIME`] | 5 s | a round counts no vote after it, so that an emptied node's lost votes are dead by the end of its quarantine |
//! | [`sequence::QUARANTINE`] | 10 s, on the emptied node's clock | outlasts every round at 1% rate drift, with a margin |
//! | [`index::check`] | interval ≥ 100 ms, skew < interval / 2, kill-after ≤ interval / 4 | a transition of the fleet fits in an interval |
//! | [`retry::Backoff`] | 100 ms, doubling to 2 s, drawn in the upper half | a command waiting out a fault is soon back, a dead server is dialed rarely, a fleet does not retry in step |
//! | [`retry::REPORT_EVERY`] | 30 s | a long wait leaves a readable log that shows the command alive |
//! | [`retry::one_shot_wait`] | 5 × timeout | a one-shot command rides out a restart or a quick failover, and still ends |
//! | [`clock_guard::projection_slack`] | 500 ppm of the span + 1 ms | a holder's deadline, projected from its boot clock onto its wall clock, is not before the wall clock's reading then |
//! | [`clock_guard::HANDOVER_MARGIN`] | 10 ms | a worker id's new holder starts once its wall clock is past the old holder's last instant, in a new tick of a 10 ms generator |
//! | [`clock_guard::DEFAULT_MAX_CLOCK_WAIT`] | 10 s | a lag beyond a leap-second smear is a broken clock: refused, not waited out |
//! | [`clock_guard::step_threshold`] | slack + 5 ms | a wall clock that falls further behind the boot clock stepped back |
//! | [`clock_guard::offset_warning`] | delay / 2 | the grace delay was sized for clocks that agree |
//! | [`retry::GIVE_BACK`] | 200 ms | an attempt's `WAIT`s end this long before the bound, and one cut off at the bound gives back what it took within it: nothing is left held, and the command is not kept long past its bound |
//!
//! A rule that a value breaks is a [`TimingError`], which carries the values
//! and names the settings ([`Setting`]); the front end decides how a setting
//! is spelled (the binary: its flags). As a crate [`crate::error::Error`] it
//! is a usage error (exit 2). This module imports nothing of the crate but
//! the bottom layer, so that every layer may use it.

pub mod clock_guard;
pub mod drift;
pub mod index;
pub mod kill_after;
pub mod lease;
pub mod lock;
pub mod retry;
pub mod sequence;

pub use drift::{drift, validity};

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
    /// can be given back: one script and perhaps a `WAIT`, each bounded by
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
