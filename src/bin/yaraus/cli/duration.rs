//! Durations on the command line: a bare number is seconds, fractions
//! included (`2`, `0.5`, as flock(1) takes them), so is one with an `s`
//! (`1.311s`, as messages write it), and humantime's forms (`500ms`, `2s`,
//! `1h30m`) are accepted as well: whatever a message of yaraus writes
//! ([`yaraus::base::duration`]) can be typed back.

use std::time::Duration;

/// How to write a duration, for the error messages.
const FORMS: &str = "write it like 0.5 or 2 (seconds), 1.5s, 500ms, 30m or 1h30m";

/// A duration: seconds as a bare number (`2`, `0.5`, `1.5`) or a humantime
/// duration (`500ms`, `2s`, `30m`, `1h 30m`); never negative.
pub fn duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if s.starts_with('-') {
        return Err(format!("'{s}' is negative: a duration must be positive"));
    }
    if let Some(d) = seconds(s).or_else(|| seconds(s.strip_suffix('s')?)) {
        return d;
    }
    // humantime's own words ("expected number at 0", its list of units)
    // describe its parser, not what to type.
    humantime::parse_duration(s).map_err(|e| match e {
        humantime::DurationError::NumberOverflow => format!("'{s}' is too long a duration"),
        _ => format!("'{s}' is not a duration: {FORMS}"),
    })
}

/// A duration that must be more than zero.
pub fn positive_duration(s: &str) -> Result<Duration, String> {
    let d = duration(s)?;
    if d.is_zero() {
        return Err(format!("'{s}' must be more than zero"));
    }
    Ok(d)
}

/// `s` read as a bare number of seconds (digits, at most one `.`), or
/// `None` when it is not one. Exact to the nanosecond: no float rounding.
fn seconds(s: &str) -> Option<Result<Duration, String>> {
    let (whole, fraction) = s.split_once('.').unwrap_or((s, ""));
    let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !digits(whole) || !digits(fraction) {
        return None;
    }
    let secs = if whole.is_empty() {
        0
    } else {
        match whole.parse::<u64>() {
            Ok(n) => n,
            Err(_) => return Some(Err(format!("'{s}' is too large a number of seconds"))),
        }
    };
    let mut nanos = 0u32;
    for (i, b) in fraction.bytes().take(9).enumerate() {
        nanos += u32::from(b - b'0') * 10u32.pow(8 - i as u32);
    }
    Some(Ok(Duration::new(secs, nanos)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_numbers_are_seconds() {
        assert_eq!(duration("0").unwrap(), Duration::ZERO);
        assert_eq!(duration("2").unwrap(), Duration::from_secs(2));
        assert_eq!(duration("0.5").unwrap(), Duration::from_millis(500));
        assert_eq!(duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(duration(".25").unwrap(), Duration::from_millis(250));
        assert_eq!(duration("3.").unwrap(), Duration::from_secs(3));
        assert_eq!(duration("0.000000001").unwrap(), Duration::from_nanos(1));
        assert!(duration(".").is_err());
        assert!(duration("1.2.3").is_err());
        assert!(duration("99999999999999999999").is_err());
    }

    #[test]
    fn what_messages_write_reads_back() {
        for ms in [
            1, 52, 999, 1000, 1311, 1500, 59_999, 60_000, 90_500, 1_799_000, 5_400_000,
        ] {
            let d = Duration::from_millis(ms);
            let written = yaraus::base::duration::shown(d).to_string();
            assert_eq!(duration(&written), Ok(d), "{written}");
        }
        let year = Duration::from_secs(31_536_000);
        assert_eq!(
            duration(&yaraus::base::duration::shown(year).to_string()),
            Ok(year)
        );
        assert_eq!(duration("1.311s"), Ok(Duration::from_millis(1311)));
    }

    #[test]
    fn nonsense_is_said_in_our_words() {
        for nonsense in ["abc", "0x", "1e3", "5 parsecs", "s"] {
            let e = duration(nonsense).unwrap_err();
            assert_eq!(e, format!("'{nonsense}' is not a duration: {FORMS}"));
        }
        assert!(duration("99999999999999999999h").is_err());
    }

    /// Every `DURATION` option of every subcommand, as `(path, --long)`.
    fn duration_options(
        cmd: &clap::Command,
        path: &[String],
        into: &mut Vec<(Vec<String>, String)>,
    ) {
        for arg in cmd.get_arguments() {
            let is_duration = arg
                .get_value_names()
                .is_some_and(|names| names.iter().any(|n| n.as_str() == "DURATION"));
            if let (true, Some(long)) = (is_duration, arg.get_long()) {
                into.push((path.to_vec(), format!("--{long}")));
            }
        }
        for sub in cmd.get_subcommands() {
            let mut path = path.to_vec();
            path.push(sub.get_name().to_string());
            duration_options(sub, &path, into);
        }
    }

    #[test]
    fn every_duration_option_refuses_a_negative_or_nonsense_value() {
        use clap::CommandFactory;
        let mut options = Vec::new();
        duration_options(&crate::cli::Cli::command(), &[], &mut options);
        assert!(options.len() > 10, "{options:?}");
        for (path, long) in options {
            for (value, says) in [("-5s", "must be positive"), ("soon", FORMS)] {
                let argv = [
                    &["yaraus".to_string()][..],
                    &path,
                    &[long.clone(), value.into()],
                ]
                .concat();
                let e = crate::cli::Cli::command()
                    .try_get_matches_from(&argv)
                    .expect_err(&format!("{argv:?} was accepted"));
                let text = e.to_string();
                assert_eq!(
                    e.kind(),
                    clap::error::ErrorKind::ValueValidation,
                    "{argv:?}: {text}"
                );
                assert!(text.contains(says), "{argv:?}: {text}");
            }
        }
    }

    #[test]
    fn humantime_forms() {
        assert_eq!(duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(duration("1h 30m").unwrap(), Duration::from_secs(5400));
        assert!(duration("soon").is_err());
    }

    #[test]
    fn negative_and_zero() {
        let e = duration("-5s").unwrap_err();
        assert!(e.contains("must be positive"), "{e}");
        assert!(duration("-1").is_err());
        assert!(positive_duration("0s").is_err());
        assert!(positive_duration("0.0").is_err());
    }
}
