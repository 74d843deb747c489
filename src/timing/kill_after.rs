//! The time a command gets to stop: SIGTERM `kill_after` before the claim's
//! deadline (or as soon as the claim is lost), SIGKILL at the deadline.
//!
//! The whole of it must fit inside the claim's validity, or the command
//! could outlive the claim; and where the claim is renewed, with room for
//! one renewal to be tried first, or a single slow round trip would have the
//! command killed.

use super::error::TimingError;
use crate::base::setting::Setting;
use std::time::Duration;

/// The kill-after used when none is given: 5 s, or a quarter of the claim's
/// validity when that is less (a 2 s lock cannot give 5 s).
pub fn default(validity: Duration) -> Duration {
    Duration::from_secs(5).min(validity / 4)
}

/// The kill-after to use: `requested`, or the [`default`], checked against
/// a claim valid for `validity` and renewed every `renewed_every` (`None`:
/// the renewal room is not required). `length` names the setting that makes
/// the claim longer, for the error.
pub fn within(
    requested: Option<Duration>,
    validity: Duration,
    renewed_every: Option<Duration>,
    length: Setting,
) -> Result<Duration, TimingError> {
    let Some(kill_after) = requested else {
        return Ok(default(validity));
    };
    if kill_after <= room(validity, renewed_every) {
        return Ok(kill_after);
    }
    Err(TimingError::KillAfterDoesNotFit {
        kill_after,
        validity,
        renewed_every,
        length,
    })
}

/// The longest kill-after that fits.
pub(super) fn room(validity: Duration, renewed_every: Option<Duration>) -> Duration {
    match renewed_every {
        Some(every) => validity.saturating_sub(every),
        None => validity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_default_is_five_seconds_or_a_quarter_of_the_validity() {
        assert_eq!(default(ms(1_782_000)), ms(5000));
        assert_eq!(default(ms(1978)), ms(494) + Duration::from_micros(500));
        let (validity, every) = (ms(1978), ms(666));
        let ka = within(None, validity, Some(every), Setting::Ttl).unwrap();
        assert!(ka + every <= validity);
    }

    #[test]
    fn a_kill_after_that_leaves_no_room_for_a_renewal_is_refused() {
        // A lock of 2 s with a kill-after of 1.5 s: valid for 1.978 s, extended every 666 ms.
        let e = within(Some(ms(1500)), ms(1978), Some(ms(666)), Setting::Ttl).unwrap_err();
        assert!(matches!(e, TimingError::KillAfterDoesNotFit { .. }));
        let text = e.to_string();
        assert!(text.contains("kill_after 1.5s"), "{text}");
        assert!(text.contains("1.312s or less"), "{text}");
        assert!(text.ends_with("a longer ttl"), "{text}");
        assert_eq!(
            within(Some(ms(1312)), ms(1978), Some(ms(666)), Setting::Ttl).unwrap(),
            ms(1312)
        );
    }

    #[test]
    fn without_the_renewal_room_kill_after_must_still_fit_inside_the_validity() {
        assert_eq!(
            within(Some(ms(400)), ms(493), None, Setting::Expire).unwrap(),
            ms(400)
        );
        assert!(within(Some(ms(500)), ms(493), None, Setting::Expire).is_err());
    }
}
