//! The command line behaves like the Unix tools yaraus stands in for,
//! against real redis-servers.
//!
//! * `flock.rs`: flock(1)'s conventions: bare seconds, silence on success,
//!   --timeout is not the wait.
//! * `help.rs`: `-h` short, `--help` long, each its own exit table, one
//!   meaning per short flag.
//! * `typos.rs`: an unknown option before `--` is a usage error (exit 2, one
//!   line naming it) and Redis is left as it was; after `--`, anything goes
//!   to the command.
//! * `version.rs`: `--version` names the commit and the features.

use crate::common;

mod flock;
mod help;
mod typos;
mod version;

use common::{Output, RedisServer};
use std::time::Duration;

const USAGE: i32 = 2;

/// No case may take longer than this; a hang fails the test.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

fn yaraus(args: &[&str]) -> Output {
    common::run_yaraus(args, &[], COMMAND_TIMEOUT)
}

/// `--redis URL` followed by `rest`, as owned strings.
fn at(url: &str, rest: &[&str]) -> Vec<String> {
    ["--redis", url]
        .iter()
        .chain(rest)
        .map(|a| a.to_string())
        .collect()
}

/// Checks a usage error: exit 2, nothing on stdout, exactly one line on
/// stderr that contains `names`.
fn check_usage_error(args: &[String], out: &Output, names: &[&str]) {
    assert_eq!(out.code, Some(USAGE), "yaraus {args:?}: {out:#?}");
    assert_eq!(out.stdout, "", "yaraus {args:?}: {out:#?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "yaraus {args:?}: not one line: {out:#?}");
    for name in names {
        assert!(
            lines[0].contains(name),
            "yaraus {args:?}: the error does not name {name:?}: {}",
            lines[0]
        );
    }
}

/// A server with the initialised pool `t` (ids 1..10).
fn server_with_pool() -> RedisServer {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    let out = yaraus(&["-q", "--redis", &url, "init", "--max", "10"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    s
}
