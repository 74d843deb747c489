//! Fencing tokens of `yaraus lock` against real redis-servers: strictly
//! increasing over 100 sequential and 20 concurrent acquisitions, with one
//! master (INCR in the acquire script) and with three (the majority
//! sequence), in the order the lock was actually held.

use crate::common;

use common::RedisServer;
use common::lock::*;
use std::path::Path;
use std::process::Child;

/// The child appends `<substituted> <env>`: the token in place of `<>` in its
/// arguments, and the one in its environment.
fn recorder(servers: &[&RedisServer], name: &str, log: &Path) -> std::process::Command {
    let mut cmd = lock_cmd(servers);
    cmd.args(["--quiet", "--ttl", "5s", name, "--", "sh", "-c"])
        .arg(format!(
            "echo \"$1 $YARAUS_FENCING_TOKEN $YARAUS_LOCK_NAME\" >> {}",
            log.display()
        ))
        .args(["sh", "<>"]);
    cmd
}

/// Reads the log: each line's two tokens agree, name is right, and the
/// tokens strictly increase in the order the children ran.
fn assert_increasing(log: &Path, name: &str, expected: usize) -> Vec<u64> {
    let lines = lines(log);
    assert_eq!(lines.len(), expected, "{lines:?}");
    let tokens: Vec<u64> = lines
        .iter()
        .map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(fields.len(), 3, "{l}");
            assert_eq!(fields[0], fields[1], "argument and environment differ: {l}");
            assert_eq!(fields[2], name, "{l}");
            fields[0]
                .parse()
                .unwrap_or_else(|_| panic!("not a number: {l}"))
        })
        .collect();
    for pair in tokens.windows(2) {
        assert!(
            pair[0] < pair[1],
            "fencing tokens went from {} to {}: {tokens:?}",
            pair[0],
            pair[1]
        );
    }
    tokens
}

fn sequential(servers: &[RedisServer], name: &str) -> Vec<u64> {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("tokens.log");
    for _ in 0..100 {
        let output = run(&mut recorder(&all(servers), name, &log));
        assert_code(&output, 0);
    }
    let tokens = assert_increasing(&log, name, 100);
    assert!(tokens[0] >= 1);
    tokens
}

fn concurrent(servers: &[RedisServer], name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("tokens.log");
    let children: Vec<Child> = (0..20)
        .map(|_| start(&mut recorder(&all(servers), name, &log)))
        .collect();
    for child in children {
        assert_code(&finish(child), 0);
    }
    assert_increasing(&log, name, 20);
}

#[test]
fn one_hundred_sequential_acquisitions_on_one_master() {
    let servers = masters(1, false);
    let tokens = sequential(&servers, "fence-seq-1");
    // One master: the counter is the INCR of the companion key (seeded from
    // the server's clock when it is new): 100 consecutive numbers.
    assert_eq!(tokens.last().unwrap() - tokens[0], 99);
    assert_eq!(
        get(&servers[0], "yaraus:fencing:fence-seq-1"),
        Some(tokens.last().unwrap().to_string())
    );
}

#[test]
fn one_hundred_sequential_acquisitions_on_three_masters() {
    let servers = masters(3, true);
    sequential(&servers, "fence-seq-3");
}

#[test]
fn twenty_concurrent_acquisitions_on_one_master() {
    let servers = masters(1, false);
    concurrent(&servers, "fence-par-1");
}

#[test]
fn twenty_concurrent_acquisitions_on_three_masters() {
    let servers = masters(3, true);
    concurrent(&servers, "fence-par-3");
}

#[test]
fn tokens_keep_growing_past_a_lost_master_and_a_stale_one() {
    let mut servers = masters(3, true);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("tokens.log");
    for _ in 0..3 {
        assert_code(&run(&mut recorder(&all(&servers), "fence-f", &log)), 0);
    }
    // One master falls behind (a stale counter), another dies: the majority
    // still only moves forward.
    servers[2].cmd(&["SET", "yaraus:fencing:fence-f", "1"]);
    servers[0].sigkill();
    for _ in 0..3 {
        assert_code(&run(&mut recorder(&all(&servers), "fence-f", &log)), 0);
    }
    assert_increasing(&log, "fence-f", 6);
}

/// With one master, a fencing counter that is gone (the master restarted
/// empty, or failed over to a replica that never had it) starts again from
/// the server's clock, never from 1: tokens stay above the ones handed out.
#[test]
fn one_master_tokens_stay_above_the_last_after_the_master_loses_its_data() {
    let servers = masters(1, false);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("tokens");
    for _ in 0..3 {
        let status = recorder(&[&servers[0]], "flushed", &log).status().unwrap();
        assert!(status.success());
    }
    servers[0].cmd(&["FLUSHALL"]);
    let status = recorder(&[&servers[0]], "flushed", &log).status().unwrap();
    assert!(status.success());
    assert_increasing(&log, "flushed", 4);
}
