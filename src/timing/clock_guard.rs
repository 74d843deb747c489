//! The worker id's clock guard: how far a host's wall clock is trusted, and
//! what a hand-over of a worker id waits for.
//!
//! A snowflake-style generator makes ids from (wall-clock time, worker id,
//! sequence). When a worker id moves from host A to host B, B's ids are new
//! only if B's wall clock is past the last instant at which A's command
//! could still make ids, *as A's clock showed it*. That instant (the id's
//! *horizon*) is on A's own clock, and B compares it with its own clock, so
//! the two clocks never need to agree; what the guard assumes is in
//! docs/safety.md. The figures here:
//!
//! * [`SLEW_PPM`]: on one host, the wall clock and the boot clock drift
//!   apart by at most the kernel's largest frequency correction (NTP's
//!   slew, 500 ppm); a holder projects its deadline from the boot clock to
//!   the wall clock with that much to spare ([`projection_slack`]), and a
//!   wall clock that falls behind its boot clock by more than that (plus
//!   [`STEP_TOLERANCE`]) has *stepped* back;
//! * [`HANDOVER_MARGIN`]: the new holder starts once its clock is this far
//!   past the horizon: the record is in whole milliseconds, and generators
//!   with a coarser tick (sonyflake counts in 10 ms) must see a new tick;
//! * [`DEFAULT_MAX_CLOCK_WAIT`]: a lag beyond this is a broken clock, not a
//!   leap-second smear (up to 1 s): refused, not waited out;
//! * [`offset_warning`]: a host whose offset from the server exceeds half the
//!   grace delay is said to drift: the grace delay was sized for clocks that
//!   agree.

use std::time::Duration;

/// The largest rate difference between a host's wall clock and its boot
/// clock, in parts per million: the kernel's largest slew (`adjtimex`).
pub const SLEW_PPM: u32 = 500;

/// How far past the previous holder's horizon the new holder's clock must
/// be before its command starts.
pub const HANDOVER_MARGIN: Duration = Duration::from_millis(10);

/// The longest a new holder waits, beyond the grace delay, for its clock to
/// pass the previous holder's horizon, unless `--max-clock-wait` says.
pub const DEFAULT_MAX_CLOCK_WAIT: Duration = Duration::from_secs(10);

/// A fall of the wall clock against the boot clock beyond the slew and
/// this is a step back (an NTP step, a restored snapshot), not a slew.
pub const STEP_TOLERANCE: Duration = Duration::from_millis(5);

/// What a projection over `span` of the boot clock onto the wall clock adds:
/// the slew over the span, and a millisecond for rounding.
pub fn projection_slack(span: Duration) -> Duration {
    span * SLEW_PPM / 1_000_000 + Duration::from_millis(1)
}

/// How far the wall clock may fall behind the boot clock over `span` before
/// the fall is a step.
pub fn step_threshold(span: Duration) -> Duration {
    projection_slack(span) + STEP_TOLERANCE
}

/// The offset from the server's clock above which `run` warns, for a grace
/// delay `delay`.
pub fn offset_warning(delay: Duration) -> Duration {
    delay / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slack_is_the_slew_and_a_millisecond() {
        assert_eq!(projection_slack(Duration::ZERO), Duration::from_millis(1));
        assert_eq!(
            projection_slack(Duration::from_secs(1800)),
            Duration::from_millis(901)
        );
        assert_eq!(
            step_threshold(Duration::from_secs(2)),
            Duration::from_millis(7)
        );
        assert!(DEFAULT_MAX_CLOCK_WAIT > Duration::from_secs(1));
    }
}
