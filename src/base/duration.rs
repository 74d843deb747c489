//! How every message writes a duration: as the user would type it to a
//! `DURATION` option, so that what yaraus prints can be passed back to it.
//!
//! * under a second: milliseconds, `52ms` (under a millisecond, `250us`);
//! * under a minute: seconds with the milliseconds as a fraction, `1.311s`;
//! * from a minute up, whole seconds: days, hours, minutes and seconds,
//!   the zero ones left out, `29m59s`, `1h30m`, `365d`; a fraction of a
//!   second there is written in seconds alone, `90.5s`, rather than as
//!   `1m30.5s`, which no parser takes.
//!
//! Months and years are never used: their length depends on the calendar,
//! and "11months 30days 3h 50m 24s" is how humantime wrote 365 days.
//! Precision stops at the millisecond (the microsecond below one).

use std::fmt;
use std::time::Duration;

/// `d` written as [the module](self) says; `format!("{}", shown(d))`.
pub fn shown(d: Duration) -> Shown {
    Shown(d)
}

/// A measured duration (a wait, a time left) as people want to read it:
/// [`shown`] after whole seconds from 10 s up and milliseconds below,
/// since its milliseconds are noise once there are seconds.
pub fn measured(d: Duration) -> Shown {
    shown(rounded(d))
}

fn rounded(d: Duration) -> Duration {
    if d >= Duration::from_secs(10) {
        Duration::from_secs(d.as_secs_f64().round() as u64)
    } else {
        Duration::from_millis(d.as_millis() as u64)
    }
}

/// What [`shown`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shown(Duration);

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d.is_zero() {
            return f.write_str("0s");
        }
        if d < Duration::from_millis(1) {
            return write!(f, "{}us", d.as_micros().max(1));
        }
        let ms = d.as_millis();
        if ms < 1000 {
            return write!(f, "{ms}ms");
        }
        let (secs, frac) = (ms / 1000, ms % 1000);
        if secs < 60 || frac != 0 {
            return seconds(f, secs, frac);
        }
        let mut rest = secs;
        for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)] {
            if rest >= size {
                write!(f, "{}{unit}", rest / size)?;
                rest %= size;
            }
        }
        Ok(())
    }
}

/// `secs.frac s` with the fraction's trailing zeros left out.
fn seconds(f: &mut fmt::Formatter<'_>, secs: u128, frac: u128) -> fmt::Result {
    if frac == 0 {
        return write!(f, "{secs}s");
    }
    let digits = format!("{frac:03}");
    write!(f, "{secs}.{}s", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(d: Duration) -> String {
        shown(d).to_string()
    }

    #[test]
    fn written_as_typed() {
        assert_eq!(s(Duration::ZERO), "0s");
        assert_eq!(s(Duration::from_micros(250)), "250us");
        assert_eq!(s(Duration::from_nanos(1)), "1us");
        assert_eq!(s(Duration::from_millis(52)), "52ms");
        assert_eq!(s(Duration::from_millis(1311)), "1.311s");
        assert_eq!(s(Duration::from_millis(1500)), "1.5s");
        assert_eq!(s(Duration::from_secs(2)), "2s");
        assert_eq!(s(Duration::from_secs(59)), "59s");
        assert_eq!(s(Duration::from_secs(60)), "1m");
        assert_eq!(s(Duration::from_secs(29 * 60 + 59)), "29m59s");
        assert_eq!(s(Duration::from_secs(5400)), "1h30m");
        assert_eq!(s(Duration::from_secs(31_536_000)), "365d");
        assert_eq!(s(Duration::from_secs(90_061)), "1d1h1m1s");
        assert_eq!(s(Duration::from_millis(90_500)), "90.5s");
        assert_eq!(s(Duration::from_nanos(1_311_999_999)), "1.311s");
    }

    #[test]
    fn rounded_to_what_matters() {
        assert_eq!(
            rounded(Duration::from_nanos(1_311_999_999)),
            Duration::from_millis(1311)
        );
        assert_eq!(
            rounded(Duration::from_millis(29_500)),
            Duration::from_secs(30)
        );
        assert_eq!(s(rounded(Duration::from_millis(1_799_873))), "30m");
    }
}
