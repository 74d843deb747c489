//! What every benchmark of this package needs: its options, percentiles,
//! and redis-servers of the tests' harness on loopback ports. Included by
//! each bench with `mod figures;` (beside `mod common;`, which it uses).

use crate::common::{RedisServer, ServerOptions};
use std::time::Duration;

/// The value after `name` among the harness's arguments
/// (`cargo bench --bench NAME -- --runs 50`).
pub fn option<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

/// The `p` quantile (0..=1) of sorted durations.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

/// A redis-server on a loopback TCP port, without persistence or, with
/// `fsync`, with `appendonly yes` and `appendfsync always`.
pub fn start_redis(fsync: bool) -> RedisServer {
    RedisServer::start_with(ServerOptions {
        tcp: true,
        appendfsync_always: fsync,
        ..ServerOptions::default()
    })
}
