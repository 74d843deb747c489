//! Bad input (one line on stderr, the documented status, every shard
//! unchanged), `hilo status`, and ids at the top of the 64-bit range.

use crate::hilo::common::{RedisServer, ServerOptions};
use crate::hilo::*;

/// Runs `args` over `on` and checks: status `code`, one line on stderr
/// containing `says`, and no shard changed.
fn refused(on: &[&RedisServer], args: &[&str], code: i32, says: &str) {
    let before: Vec<_> = on.iter().map(|s| s.snapshot()).collect();
    let out = hilo(on, args);
    assert_eq!(out.code, Some(code), "{args:?}: {out:?}");
    assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {out:?}");
    assert!(out.stderr.contains(says), "{args:?}: {out:?}");
    assert!(out.stdout.is_empty(), "{args:?}: {out:?}");
    let after: Vec<_> = on.iter().map(|s| s.snapshot()).collect();
    assert_eq!(before, after, "{args:?} changed a shard");
}

#[test]
fn bad_input_is_one_line_and_a_status_and_changes_nothing() {
    let servers = shards(2);
    let all: Vec<&RedisServer> = servers.iter().collect();
    // Nothing exists yet: no command may create anything by mistake.
    refused(&all, &["next", NAME], 125, "knows the hilo sequence");
    agent_once(&all, 100, 1);
    refused(&all, &["next", NAME, "--batch", "0"], 2, "--batch");
    refused(&all, &["next", NAME, "--batch", "101"], 2, "window size");
    refused(&all, &["next", "a{b}"], 2, "braces");
    refused(&all, &["next", ""], 2, "must not be empty");
    refused(&all, &["agent", NAME, "--min-open", "0"], 2, "--min-open");
    refused(
        &all,
        &["agent", NAME, "--window-size", "0"],
        2,
        "--window-size",
    );
    refused(
        &all,
        &["agent", NAME, "--every", "soon"],
        2,
        "not a duration",
    );
    refused(
        &all,
        &["agent", NAME, "--every", "1s", "--once"],
        2,
        "--once",
    );
    refused(&all, &["frobnicate", NAME], 2, "frobnicate");
    let top = (u64::MAX - 150).to_string();
    refused(
        &all,
        &["agent", "fresh", "--start", &top, "--window-size", "100"],
        125,
        "id space",
    );
    let out = run_yaraus(
        &["hilo", "next", NAME, "--redis", "redis://[::1"],
        &[],
        LIMIT,
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(out.stderr.lines().count(), 1, "{out:?}");

    // A key of the sequence that holds another type, on one shard.
    let _: () = servers[1].query(&["DEL", &format!("{META}:open")]);
    let _: () = servers[1].query(&["SET", &format!("{META}:open"), "mine"]);
    refused(
        &all,
        &["agent", NAME, "--min-open", "3"],
        125,
        "holds a string",
    );
    refused(&[&servers[1]], &["next", NAME], 125, "holds a string");

    // A shard that may lose writes is refused unless --allow-volatile.
    let volatile = RedisServer::start_with(ServerOptions::default());
    refused(&[&volatile], &["next", NAME], 125, "appendfsync");
    let out = hilo(&[&volatile], &["--allow-volatile", "status", NAME]);
    assert_eq!(out.code, Some(1), "{out:?}");
}

#[test]
fn status_reports_each_shard_and_a_shard_that_does_not_answer() {
    let servers = shards(2);
    let all: Vec<&RedisServer> = servers.iter().collect();
    agent_once(&all, 100, 2);
    let b = block(&hilo(&[&servers[0]], &["next", NAME, "--batch", "30"]));
    assert_eq!((b.first, b.last), (1, 30));
    servers[1].sigstop();
    let out = hilo(&all, &["status", NAME, "--timeout", "500ms"]);
    servers[1].sigcont();
    assert_eq!(out.code, Some(0), "{out:?}");
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(doc["hwm"], 401);
    let first = &doc["shards"][0];
    assert_eq!(first["ok"], true);
    assert_eq!(first["open_windows"], 2);
    assert_eq!(first["ids_left"], 170);
    assert_eq!(first["reserved"], 30);
    assert_eq!(first["windows"][0]["next"], 31);
    assert_eq!(doc["shards"][1]["ok"], false);
    assert!(
        doc["shards"][1]["error"]
            .as_str()
            .unwrap()
            .contains(&servers[1].url())
    );
    let out = hilo(&all, &["status", "unknown"]);
    assert_eq!(out.code, Some(1), "{out:?}");
}

#[test]
fn ids_near_2_pow_64_are_exact() {
    let servers = shards(1);
    let all: Vec<&RedisServer> = servers.iter().collect();
    let start = u64::MAX - 1000;
    let out = hilo(
        &all,
        &[
            "agent",
            NAME,
            "--once",
            "--start",
            &start.to_string(),
            "--window-size",
            "500",
            "--min-open",
            "2",
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let mut blocks = Vec::new();
    for _ in 0..5 {
        blocks.push(block(&hilo(&all, &["next", NAME, "--batch", "199"])));
    }
    assert_eq!(blocks[0].first, start);
    assert_eq!(blocks[0].last, start + 198);
    // The first window ends at start + 500: its last block is short.
    assert_eq!(blocks[2].last, start + 499);
    assert_eq!(blocks[3].first, start + 500);
    assert_disjoint(&blocks);
    let out = hilo(&all, &["next", NAME, "--count", "3", "--batch", "2"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let ids: Vec<u64> = out.stdout.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids, [start + 898, start + 899, start + 900]);
}
