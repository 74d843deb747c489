//! The clock guard of a worker id: what a holder records of its wall clock,
//! and what the next holder waits for (timing rules in
//! [`crate::timing::clock_guard`], the argument in docs/safety.md).
//!
//! The ids a snowflake-style generator makes carry its host's wall-clock
//! time. Each id of the pool therefore has a *horizon* in `ns:clock`: the
//! latest wall-clock instant, on its last holder's own clock, at which a
//! holder's command could still have been making ids. A lease raises it to
//! the holder's deadline projected onto its wall clock, and every renewal
//! again, in the same script that extends the lease (so a deadline the
//! watchdog enforces is never past the recorded horizon); a release, made
//! once the command's whole tree is gone, sets it to the wall clock then,
//! but never below what the holder found when it leased. The next holder
//! starts its command only once its own wall clock is past that horizon by
//! [`HANDOVER_MARGIN`]: two readings of wall clocks compared directly, with
//! no server clock in between, so that no offset has to be estimated.
//!
//! A wall clock that steps back while the command runs would lower later
//! readings: [`WallWatch`] keeps the highest wall-minus-boot offset it has
//! seen, and every projection starts from it. The offset from the server's
//! `TIME` ([`Offset`]) is only watched and reported (and, for an id whose
//! record was lost, bounds what an unknown previous holder's clock may
//! have shown: [`fallback_floor`]).

use crate::base::BootInstant;
use crate::timing::clock_guard::{HANDOVER_MARGIN, projection_slack, step_threshold};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What a holder does about its wall clock while it holds an id.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClockPolicy {
    /// Stop the command (as on a lost lease) when this host's offset from
    /// the server's clock surely exceeds this; refuse to lease beyond it.
    pub max_offset: Option<Duration>,
    /// Stop the command when the wall clock steps back while it runs.
    pub stop_on_step: bool,
    /// Warn when the offset surely exceeds this.
    pub warn_over: Duration,
}

/// When a new holder's command may start, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handover {
    /// The wall-clock instant (Unix ms, this host's clock) to wait for.
    pub floor: i64,
    /// The horizon it comes from: the previous holder's (on its clock), or
    /// `None` for the fallback of an id without a record.
    pub horizon: Option<i64>,
    /// How much of the wait is beyond the grace delay, as of the lease.
    pub beyond_delay: Duration,
}

/// This host's wall clock, in Unix milliseconds (negative before 1970: a
/// clock that wrong is still compared correctly).
pub fn wall_ms() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}

/// Unix milliseconds as an instant of the wall clock.
pub fn wall_instant(ms: i64) -> SystemTime {
    if ms >= 0 {
        UNIX_EPOCH + Duration::from_millis(ms as u64)
    } else {
        UNIX_EPOCH - Duration::from_millis(ms.unsigned_abs())
    }
}

/// `ms` as a readable instant of the wall clock, to the millisecond.
pub fn show_wall(ms: i64) -> String {
    humantime::format_rfc3339_millis(wall_instant(ms)).to_string()
}

fn boot_ms(at: BootInstant) -> i64 {
    (at.as_nanos() / 1_000_000) as i64
}

/// The wall clock against the boot clock: the highest wall-minus-boot
/// offset seen (so that a step back never lowers a projection), and steps
/// back as they are found.
#[derive(Clone, Debug)]
pub struct WallWatch {
    /// The highest wall − boot seen, in milliseconds.
    highest: i64,
    /// The last sample's wall − boot, and when it was taken.
    last: (i64, BootInstant),
}

impl WallWatch {
    pub fn new() -> WallWatch {
        let boot = BootInstant::now();
        let offset = wall_ms() - boot_ms(boot);
        WallWatch {
            highest: offset,
            last: (offset, boot),
        }
    }

    /// Reads both clocks; returns how far the wall clock stepped back since
    /// the last sample, if it fell behind the boot clock by more than a
    /// slew can.
    pub fn sample(&mut self) -> Option<Duration> {
        let boot = BootInstant::now();
        let offset = wall_ms() - boot_ms(boot);
        let (last, at) = self.last;
        self.last = (offset, boot);
        self.highest = self.highest.max(offset);
        let fall = last - offset;
        let threshold = step_threshold(boot.saturating_duration_since(at));
        (fall > threshold.as_millis() as i64).then(|| Duration::from_millis(fall as u64))
    }

    /// The latest the wall clock can show at boot instant `at` (Unix ms),
    /// given everything seen: the highest offset, and the slew from now.
    pub fn wall_at(&self, at: BootInstant) -> i64 {
        let span = at.saturating_duration_since(BootInstant::now());
        self.highest + boot_ms(at) + projection_slack(span).as_millis() as i64
    }

    /// The latest the wall clock has shown (Unix ms).
    pub fn wall_now(&self) -> i64 {
        self.wall_at(BootInstant::now())
    }
}

impl Default for WallWatch {
    fn default() -> Self {
        WallWatch::new()
    }
}

