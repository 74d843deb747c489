//! What the benches of a pool under renewal load share (`renewals.rs`,
//! `renew_cost.rs`): the server's CPU, and the wait for the runs to hold
//! their ids. Included by each with `mod pool_load;` (beside `mod common;`).

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
