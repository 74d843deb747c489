//! A creation that stopped half-way, built with raw SETs as a creator
//! killed between its writes leaves it (`[unborn, creating, creating]`,
//! nothing in flight), against real redis-servers: `seq next` rolls it
//! back and creates the sequence by itself once the prepared states are
//! older than the creation quarantine on their nodes' clocks, and not
//! before; and not from a read older than a round's lifetime
//! (`straggler.rs`).

mod straggler;

use crate::common;

use common::RedisServer;
use common::lock::*;

const KEY: &str = "yaraus:seq:orders";

fn next(servers: &[RedisServer]) -> std::process::Output {
    let mut cmd = common::yaraus();
    cmd.args(["seq", "next", "orders", "--timeout", "1s", "--wait", "0"]);
    for s in servers {
        cmd.arg("--redis").arg(s.url());
    }
    run(&mut cmd)
}

/// The node's clock (`TIME`) in milliseconds, shifted by `ago_ms`.
fn clock_ms(server: &RedisServer, ago_ms: u64) -> u64 {
    let time: Vec<String> = server.query(&["TIME"]);
    let ms = time[0].parse::<u64>().unwrap() * 1000 + time[1].parse::<u64>().unwrap() / 1000;
    ms - ago_ms
}

/// Node 1 marked, nodes 2 and 3 prepared for one creation `ago_ms` ago.
fn stuck(servers: &[RedisServer], ago_ms: u64) -> Vec<String> {
    let states = vec![
        "unborn:aa".to_string(),
        format!("creating:{}:0c", clock_ms(&servers[1], ago_ms)),
        format!("creating:{}:0c", clock_ms(&servers[2], ago_ms)),
    ];
    for (s, state) in servers.iter().zip(&states) {
        s.cmd(&["SET", KEY, state]);
    }
    states
}

#[test]
fn a_creation_stopped_half_way_is_rolled_back_by_itself_once_ripe() {
    let servers = masters(3, true);
    // Prepared 1 s ago: a settle could still land; nothing is written.
    let young = stuck(&servers, 1_000);
    let refused = next(&servers);
    assert_code(&refused, 69);
    assert!(
        stderr(&refused).contains("rolled back by itself 15s after it was prepared"),
        "{}",
        stderr(&refused)
    );
    let now: Vec<String> = servers.iter().map(|s| get(s, KEY).unwrap()).collect();
    assert_eq!(now, young, "touched before the quarantine");

    // Prepared 20 s ago on each node's clock: rolled back, created, 1.
    stuck(&servers, 20_000);
    let created = next(&servers);
    assert_code(&created, 0);
    assert_eq!(stdout(&created), "1\n");
    let held = servers
        .iter()
        .filter(|s| get(s, KEY).as_deref() == Some("1"))
        .count();
    assert!(held >= 2, "1 not held by a majority");
}