/// This host's wall clock minus the server's `TIME`, as one round trip
/// measured it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offset {
    /// Milliseconds; positive when this host's clock is ahead.
    pub ms: i64,
    /// The measurement's error bound, milliseconds: half the round trip,
    /// and the server's truncation to the millisecond.
    pub error_ms: i64,
}

impl Offset {
    /// Not measured yet (recorded with the first lease).
    pub const UNKNOWN: Offset = Offset {
        ms: 0,
        error_ms: -1,
    };

    /// From the wall clock read when the request was sent, the round trip,
    /// and the server's `TIME` in the reply (ms).
    pub fn measure(sent_wall_ms: i64, round_trip: Duration, server_ms: i64) -> Offset {
        let half = (round_trip.as_millis() as i64 + 1) / 2;
        Offset {
            ms: sent_wall_ms + half - server_ms,
            error_ms: half + 1,
        }
    }

    /// Whether the offset surely exceeds `bound`, either way.
    pub fn surely_exceeds(self, bound: Duration) -> bool {
        self.ms.abs() - self.error_ms > bound.as_millis() as i64
    }

    /// Like "1.204s ahead of the server (± 2ms)".
    pub fn describe(self) -> String {
        let size = crate::base::duration::shown(Duration::from_millis(self.ms.unsigned_abs()));
        let side = if self.ms >= 0 { "ahead of" } else { "behind" };
        format!("{size} {side} the server's (± {}ms)", self.error_ms)
    }
}

/// What `ns:clock` holds for an id: `"<horizon> <offset> <error> <at>"`,
/// milliseconds, `<at>` the server's time of the measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockRecord {
    /// The last wall-clock instant (Unix ms, on the holder's clock) at which
    /// a holder's command could still make ids.
    pub horizon: i64,
    /// The holder's last measured offset from the server.
    pub offset: Offset,
    /// When it was measured (server time, Unix ms).
    pub at: i64,
}

impl ClockRecord {
    /// Reads a record; `None` for anything else.
    pub fn parse(text: &str) -> Option<ClockRecord> {
        let mut parts = text.split(' ').map(str::parse::<i64>);
        let mut next = || parts.next()?.ok();
        let record = ClockRecord {
            horizon: next()?,
            offset: Offset {
                ms: next()?,
                error_ms: next()?,
            },
            at: next()?,
        };
        Some(record)
    }
}

/// The wall-clock instant (Unix ms) after which a new holder may start its
/// command, given the horizon its lease found.
pub fn handover_floor(horizon: i64) -> i64 {
    horizon + HANDOVER_MARGIN.as_millis() as i64
}

/// For an id without a record (a new pool, or one whose record was lost):
/// the floor when every holder keeps within `max_offset` of the server's
/// clock. A previous holder that lost its record has stopped by the end of
/// the grace delay, so its ids carry at most the server's time then plus
/// `max_offset`; on this host's clock that is `leased_wall` (the wall clock
/// at the lease) minus our offset, plus the delay and both bounds.
pub fn fallback_floor(
    leased_wall: i64,
    ours: Offset,
    delay: Duration,
    max_offset: Duration,
) -> i64 {
    leased_wall - ours.ms
        + ours.error_ms
        + delay.as_millis() as i64
        + max_offset.as_millis() as i64
        + HANDOVER_MARGIN.as_millis() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back() {
        let r = ClockRecord::parse("1700000000123 -3004 2 1700000003120").unwrap();
        assert_eq!(r.horizon, 1700000000123);
        assert_eq!(
            r.offset,
            Offset {
                ms: -3004,
                error_ms: 2
            }
        );
        assert_eq!(r.at, 1700000003120);
        for bad in ["", "1 2 3", "1 2 3 x", "a b c d"] {
            assert_eq!(ClockRecord::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_offset_carries_half_the_round_trip() {
        let o = Offset::measure(1000, Duration::from_millis(4), 990);
        assert_eq!(
            o,
            Offset {
                ms: 12,
                error_ms: 3
            }
        );
        assert!(o.surely_exceeds(Duration::from_millis(8)));
        assert!(!o.surely_exceeds(Duration::from_millis(9)));
        assert!(o.describe().contains("ahead of"), "{}", o.describe());
    }

    #[test]
    fn a_projection_is_never_before_the_wall_clock() {
        let watch = WallWatch::new();
        let later = BootInstant::now() + Duration::from_secs(60);
        assert!(watch.wall_at(later) >= wall_ms() + 60_000);
        assert!(watch.wall_now() >= wall_ms() - 1);
    }

    #[test]
    fn the_fallback_waits_for_the_largest_offset_a_holder_may_have() {
        let ours = Offset {
            ms: -500,
            error_ms: 2,
        };
        let floor = fallback_floor(10_000, ours, Duration::from_secs(1), Duration::from_secs(2));
        assert_eq!(floor, 10_000 + 500 + 2 + 1000 + 2000 + 10);
    }
}
