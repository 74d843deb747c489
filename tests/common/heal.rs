//! What a node's counter looks like while it heals (src/seq/heal.rs): the
//! quarantine mark `healing:<ms>:<token>` with its time on the node's own
//! clock, a counter again, and the wait for the repair that checks it came
//! after the quarantine.

use super::RedisServer;
use super::lock::{get, run};
use std::collections::HashSet;
use std::time::Duration;

/// The quarantine (src/timing/sequence.rs), on the node's clock.
pub const QUARANTINE_MS: u64 = 10_000;

/// Whether `value` is a counter (decimal text), not a mark or nothing.
pub fn is_counter(value: &Option<String>) -> bool {
    value
        .as_deref()
        .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
}

/// The server's clock (`TIME`) in milliseconds.
pub fn server_ms(server: &RedisServer) -> u64 {
    let (secs, micros): (u64, u64) = server.query(&["TIME"]);
    secs * 1000 + micros / 1000
}

/// The mark `healing:<ms>:<token>` and its time, if the node holds one.
pub fn mark(server: &RedisServer, key: &str) -> Option<(String, u64)> {
    let value = get(server, key)?;
    let ms = value
        .strip_prefix("healing:")?
        .split(':')
        .next()?
        .parse()
        .ok()?;
    Some((value, ms))
}

/// When a node was repaired: its mark's time and the time the repair was
/// seen, both on its clock.
#[derive(Clone, Copy, Debug)]
pub struct Repair {
    pub marked_ms: u64,
    pub seen_ms: u64,
}

/// Waits up to `within` until `key` on `node` holds a counter again,
/// calling `between` at each look (a caller's request, or nothing); fails
/// unless the node was seen marked first and the counter came back after
/// the quarantine on the node's clock.
pub fn until_repaired(
    node: &RedisServer,
    key: &str,
    within: Duration,
    mut between: impl FnMut(),
) -> Repair {
    let mut last_mark: Option<(String, u64)> = None;
    let mut repair = None;
    super::wait_until("the emptied node to hold the counter again", within, || {
        between();
        if let Some(marked) = mark(node, key) {
            last_mark = Some(marked);
        }
        if !is_counter(&get(node, key)) {
            return false;
        }
        let (_, since) = last_mark
            .clone()
            .expect("the node was marked before its repair");
        let now = server_ms(node);
        assert!(
            now >= since + QUARANTINE_MS,
            "repaired {} ms after its mark, within the quarantine",
            now - since
        );
        repair = Some(Repair {
            marked_ms: since,
            seen_ms: now,
        });
        true
    });
    repair.expect("repaired")
}

/// `yaraus seq ARGS` over `servers`, run to its end.
pub fn seq(servers: &[RedisServer], args: &[&str]) -> std::process::Output {
    let mut cmd = super::yaraus();
    cmd.arg("seq").args(args);
    for s in servers {
        cmd.arg("--redis").arg(s.url());
    }
    run(&mut cmd)
}

/// No value twice, each above the one before.
pub fn assert_unique_and_increasing(values: &[u64]) {
    let unique: HashSet<&u64> = values.iter().collect();
    assert_eq!(unique.len(), values.len(), "a value twice: {values:?}");
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
}
