//! Least privilege and secrets, against real redis-servers: a Redis user
//! made from `yaraus acl-rules` runs every pool subcommand and `lock` (one
//! master and three) and can touch nothing else (`acl/`); the password,
//! however it is given, reaches neither the child nor the process list nor
//! any output (`secrets.rs`).

use crate::common;

mod acl;
mod secrets;

use common::{Output, RedisServer, ServerOptions, run_yaraus};
use std::time::Duration;

/// How long one short-lived `yaraus` may run before the test fails.
pub const LIMIT: Duration = Duration::from_secs(60);

/// The password of the servers' default user (`requirepass`): yaraus never
/// gets it, so whatever works below works as the ACL user.
pub const ADMIN_PASSWORD: &str = "admin-s3cret";

/// The ACL user's password.
pub const USER_PASSWORD: &str = "app-s3cret-pw";

/// Short timings for `yaraus run`.
pub const FAST: [&str; 9] = common::process::timings("5s", "1s");

/// `yaraus ARGS` with `env`, expecting exit 0.
pub fn ok(args: &[&str], env: &[(&str, &str)]) -> Output {
    common::run_ok(args, env, LIMIT)
}

/// `yaraus ARGS` with `env`, expecting exit `code` and one line on stderr.
pub fn fails(args: &[&str], env: &[(&str, &str)], code: i32) -> String {
    let out = run_yaraus(args, env, LIMIT);
    assert_eq!(
        out.code,
        Some(code),
        "yaraus {args:?}\nstdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
    assert_eq!(
        out.stderr.lines().count(),
        1,
        "not one line:\n{}",
        out.stderr
    );
    out.stderr
}

/// A server whose default user needs [`ADMIN_PASSWORD`]; with `fsync`, one
/// that persists every write before replying (several lock masters).
pub fn server(fsync: bool) -> RedisServer {
    RedisServer::start_with(ServerOptions {
        requirepass: Some(ADMIN_PASSWORD.into()),
        appendfsync_always: fsync,
        ..ServerOptions::default()
    })
}

/// The server's URL without any password: `unix:///…/redis.sock`.
pub fn bare_url(server: &RedisServer) -> String {
    let path = server.socket_path().expect("a unix socket");
    format!("unix://{}", path.to_str().expect("UTF-8 path"))
}
