//! Instants on the clock that keeps counting while the machine sleeps.
//!
//! A claim's deadline is a promise about the *server's* clock: Redis expires
//! a lease or a lock a fixed time after it was written, whether or not this
//! machine was suspended in between. `CLOCK_MONOTONIC` (tokio's and std's
//! `Instant`) stops during a suspend, so a deadline measured on it would come
//! late by however long the laptop lid was shut or the VM was paused, and the
//! child would run on while someone else holds the claim. `CLOCK_BOOTTIME`
//! is the same clock plus the time spent suspended; every deadline here is on
//! it, and so is the timer that waits for one ([`BootInstant::sleep_until`],
//! a `timerfd`, which fires at once on resume when the deadline passed in
//! between).
//!
//! The watchdog process shares this clock, so a deadline crosses the process
//! boundary as a plain number of nanoseconds since boot.

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{
    ClockId as TimerClock, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags,
};
use nix::time::{ClockId, clock_gettime};
use std::ops::{Add, Sub};
use std::time::Duration;

/// A point in time on `CLOCK_BOOTTIME`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BootInstant(Duration);

impl BootInstant {
    /// Now.
    pub fn now() -> BootInstant {
        // CLOCK_BOOTTIME exists on every Linux since 2.6.39; failing to read
        // it would mean no clock at all, which nothing here could survive.
        let now = clock_gettime(ClockId::CLOCK_BOOTTIME).expect("CLOCK_BOOTTIME is readable");
        BootInstant(Duration::from(now))
    }

    /// The instant `nanos` nanoseconds after boot (the wire form).
    pub fn from_nanos(nanos: u64) -> BootInstant {
        BootInstant(Duration::from_nanos(nanos))
    }

    /// Nanoseconds since boot (the wire form).
    pub fn as_nanos(self) -> u64 {
        u64::try_from(self.0.as_nanos()).unwrap_or(u64::MAX)
    }

    /// How long until `self`; zero once it has passed.
    pub fn remaining(self) -> Duration {
        self.0.saturating_sub(BootInstant::now().0)
    }

    /// Whether `self` has come.
    pub fn has_passed(self) -> bool {
        BootInstant::now() >= self
    }

    /// `self - d`, or the clock's origin if that would come before it.
    pub fn saturating_sub(self, d: Duration) -> BootInstant {
        BootInstant(self.0.saturating_sub(d))
    }

    /// How long ago `self` was; zero if it has not come yet.
    pub fn elapsed(self) -> Duration {
        BootInstant::now().saturating_duration_since(self)
    }

    /// How long after `earlier` this is; zero if it is not after.
    pub fn saturating_duration_since(self, earlier: BootInstant) -> Duration {
        self.0.saturating_sub(earlier.0)
    }

    /// A one-shot timer that becomes readable at `self`, counted on this
    /// clock; for a poll loop.
    pub fn timer(self) -> nix::Result<TimerFd> {
        let timer = TimerFd::new(
            TimerClock::CLOCK_BOOTTIME,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        arm(&timer, self)?;
        Ok(timer)
    }

    /// Resolves at `self`, counting time spent suspended. Cancel-safe.
    pub async fn sleep_until(self) {
        if self.has_passed() {
            return;
        }
        let timer = match self
            .timer()
            .map_err(std::io::Error::from)
            .and_then(super::sys::async_timer)
        {
            Ok(timer) => timer,
            // Out of descriptors: fall back on the monotonic clock, checked
            // again against this one on every wake-up.
            Err(_) => {
                while !self.has_passed() {
                    tokio::time::sleep(self.remaining().min(Duration::from_millis(100))).await;
                }
                return;
            }
        };
        while !self.has_passed() {
            // The monotonic sleep is a backstop for a timer that fires late
            // (an LD_PRELOAD that shifts clocks, such as libfaketime, moves
            // absolute expirations): it never ends before `self`, since the
            // monotonic clock stops where the boot clock goes on.
            tokio::select! {
                ready = timer.readable() => match ready {
                    Ok(mut ready) => {
                        ready.clear_ready();
                        // A one-shot timer that fired early (libfaketime
                        // does that too) would never fire again: set it
                        // once more.
                        if !self.has_passed() && arm(timer.get_ref().timer(), self).is_err() {
                            tokio::time::sleep(Duration::from_millis(10)).await;
                        }
                    }
                    Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
                },
                _ = tokio::time::sleep(self.remaining()) => {}
            }
        }
    }
}

/// Sets `timer` to fire once at `at`.
pub fn arm(timer: &TimerFd, at: BootInstant) -> nix::Result<()> {
    // A zero expiration would disarm the timer: an instant at the origin is
    // long past anyway, so one nanosecond after it fires at once.
    let at = at.0.max(Duration::from_nanos(1));
    timer.set(
        Expiration::OneShot(TimeSpec::from_duration(at)),
        TimerSetTimeFlags::TFD_TIMER_ABSTIME,
    )
}

impl Add<Duration> for BootInstant {
    type Output = BootInstant;
    fn add(self, d: Duration) -> BootInstant {
        BootInstant(self.0 + d)
    }
}

impl Sub<Duration> for BootInstant {
    type Output = BootInstant;
    fn sub(self, d: Duration) -> BootInstant {
        BootInstant(self.0 - d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_form_round_trips() {
        let t = BootInstant::now();
        assert_eq!(BootInstant::from_nanos(t.as_nanos()), t);
    }

    #[tokio::test]
    async fn sleep_until_returns_once_the_instant_has_passed() {
        let at = BootInstant::now() + Duration::from_millis(30);
        at.sleep_until().await;
        assert!(at.has_passed());
        // An instant in the past returns at once.
        (BootInstant::now() - Duration::from_millis(1))
            .sleep_until()
            .await;
    }
}
