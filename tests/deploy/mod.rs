//! Every subcommand on the deployments users already run, against real
//! processes: a Sentinel-managed group whose master is SIGKILLed
//! (`sentinel.rs`), a Redis Cluster of three masters (`cluster.rs`; a pool
//! split over its masters by `init --shards`, `shards.rs`), and a
//! TLS-only server with throwaway certificates made by `openssl` in the test
//! (`tls.rs`).

use crate::common;

mod cluster;
mod promoted;
mod sentinel;
mod shards;
mod tls;

use common::{Output, run_yaraus};
use std::time::Duration;

/// How long one short-lived `yaraus` may run before the test fails.
pub const LIMIT: Duration = Duration::from_secs(60);

/// The password of the ACL user the tests make from `yaraus acl-rules`.
pub const USER_PASSWORD: &str = "app-s3cret";

/// Creates the user `app` from the rules of `rules_args` on every server.
pub fn create_user(servers: &[&common::RedisServer], rules_args: &[&str]) -> String {
    common::create_acl_user(servers, rules_args, USER_PASSWORD)
}

/// `yaraus --redis-user app ARGS` with the user's password in the
/// environment, expecting exit 0.
pub fn ok_as_user(args: &[&str]) -> Output {
    let args = [&["--redis-user", "app"][..], args].concat();
    common::run_ok(&args, &[("YARAUS_REDIS_PASSWORD", USER_PASSWORD)], LIMIT)
}

/// As the user: `init --max 2` on `url`, then a `run` (with `global`
/// options before it) whose child is given id 1.
pub fn user_inits_and_gets_id_1(url: &str, global: &[&str]) {
    ok_as_user(&["--redis", url, "init", "--max", "2"]);
    let args = [
        &["--redis", url][..],
        global,
        &["run", "--", "sh", "-c", "echo $YARAUS_WORKER_ID"],
    ]
    .concat();
    let out = ok_as_user(&args);
    assert_eq!(out.stdout.trim(), "1");
}

/// `yaraus ARGS`, expecting exit 0.
pub fn ok(args: &[&str]) -> Output {
    common::run_ok(args, &[], LIMIT)
}
