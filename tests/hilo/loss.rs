//! Losing shards: the one with the highest window restarted empty, an
//! agent with a shard down, a sequence with no open window left.

use crate::hilo::common::RedisServer;
use crate::hilo::*;

#[test]
fn the_shard_with_the_highest_window_restarted_empty_never_gets_a_window_twice() {
    let mut servers = shards(3);
    let all: Vec<&RedisServer> = servers.iter().collect();
    agent_once(&all, 100, 2);
    // Windows go to the shards in --redis order: the third has the top two.
    let top = windows(&servers[2]);
    let hwm = top.iter().map(|w| w.1).max().unwrap();
    assert_eq!(hwm, meta_number(&servers[0], "hwm"));
    assert_eq!(hwm, meta_number(&servers[1], "hwm"));
    let mut before = Vec::new();
    for _ in 0..3 {
        before.push(block(&hilo(
            &[&servers[2]],
            &["next", NAME, "--batch", "50"],
        )));
    }
    assert!(before.iter().all(|b| b.first >= top[0].0), "{before:?}");

    servers[2].restart_empty();
    assert!(windows(&servers[2]).is_empty());
    let all: Vec<&RedisServer> = servers.iter().collect();
    agent_once(&all, 100, 2);
    let reopened = windows(&servers[2]);
    assert_eq!(reopened.len(), 2, "{reopened:?}");
    assert!(
        reopened.iter().all(|w| w.0 >= hwm),
        "a window below the old high-water mark {hwm} was opened again: {reopened:?}"
    );

    // Everything left, from every shard: nothing handed out twice.
    let mut blocks = before.clone();
    loop {
        let out = hilo(&all, &["next", NAME, "--batch", "100"]);
        if out.code == Some(75) {
            break;
        }
        blocks.push(block(&out));
    }
    // The first two shards' four windows, the third's two new ones, and the
    // 150 ids it gave before it lost the rest of [501, 601).
    assert_eq!(assert_disjoint(&blocks), 4 * 100 + 2 * 100 + 150);
}

#[test]
fn an_agent_with_a_shard_down_creates_nothing_and_says_which() {
    let servers = shards(3);
    let all: Vec<&RedisServer> = servers.iter().collect();
    agent_once(&all, 100, 1);
    let before: Vec<_> = servers.iter().map(RedisServer::snapshot).collect();
    servers[1].sigstop();
    let out = hilo(
        &all,
        &[
            "agent",
            NAME,
            "--once",
            "--window-size",
            "100",
            "--min-open",
            "4",
            "--timeout",
            "500ms",
            "--wait",
            "2s",
        ],
    );
    servers[1].sigcont();
    // It said what it waited for, then gave up at its --wait.
    assert_eq!(out.code, Some(69), "{out:?}");
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(last.ends_with("gave up after waiting 2s"), "{out:?}");
    assert!(out.stderr.contains(&servers[1].url()), "{out:?}");
    assert!(out.stderr.contains("wrote nothing"), "{out:?}");
    let after: Vec<_> = servers.iter().map(RedisServer::snapshot).collect();
    assert_eq!(before, after, "the agent wrote to a shard");
}

#[test]
fn no_open_window_on_any_shard_is_exit_75_and_names_the_agent() {
    let servers = shards(2);
    let all: Vec<&RedisServer> = servers.iter().collect();
    agent_once(&all, 10, 1);
    let mut blocks = Vec::new();
    for _ in 0..4 {
        blocks.push(block(&hilo(&all, &["next", NAME, "--batch", "5"])));
    }
    assert_eq!(assert_disjoint(&blocks), 20);
    let out = hilo(&all, &["next", NAME, "--batch", "5"]);
    assert_eq!(out.code, Some(75), "{out:?}");
    assert_eq!(out.stderr.lines().count(), 1, "{out:?}");
    assert!(out.stderr.contains("no open window"), "{out:?}");
    assert!(out.stderr.contains("yaraus hilo agent orders"), "{out:?}");
    // The agent restocks; reservations go on above everything handed out.
    agent_once(&all, 10, 1);
    let b = block(&hilo(&all, &["next", NAME, "--batch", "5"]));
    assert!(blocks.iter().all(|old| old.last < b.first), "{b:?}");
}

/// A rolling disk replacement: the shards restarted empty one after another,
/// with no one setting a counter by hand. The agent's lock keeps a fencing
/// counter on every shard; a wiped shard's is quarantined, then set again
/// from the others (src/seq/heal.rs), so that after the second wipe two
/// shards still hold it and the agent keeps stocking. Before the repair
/// existed, the agent exited 69 on every run after the second wipe.
#[test]
fn shards_restarted_empty_one_after_another_heal_and_the_agent_keeps_stocking() {
    let mut servers = shards(3);
    let fence = format!("yaraus:fencing:yaraus:hilo:{{{NAME}}}:agent");
    agent_once(&servers.iter().collect::<Vec<_>>(), 100, 2);
    for wiped in 0..2 {
        servers[wiped].restart_empty();
        let all: Vec<&RedisServer> = servers.iter().collect();
        common::wait_until(
            "the wiped shard's fencing counter to heal",
            HEALED_WITHIN,
            || {
                agent_once(&all, 100, 2);
                let healed = servers[wiped]
                    .try_query::<String>(&["GET", &fence])
                    .is_ok_and(|v| v.bytes().all(|b| b.is_ascii_digit()));
                if !healed {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                healed
            },
        );
    }
    let all: Vec<&RedisServer> = servers.iter().collect();
    agent_once(&all, 100, 2);
    block(&hilo(&all, &["next", NAME, "--batch", "10"]));
}

/// The quarantine (src/timing/sequence.rs), with room for a loaded machine.
const HEALED_WITHIN: std::time::Duration = std::time::Duration::from_secs(40);
