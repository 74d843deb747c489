//! What the benches of a pool under renewal load share (`renewals.rs`,
//! `renew_cost.rs`, `fleet.rs`): the server's CPU and scripts run, and the
//! wait for the runs to hold their ids. Included by each with
//! `mod pool_load;` (beside `mod common;`).

use crate::common::RedisServer;
use std::time::{Duration, Instant};

/// The server's CPU seconds, user and system (`INFO cpu`).
pub fn server_cpu(server: &RedisServer) -> f64 {
    ["used_cpu_user", "used_cpu_sys"]
        .iter()
        .map(|f| {
            server
                .info_field("cpu", f)
                .and_then(|v| v.parse::<f64>().ok())
                .expect(f)
        })
        .sum()
}

/// Scripts run so far (`cmdstat_evalsha` and `cmdstat_eval` calls): the
/// requests the runs make, where `total_commands_processed` also counts
/// each command a script runs inside.
pub fn scripts(server: &RedisServer) -> u64 {
    let info = server.info("commandstats");
    info.lines()
        .filter(|l| l.starts_with("cmdstat_evalsha:") || l.starts_with("cmdstat_eval:"))
        .filter_map(|l| {
            l.split("calls=")
                .nth(1)?
                .split(',')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum()
}

/// Until `n` ids of the pool `yaraus:ids` have a lease in the future on
/// the server's clock, within `bound`.
pub fn wait_leased(server: &RedisServer, n: usize, bound: Duration) {
    let deadline = Instant::now() + bound;
    loop {
        let (secs, _): (String, String) = server.query(&["TIME"]);
        let leased: usize = server.query(&["ZCOUNT", "yaraus:ids", &format!("({secs}"), "+inf"]);
        if leased >= n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "only {leased} of {n} runs hold an id"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
