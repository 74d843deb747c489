//! Redis Cluster: every subcommand runs on `redis+cluster://`, and the keys
//! that one script touches share a hash tag (the Cluster would refuse the
//! script with CROSSSLOT otherwise).

use super::*;
use common::cluster::Cluster;

#[test]
fn every_subcommand_runs_on_a_cluster_with_its_keys_in_one_slot() {
    let cluster = Cluster::start(3);
    let url = cluster.url("app");

    // The worker-id pool: its three keys carry the {app} tag.
    ok(&["init", "--redis", &url, "--min", "1", "--max", "3"]);
    let out = ok(&[
        "run",
        "--redis",
        &url,
        "--",
        "sh",
        "-c",
        "echo id=$YARAUS_WORKER_ID",
    ]);
    assert!(out.stdout.contains("id=1"), "{}", out.stdout);
    let stats = ok(&["stats", "--redis", &url, "--format", "json"]);
    assert!(
        stats.stdout.contains("\"client_get_id_success\": 1"),
        "{}",
        stats.stdout
    );
    let list = ok(&["list", "--redis", &url]);
    assert_eq!(list.stdout.matches("\"id\":").count(), 3, "{}", list.stdout);
    // --using: the range query on the score, on the pool's slot.
    let using = ok(&["list", "--using", "--redis", &url]);
    let leased = list.stdout.matches("\"using\":true").count();
    assert_eq!(
        using.stdout.matches("\"id\":").count(),
        leased,
        "{}",
        using.stdout
    );
    let keys = cluster.keys();
    for key in ["{app}:ids", "{app}:clients", "{app}:stats"] {
        assert!(
            keys.contains(&key.to_string()),
            "{key} missing from {keys:?}"
        );
    }

    // A lock: the fencing counter lives in the lock's slot.
    let out = ok(&[
        "lock",
        "--redis",
        &url,
        "deploy",
        "--",
        "sh",
        "-c",
        "echo token=$YARAUS_FENCING_TOKEN",
    ]);
    let token = out.stdout.trim().strip_prefix("token=").unwrap_or("");
    assert!(token.parse::<u64>().is_ok(), "{}", out.stdout);
    let node = cluster.node_of("deploy");
    assert_eq!(
        node.query::<Option<String>>(&["GET", "app:fencing:{deploy}"])
            .as_deref(),
        Some(token)
    );

    // A sequence, an index and hilo, whose keys carry {NAME} already.
    let seq = ok(&["seq", "next", "--redis", &url, "--allow-volatile", "orders"]);
    assert_eq!(seq.stdout.trim(), "1");
    ok(&[
        "hilo",
        "agent",
        "--redis",
        &url,
        "--allow-volatile",
        "ids",
        "--window-size",
        "100",
        "--min-open",
        "1",
        "--once",
    ]);
    let next = ok(&[
        "hilo",
        "next",
        "--redis",
        &url,
        "--allow-volatile",
        "ids",
        "--batch",
        "10",
    ]);
    assert!(!next.stdout.trim().is_empty(), "{}", next.stdout);
    let index = ok(&[
        "index",
        "--redis",
        &url,
        "--interval",
        "1s",
        "fleet",
        "--",
        "sh",
        "-c",
        "echo pair=$YARAUS_INDEX/$YARAUS_REPLICAS",
    ]);
    assert!(index.stdout.contains("pair=0/1"), "{}", index.stdout);
}

#[test]
fn a_namespace_or_lock_name_that_would_split_the_slot_is_refused() {
    let cluster = Cluster::start(3);
    let out = run_yaraus(
        &[
            "init",
            "--redis",
            &cluster.url("a{b}"),
            "--min",
            "1",
            "--max",
            "3",
        ],
        &[],
        LIMIT,
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("contains braces"), "{}", out.stderr);
    let out = run_yaraus(
        &["lock", "--redis", &cluster.url("app"), "a}b", "--", "true"],
        &[],
        LIMIT,
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("hash tag"), "{}", out.stderr);
    assert!(cluster.keys().is_empty(), "{:?}", cluster.keys());
}

#[test]
fn a_user_from_acl_rules_runs_the_pool_and_a_lock_on_the_cluster() {
    let cluster = Cluster::start(3);
    let url = cluster.url("app");
    let rules = create_user(
        &cluster.nodes.iter().collect::<Vec<_>>(),
        &[
            "--redis",
            &url,
            "--redis-user",
            "app",
            "acl-rules",
            "--lock-prefix",
            "locks:",
            "init",
            "run",
            "stats",
            "list",
            "lock",
        ],
    );
    for wanted in [
        "+cluster|slots",
        "+asking",
        "~{app}:ids",
        "~app:fencing:{locks:*",
    ] {
        assert!(rules.contains(wanted), "{wanted} missing: {rules}");
    }
    user_inits_and_gets_id_1(&url, &[]);
    ok_as_user(&["--redis", &url, "stats"]);
    ok_as_user(&["--redis", &url, "list"]);
    let out = ok_as_user(&[
        "--redis",
        &url,
        "lock",
        "--prefix",
        "locks:",
        "deploy",
        "--",
        "sh",
        "-c",
        "echo $YARAUS_FENCING_TOKEN",
    ]);
    assert!(out.stdout.trim().parse::<u64>().is_ok(), "{}", out.stdout);
    let token: Option<String> = cluster
        .node_of("locks:deploy")
        .query(&["GET", "app:fencing:{locks:deploy}"]);
    assert_eq!(token.as_deref(), Some(out.stdout.trim()));
}
