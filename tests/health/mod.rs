//! `yaraus health`: one look at every node (exit 0 / 75 / 69), and the gate
//! `health --wait` of a rolling maintenance, against real redis-servers
//! that persist every write, restarted empty as a disk replacement would.

use crate::common;

use common::RedisServer;
use common::heal::{assert_unique_and_increasing, seq};
use common::lock::*;
use serde_json::Value;
use std::process::Output;

mod gate;
mod replicas;

const SEQ_KEY: &str = "yaraus:seq:orders";

/// `yaraus health ARGS` over `servers`.
fn health(servers: &[RedisServer], args: &[&str]) -> Output {
    let mut cmd = common::yaraus();
    cmd.arg("health").args(args);
    for s in servers {
        cmd.arg("--redis").arg(s.url());
    }
    run(&mut cmd)
}

/// `health --format json`, parsed, with its exit status.
fn health_json(servers: &[RedisServer], args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let out = health(servers, &all);
    let value: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(&out), stderr(&out)));
    assert_eq!(value["exit"], code(&out.status), "{value}");
    (code(&out.status), value)
}

fn next_id(servers: &[RedisServer]) -> u64 {
    let out = seq(servers, &["next", "orders"]);
    assert_code(&out, 0);
    stdout(&out).trim().parse().expect("one id")
}

/// The findings of a JSON report: (level, subject, state).
fn findings(report: &Value) -> Vec<(String, String, String)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["level"].as_str().unwrap().to_string(),
                f["subject"].as_str().unwrap().to_string(),
                f["state"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn an_intact_deployment_is_healthy() {
    let servers = masters(3, true);
    next_id(&servers);
    assert_code(
        &run(lock_cmd(&all(&servers)).args(["deploy", "--", "true"])),
        0,
    );
    let (status, report) = health_json(&servers, &[]);
    assert_eq!(status, 0, "{report}");
    assert_eq!(report["status"], "ok");
    let keys: Vec<&str> = report["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["yaraus:fencing:deploy", SEQ_KEY]);
    for counter in report["counters"].as_array().unwrap() {
        assert_eq!(counter["standing"], "held", "{counter}");
    }
    let table = health(&servers, &[]);
    assert_code(&table, 0);
    assert!(
        stdout(&table).contains("yaraus:seq:orders (sequence): held by all at 1"),
        "{}",
        stdout(&table)
    );
}

#[test]
fn indexes_and_wake_up_queues_are_listed_with_their_figures() {
    let servers = masters(1, false);
    let index = run(common::yaraus().args([
        "index",
        "web",
        "--interval",
        "200ms",
        "--redis",
        &servers[0].url(),
        "--",
        "true",
    ]));
    assert_code(&index, 0);
    let _: () = servers[0].query(&["ZADD", "yaraus:queue:deploy", "1", "a", "2", "b"]);
    let (status, report) = health_json(&servers, &[]);
    assert_eq!(status, 0, "{report}");
    let listed = &report["indexes_and_queues"];
    let find = |key: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["key"] == key)
            .unwrap_or_else(|| panic!("{key} not in {listed}"))
            .clone()
    };
    assert_eq!(
        find("yaraus:index:{web}")["figures"][0],
        serde_json::json!(["interval_ms", "200"])
    );
    assert_eq!(
        find("yaraus:queue:deploy")["figures"][0],
        serde_json::json!(["waiting", "2"])
    );
}

#[test]
fn a_wiped_node_is_named_and_one_look_writes_nothing() {
    let mut servers = masters(3, true);
    next_id(&servers);
    servers[1].restart_empty();
    let (status, report) = health_json(&servers, &[]);
    assert_eq!(status, 75, "{report}");
    assert_eq!(
        findings(&report),
        [(
            "degraded".to_string(),
            servers[1].url(),
            "missing".to_string()
        )]
    );
    assert!(stdout(&health(&servers, &[])).contains(&format!(
        "degraded: {}: lacks the sequence {SEQ_KEY}",
        servers[1].url()
    )));
    assert_eq!(get(&servers[1], SEQ_KEY), None, "a look wrote to the node");
}

