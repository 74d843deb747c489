//! Every subcommand on the deployments users already run, against real
//! processes: a Sentinel-managed group whose master is SIGKILLed
//! (`sentinel.rs`), a Redis Cluster of three masters (`cluster.rs`), and a
//! TLS-only server with throwaway certificates made by `openssl` in the test
//! (`tls.rs`).

#[path = "../common/mod.rs"]
mod common;

mod cluster;
mod sentinel;
mod tls;

use common::{Output, run_yaraus};
use std::time::Duration;

/// How long one short-lived `yaraus` may run before the test fails.
pub const LIMIT: Duration = Duration::from_secs(60);

/// The password of the ACL user the tests make from `yaraus acl-rules`.
pub const USER_PASSWORD: &str = "app-s3cret";

/// Prints the rules of `rules_args` (global options, `acl-rules`, …) and
/// creates the user `app` from them on every server of `servers`.
pub fn create_user(servers: &[&common::RedisServer], rules_args: &[&str]) -> String {
    let out = ok(rules_args);
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("ACL SETUSER "))
        .unwrap_or_else(|| panic!("no ACL SETUSER line in:\n{}", out.stdout))
        .to_string();
    let password = format!(">{USER_PASSWORD}");
    for s in servers {
        let mut args: Vec<&str> = line.split_whitespace().collect();
        args.push(&password);
        assert_eq!(s.query::<String>(&args), "OK");
    }
    line
}

/// `yaraus --redis-user app ARGS` with the user's password in the
/// environment, expecting exit 0.
pub fn ok_as_user(args: &[&str]) -> Output {
    let args = [&["--redis-user", "app"][..], args].concat();
    let out = run_yaraus(&args, &[("YARAUS_REDIS_PASSWORD", USER_PASSWORD)], LIMIT);
    assert_eq!(
        out.code,
        Some(0),
        "yaraus {args:?}\nstdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
    out
}

/// `yaraus ARGS`, expecting exit 0.
pub fn ok(args: &[&str]) -> Output {
    let out = run_yaraus(args, &[], LIMIT);
    assert_eq!(
        out.code,
        Some(0),
        "yaraus {args:?}\nstdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
    out
}
