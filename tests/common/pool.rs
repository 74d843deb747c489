//! The worker-id pool of `yaraus run` in Redis, namespace "t": creating it,
//! and reading an id's lease (its score is its expiry in Unix seconds, on the
//! server's clock).

use std::time::{SystemTime, UNIX_EPOCH};

use super::RedisServer;
use super::scratch::Scratch;

pub const NS: &str = "t";
pub const IDS: &str = "t:ids";
pub const CLIENTS: &str = "t:clients";
pub const STATS: &str = "t:stats";

/// `yaraus init --min MIN --max MAX` on namespace [`NS`].
pub fn init_pool(server: &RedisServer, min: u64, max: u64) {
    let out = super::yaraus()
        .args(["init", "--redis", &server.url_ns(NS)])
        .args(["--min", &min.to_string(), "--max", &max.to_string()])
        .output()
        .expect("run yaraus init");
    assert!(
        out.status.success(),
        "yaraus init failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A fresh server holding the pool MIN..MAX of namespace [`NS`], and a
/// scratch directory for the children of the runs on it.
pub fn fresh_pool(min: u64, max: u64) -> (RedisServer, Scratch) {
    let server = RedisServer::start();
    init_pool(&server, min, max);
    (server, Scratch::new())
}

/// Gives `id` to another client, "thief", behind its holder's back: the
/// next renewal of its holder finds its ownership lost.
pub fn steal(server: &RedisServer, id: u64) {
    server.cmd(&["HSET", CLIENTS, &enc(id), "thief"]);
}

/// The pool's member name of an id (`A7`, `B42`, `C100`).
pub fn enc(id: u64) -> String {
    let digits = id.to_string();
    format!("{}{digits}", (b'A' + digits.len() as u8 - 1) as char)
}

pub fn dec(member: &str) -> u64 {
    member[1..]
        .parse()
        .unwrap_or_else(|_| panic!("not an id: {member}"))
}

/// The server's clock (`TIME`), in Unix seconds.
pub fn server_now(server: &RedisServer) -> f64 {
    let (secs, micros): (u64, u64) = server.query(&["TIME"]);
    secs as f64 + micros as f64 / 1e6
}

/// This machine's clock, in Unix seconds (the servers run on it too).
pub fn wall_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs_f64()
}

/// The score of `id` in [`IDS`]: when its lease ends (or ended), in Unix
/// seconds on the server's clock.
pub fn score(server: &RedisServer, id: u64) -> Option<f64> {
    server.query(&["ZSCORE", IDS, &enc(id)])
}

/// The client an id was last leased to.
pub fn owner(server: &RedisServer, id: u64) -> Option<String> {
    server.query(&["HGET", CLIENTS, &enc(id)])
}

/// A counter of [`STATS`] (0 when absent).
pub fn stat(server: &RedisServer, field: &str) -> i64 {
    server
        .query::<Option<i64>>(&["HGET", STATS, field])
        .unwrap_or(0)
}
