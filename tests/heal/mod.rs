//! A node restarted empty heals by itself (src/seq/heal.rs): the next call
//! that reads a majority of holders marks it (`healing:<ms>:<token>`, its
//! own clock), and once the quarantine is over on that clock, a call sets it
//! again from a majority, after which it votes again. Against real
//! redis-servers that persist every write; no operator action anywhere.
//!
//! "Votes again" is shown the only way it can be: with another node frozen,
//! the healed node is needed for a majority.

use crate::common;

use common::RedisServer;
use common::heal::{assert_unique_and_increasing, mark, seq, until_repaired};
use common::lock::*;
use std::time::Duration;

const SEQ_KEY: &str = "yaraus:seq:orders";
const FENCE_KEY: &str = "yaraus:fencing:deploy";
/// The quarantine (src/timing/sequence.rs), with room for a loaded machine.
const HEALED_WITHIN: Duration = Duration::from_secs(40);
/// How often the tests call yaraus while they wait for a heal.
const PACE: Duration = Duration::from_millis(100);

fn id(output: &std::process::Output) -> u64 {
    assert_code(output, 0);
    stdout(output).trim().parse().expect("one id")
}

/// The fencing token of one `yaraus lock deploy -- …` over `servers`.
fn fencing_token(servers: &[&RedisServer]) -> u64 {
    let out =
        run(lock_cmd(servers).args(["deploy", "--", "sh", "-c", "echo $YARAUS_FENCING_TOKEN"]));
    assert_code(&out, 0);
    stdout(&out).trim().parse().expect("a fencing token")
}

/// Calls `next` (each returning a value to record) until `key` on `node`
/// holds a counter again, checked to come after its quarantine.
fn until_healed(node: &RedisServer, key: &str, mut next: impl FnMut() -> u64) -> Vec<u64> {
    let mut values = Vec::new();
    until_repaired(node, key, HEALED_WITHIN, || {
        values.push(next());
        std::thread::sleep(PACE);
    });
    values
}

#[test]
fn a_sequence_node_restarted_empty_is_quarantined_then_set_again_and_votes_again() {
    let mut servers = masters(3, true);
    let mut ids: Vec<u64> = stdout(&seq(&servers, &["next", "orders", "--count", "5"]))
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    servers[2].restart_empty();
    let marking = seq(&servers, &["next", "orders"]);
    ids.push(id(&marking));
    assert!(
        stderr(&marking).contains("quarantined"),
        "{}",
        stderr(&marking)
    );
    let (first_mark, _) = mark(&servers[2], SEQ_KEY).expect("node 3 marked at once");
    ids.extend(until_healed(&servers[2], SEQ_KEY, || {
        id(&seq(&servers, &["next", "orders"]))
    }));
    let repaired: u64 = get(&servers[2], SEQ_KEY).unwrap().parse().unwrap();
    assert!(
        repaired >= ids[5],
        "set below a value handed out before its mark"
    );
    assert_ne!(get(&servers[2], SEQ_KEY), Some(first_mark));

    // Node 1 frozen: nodes 2 and 3 must make the majority.
    servers[0].sigstop();
    ids.push(id(&seq(&servers, &["next", "orders"])));
    servers[0].sigcont();
    assert_unique_and_increasing(&ids);
}

#[test]
fn a_node_lost_again_during_its_quarantine_starts_it_over() {
    let mut servers = masters(3, true);
    id(&seq(&servers, &["next", "orders"]));
    servers[2].restart_empty();
    id(&seq(&servers, &["next", "orders"]));
    let (first, _) = mark(&servers[2], SEQ_KEY).expect("node 3 marked");
    servers[2].restart_empty();
    // The next heal pass is at most a second later (HEAL_EVERY).
    let mut ids = Vec::new();
    common::wait_until("node 3 marked again", HEALED_WITHIN, || {
        ids.push(id(&seq(&servers, &["next", "orders"])));
        let again = mark(&servers[2], SEQ_KEY).is_some_and(|(m, _)| m != first);
        if !again {
            std::thread::sleep(PACE);
        }
        again
    });
    // until_healed checks the repair against the latest mark it saw.
    ids.extend(until_healed(&servers[2], SEQ_KEY, || {
        id(&seq(&servers, &["next", "orders"]))
    }));
    assert_unique_and_increasing(&ids);
}

#[test]
fn a_lock_master_restarted_empty_gets_its_fencing_counter_back() {
    let mut servers = masters(3, true);
    let mut tokens = vec![fencing_token(&all(&servers)), fencing_token(&all(&servers))];
    servers[2].restart_empty();
    let healed = until_healed(&servers[2], FENCE_KEY, || fencing_token(&all(&servers)));
    tokens.extend(healed);
    // Master 1 frozen: the fencing vote needs masters 2 and 3.
    servers[0].sigstop();
    tokens.push(fencing_token(&all(&servers)));
    servers[0].sigcont();
    assert_unique_and_increasing(&tokens);
}