#[test]
fn the_prometheus_format_passes_promtool_and_counts_what_each_node_holds() {
    let mut servers = masters(3, true);
    next_id(&servers);
    servers[2].restart_empty();
    let out = health(&servers, &["--format", "prometheus"]);
    assert_code(&out, 75);
    let page = stdout(&out);
    common::metrics::assert_promtool_passes(&page, false);
    let samples = common::metrics::parse(&page);
    let series = |node: &RedisServer, state: &str| {
        format!(
            "yaraus_health_counters{{namespace=\"yaraus\",node=\"{}\",kind=\"sequence\",state=\"{state}\"}}",
            node.url()
        )
    };
    assert_eq!(
        samples.get(&series(&servers[0], "holding")),
        Some(&1.0),
        "{page}"
    );
    assert_eq!(
        samples.get(&series(&servers[2], "missing")),
        Some(&1.0),
        "{page}"
    );
    assert_eq!(
        samples.get("yaraus_health_status{namespace=\"yaraus\"}"),
        Some(&1.0),
        "{page}"
    );
}

#[test]
fn a_node_out_of_reach_is_degraded_and_a_majority_out_of_reach_is_lost() {
    let servers = masters(3, true);
    next_id(&servers);
    servers[2].sigstop();
    let (status, report) = health_json(&servers, &["--timeout", "300ms"]);
    assert_eq!(status, 75, "{report}");
    assert!(findings(&report).contains(&(
        "degraded".into(),
        servers[2].url(),
        "out_of_reach".into()
    )));
    servers[1].sigstop();
    let (status, report) = health_json(&servers, &["--timeout", "300ms"]);
    servers[1].sigcont();
    servers[2].sigcont();
    assert_eq!(status, 69, "{report}");
    assert!(
        findings(&report)
            .iter()
            .any(|(level, _, state)| level == "lost" && state == "majority_out_of_reach"),
        "{report}"
    );
}

#[test]
fn a_creation_stopped_half_way_rolls_back_on_a_majority_and_is_lost_on_one_node() {
    let servers = masters(3, true);
    // What a creator SIGKILLed between its two steps leaves: a majority
    // prepared (it rolls back by itself), then a lone prepared node beside
    // marks (a majority loss leaves the same: a person decides).
    // (Node 1 lost even its mark: the call's read marks it first.)
    let _: () = servers[1].query(&["SET", SEQ_KEY, "creating:1000:bb"]);
    let _: () = servers[2].query(&["SET", SEQ_KEY, "creating:1000:bb"]);
    let out = health(&servers, &[]);
    assert_code(&out, 75);
    assert!(
        stdout(&out).contains("the next `yaraus seq next orders` rolls it back"),
        "{}",
        stdout(&out)
    );
    let _: () = servers[0].query(&["SET", SEQ_KEY, "unborn:aa"]);
    let _: () = servers[1].query(&["SET", SEQ_KEY, "unborn:cc"]);
    let out = health(&servers, &[]);
    assert_code(&out, 69);
    assert!(
        stdout(&out).contains("`yaraus seq set-floor orders 0`"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_key_of_another_type_is_named_not_fatal() {
    let servers = masters(3, true);
    for s in &servers {
        let _: () = s.query(&["HSET", SEQ_KEY, "a", "b"]);
    }
    next_id_of(&servers, "other");
    let out = health(&servers, &[]);
    assert_code(&out, 69);
    assert!(
        stdout(&out).contains(&format!("lost: {SEQ_KEY}: no node holds it as a counter")),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("yaraus:seq:other (sequence): held by all at 1"));
}

fn next_id_of(servers: &[RedisServer], name: &str) -> u64 {
    let out = seq(servers, &["next", name]);
    assert_code(&out, 0);
    stdout(&out).trim().parse().expect("one id")
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let servers = masters(1, false);
    for args in [
        &["--wait", "soon"][..],
        &["--format", "xml"][..],
        &["--redis", "redis://[::1"][..],
    ] {
        let out = health(&servers, args);
        assert_code(&out, 2);
        assert!(stdout(&out).is_empty());
    }
}
