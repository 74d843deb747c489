//! Messages in the user's words: each mistake or state
//! is said in one line on stderr, with durations written as they are
//! typed, no redis-rs error name, and Redis left as it was where nothing
//! should change.
//!
//! # Layout
//!
//! This file holds the helpers: yaraus run to its end, and the check that
//! it said exactly one line.
//!
//! * `durations.rs`: a duration in a message, a nonsense `DURATION`.
//! * `url.rs`: an unknown URL query parameter.
//! * `server.rs`: a refused password, a port that is not Redis.
//! * `pool.rs`: a full pool, `init --max` shrinking past leased ids.
//! * `placeholder.rs`: `run` with a command that never sees the id.

use crate::common;

mod durations;
mod placeholder;
mod pool;
mod server;
mod url;

use std::time::Duration;

use common::Output;

pub const USAGE: i32 = 2;
pub const UNAVAILABLE: i32 = 69;
pub const TEMPFAIL: i32 = 75;
pub const SOFTWARE: i32 = 125;

/// No command here may take longer than this; a hang fails the test.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(20);

pub fn yaraus(args: &[&str]) -> Output {
    yaraus_env(args, &[])
}

pub fn yaraus_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    common::run_yaraus(args, env, COMMAND_TIMEOUT)
}

/// Checks that `out` has status `code`, nothing on stdout and exactly one
/// line on stderr containing each of `names`; returns the line.
pub fn one_line(args: &[&str], out: &Output, code: i32, names: &[&str]) -> String {
    assert_eq!(out.code, Some(code), "yaraus {args:?}: {out:#?}");
    assert_eq!(out.stdout, "", "yaraus {args:?} wrote to stdout: {out:#?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "yaraus {args:?}: not one line: {out:#?}");
    for name in names {
        assert!(
            lines[0].contains(name),
            "yaraus {args:?}: the line does not say {name:?}: {}",
            lines[0]
        );
    }
    lines[0].to_string()
}
