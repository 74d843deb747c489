//! A Redis user made from `yaraus acl-rules` output: every subcommand it was
//! made for works as that user, Redis refuses it everything else, and a
//! command the operator chose not to grant (`INFO`, `CONFIG GET`) gives the
//! documented message and exit status, with nothing changed in Redis.
//!
//! By concept: [`pool`] (`init`, `run`, `list`, `stats` and the other pool
//! subcommands), [`commands`] (`lock` on one master and three, `seq`,
//! `hilo`, `index`), [`refusals`] (what the operator did not grant, and
//! what no rule can name), [`wakeups`] (waiters woken by a release as the
//! user, also with rules made before queues of waiters existed).

mod commands;
mod pool;
mod refusals;
mod wakeups;

use super::common::RedisServer;
use super::{USER_PASSWORD, bare_url, server};

const USER: &str = "app";

/// The environment that gives yaraus the user's password.
pub(super) const AS_USER: [(&str, &str); 1] = [("YARAUS_REDIS_PASSWORD", USER_PASSWORD)];

/// Creates the user from the rules of `rules_args` on every server.
fn create_user(servers: &[&RedisServer], rules_args: &[&str]) -> String {
    super::common::create_acl_user(servers, rules_args, USER_PASSWORD)
}

/// `n` servers (with `fsync`, persisting every write), and on each the user
/// made from `yaraus --redis URL… -N NS --redis-user app ACL_ARGS`; returns
/// them, their URLs and the rules line.
pub(super) fn servers_with_user(
    n: usize,
    fsync: bool,
    ns: &str,
    acl_args: &[&str],
) -> (Vec<RedisServer>, Vec<String>, String) {
    let servers: Vec<RedisServer> = (0..n).map(|_| server(fsync)).collect();
    let urls: Vec<String> = servers.iter().map(bare_url).collect();
    let rules = create_user(
        &servers.iter().collect::<Vec<_>>(),
        &global(&urls, ns, acl_args),
    );
    (servers, urls, rules)
}

/// A connection of the user, to try what yaraus never does.
pub(super) fn as_user(server: &RedisServer) -> redis::Connection {
    let info = server.connection_info();
    let settings = info
        .redis_settings()
        .clone()
        .set_username(USER)
        .set_password(USER_PASSWORD);
    redis::Client::open(info.set_redis_settings(settings))
        .and_then(|c| c.get_connection())
        .expect("connect as the ACL user")
}

pub(super) fn denied(conn: &mut redis::Connection, args: &[&str]) -> bool {
    let (name, rest) = args.split_first().unwrap();
    match redis::cmd(name).arg(rest).query::<redis::Value>(conn) {
        Err(e) => e.code() == Some("NOPERM") || e.to_string().contains("can't"),
        Ok(_) => false,
    }
}

/// Starts yaraus as the user on `urls`, namespace `ns`, with `args` and
/// `env`; stderr is kept for the message of a failure.
pub(super) fn spawn_as_user(urls: &[String], args: &[&str]) -> std::process::Child {
    super::common::yaraus()
        .args(global(urls, "ns", args))
        .envs(AS_USER)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// `--redis URL… -N NS --redis-user app`, then `rest`.
pub(super) fn global<'a>(urls: &'a [String], ns: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = Vec::new();
    for u in urls {
        args.extend(["--redis", u.as_str()]);
    }
    args.extend(["-N", ns, "--redis-user", USER]);
    args.extend(rest);
    args
}
