//! A pool split by `init --shards 6` on a Redis Cluster of three masters:
//! two shards on each master, 30 runs holding 30 distinct ids and renewing
//! on every master, `stats` and `list --using` reporting all 30, each
//! released at the end; a waiter woken by a release on any shard; and a
//! user made from `acl-rules` using such a pool.

use super::*;
use common::cluster::Cluster;
use common::process::Run;
use common::scratch::Scratch;
use common::{EVENT, RedisServer, wait_until};
use nix::sys::signal::Signal;
use std::collections::{BTreeMap, BTreeSet};

/// How many `EVALSHA` a master ran (INFO commandstats).
fn evalsha_calls(node: &RedisServer) -> u64 {
    node.info("commandstats")
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next()?.parse().ok())
        .unwrap_or(0)
}

/// Which master (by index) serves `key`.
fn master_of(cluster: &Cluster, key: &str) -> usize {
    let node = cluster.node_of(key);
    cluster
        .nodes
        .iter()
        .position(|n| std::ptr::eq(n, node))
        .expect("a node of the cluster")
}

/// The shards' ids keys of the pool of namespace `ns`, from its layout.
fn shard_keys(cluster: &Cluster, ns: &str) -> Vec<String> {
    let layout_key = format!("{{{ns}}}:layout");
    let record: String = cluster.node_of(&layout_key).query(&["GET", &layout_key]);
    let layout: serde_json::Value = serde_json::from_str(&record).expect("a JSON layout");
    layout["shards"]
        .as_array()
        .expect("shards")
        .iter()
        .map(|s| format!("{}:ids", s["prefix"].as_str().expect("a prefix")))
        .collect()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {out:#?}"))
}

/// `n` runs on `url`, each of whose commands writes its id to `$D/id.PID`
/// and sleeps; returned once every command started, with the ids.
fn holding_runs(url: &str, scratch: &Scratch, n: usize) -> (Vec<Run>, BTreeSet<u64>) {
    let opts = [
        "--interval",
        "300ms",
        "--expire",
        "3s",
        "--no-safeguards",
        "--delay",
        "0",
    ];
    let child = [
        "sh",
        "-c",
        "echo $YARAUS_WORKER_ID > \"$D/id.$$\"; exec sleep 600",
    ];
    let runs: Vec<Run> = (0..n)
        .map(|_| Run::start(url, scratch, &opts, &child))
        .collect();
    let ids = || -> BTreeSet<u64> {
        let entries = std::fs::read_dir(scratch.dir()).expect("the scratch directory");
        entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| name.starts_with("id."))
            .filter_map(|name| scratch.read(&name)?.trim().parse().ok())
            .collect()
    };
    wait_until("every run to start its command", EVENT, || ids().len() == n);
    (runs, ids())
}

/// How many ids each master's shards have leased now.
fn leases_per_master(cluster: &Cluster, shards: &[String]) -> Vec<u64> {
    (0..cluster.nodes.len())
        .map(|m| {
            let node = &cluster.nodes[m];
            let (secs, _): (u64, u64) = node.query(&["TIME"]);
            shards
                .iter()
                .filter(|key| master_of(cluster, key) == m)
                .map(|key| node.query::<u64>(&["ZCOUNT", key, &format!("({secs}"), "+inf"]))
                .sum()
        })
        .collect()
}

/// `stats` says `held.len()` ids leased over 6 shards, and `list --using`
/// lists exactly `held`.
fn assert_reported(url: &str, held: &BTreeSet<u64>) {
    let stats = json(&ok(&["stats", "--redis", url]));
    assert_eq!(stats["using_ids"], held.len(), "{stats}");
    let per_shard: BTreeMap<String, i64> = stats["shards"]
        .as_array()
        .expect("shards")
        .iter()
        .map(|s| {
            (
                s["key"].as_str().unwrap().to_string(),
                s["using_ids"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(per_shard.len(), 6, "{stats}");
    assert_eq!(per_shard.values().sum::<i64>(), held.len() as i64);
    let using = json(&ok(&["list", "--using", "--redis", url]));
    let listed: BTreeSet<u64> = using
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| row["id"].as_u64().expect("an id"))
        .collect();
    assert_eq!(&listed, held);
}

#[test]
fn thirty_runs_on_six_shards_hold_thirty_ids_and_renew_on_every_master() {
    let cluster = Cluster::start(3);
    let url = cluster.url("t");
    let out = ok(&[
        "init", "--redis", &url, "--min", "1", "--max", "60", "--shards", "6",
    ]);
    assert_eq!(
        out.stdout.trim(),
        "initialized: ids 1..60 in {t}:layout (6 shards)"
    );
    let shards = shard_keys(&cluster, "t");
    let mut per_master = [0; 3];
    for key in &shards {
        per_master[master_of(&cluster, key)] += 1;
    }
    assert_eq!(per_master, [2, 2, 2], "{shards:?}");

    let scratch = Scratch::new();
    let (mut runs, held) = holding_runs(&url, &scratch, 30);
    assert_eq!(held.len(), 30);
    // Each master renews its own shards' leases: its EVALSHA count grows
    // by at least one renewal of each lease it holds.
    let leases = leases_per_master(&cluster, &shards);
    assert_eq!(leases.iter().sum::<u64>(), 30);
    assert!(
        leases.iter().all(|&n| n > 0),
        "a master holds no lease: {leases:?}"
    );
    let before: Vec<u64> = cluster.nodes.iter().map(evalsha_calls).collect();
    wait_until("a renewal of every lease on every master", EVENT, || {
        (0..3).all(|m| evalsha_calls(&cluster.nodes[m]) >= before[m] + leases[m])
    });
    assert_reported(&url, &held);

    for run in &runs {
        run.signal(Signal::SIGTERM);
    }
    for run in &mut runs {
        run.wait();
    }
    let stats = json(&ok(&["stats", "--redis", &url]));
    assert_eq!(stats["using_ids"], 0, "every id released: {stats}");
}

#[test]
fn a_user_from_acl_rules_uses_a_sharded_pool_on_the_cluster() {
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
            "init",
            "run",
            "stats",
            "list",
        ],
    );
    assert!(rules.contains("~{app:shard:*"), "{rules}");
    ok_as_user(&["--redis", &url, "init", "--max", "4", "--shards", "3"]);
    let out = ok_as_user(&[
        "--redis",
        &url,
        "run",
        "--",
        "sh",
        "-c",
        "echo $YARAUS_WORKER_ID",
    ]);
    let id: u64 = out.stdout.trim().parse().expect("an id");
    assert!((1..=4).contains(&id), "{out:#?}");
    let stats = json(&ok_as_user(&["--redis", &url, "stats"]));
    assert_eq!(stats["client_get_id_success"], 1, "{stats}");
    ok_as_user(&["--redis", &url, "list", "--using"]);
}

#[test]
fn a_release_on_any_shard_wakes_a_waiter_on_the_cluster() {
    let cluster = Cluster::start(3);
    let url = cluster.url("t");
    ok(&[
        "init", "--redis", &url, "--min", "1", "--max", "2", "--shards", "2",
    ]);
    let scratch = Scratch::new();
    let fast = common::process::timings("1s", "300ms");
    let hold = |name: &str| {
        let body = format!(
            "echo $YARAUS_WORKER_ID > \"$D/{name}\"; \
             while [ ! -e \"$D/go.$YARAUS_WORKER_ID\" ]; do sleep 0.05; done"
        );
        let run = Run::start(&url, &scratch, &fast, &["sh", "-c", &body]);
        wait_until("the holder's command to start", EVENT, || {
            scratch.exists(name)
        });
        run
    };
    let mut holders = [hold("a"), hold("b")];
    let opts = [&fast[..], &["--poll", "30s"]].concat();
    let cmd = common::process::run_cmd(
        &url,
        &scratch,
        &opts,
        &["sh", "-c", "echo $YARAUS_WORKER_ID > \"$D/w\""],
    );
    let mut waiter = Run::spawn(cmd, &scratch);
    // Each shard's channel is sharded pub/sub on its own master.
    for key in shard_keys(&cluster, "t") {
        let channel = format!("t:wake:{key}");
        let node = cluster.node_of(&channel);
        wait_until("the waiter to listen on every shard", EVENT, || {
            let (_, n): (String, i64) = node.query(&["PUBSUB", "SHARDNUMSUB", &channel]);
            n >= 1
        });
    }
    // The second shard's id goes back: the waiter gets it long before its
    // poll of 30 s.
    std::fs::write(scratch.path("go.2"), "").unwrap();
    let released = usize::from(scratch.wait_line("a") != "2");
    assert_eq!(holders[released].wait(), 0, "{}", holders[released].log());
    assert_eq!(waiter.wait(), 0, "{}", waiter.log());
    assert_eq!(scratch.wait_line("w"), "2");
    std::fs::write(scratch.path("go.1"), "").unwrap();
    let kept = 1 - released;
    assert_eq!(holders[kept].wait(), 0, "{}", holders[kept].log());
}

/// The master of the layout record restarted empty: the layout and the
/// marks are gone, four shards on the other masters and their holders live
/// on. A run given the range finds those shards on the other masters and
/// makes no pool beside them; `init` as the pool was made adopts them and
/// makes the two lost shards again, so a run gets an id of those only.
#[test]
fn a_lost_layout_master_leaves_no_id_handed_out_twice_and_init_adopts_the_shards() {
    let mut cluster = Cluster::start(3);
    let url = cluster.url("t");
    let range = ["--min", "1", "--max", "12", "--shards", "6"];
    ok(&[&["init", "--redis", &url][..], &range].concat());
    let shards = shard_keys(&cluster, "t");
    let layout_master = master_of(&cluster, "{t}:layout");
    // Every id held (by hand, as a holder's lease reads), for ten minutes.
    let mut lost_ids = BTreeSet::new();
    for key in &shards {
        let node = cluster.node_of(key);
        let (secs, _): (u64, u64) = node.query(&["TIME"]);
        let until = (secs + 600).to_string();
        let clients = key.replace(":ids", ":clients");
        for member in node.query::<Vec<String>>(&["ZRANGE", key, "0", "-1"]) {
            let _: i64 = node.query(&["ZADD", key, "XX", &until, &member]);
            let _: i64 = node.query(&["HSET", &clients, &member, "by-hand"]);
            if master_of(&cluster, key) == layout_master {
                lost_ids.insert(member[1..].parse::<u64>().expect("an id"));
            }
        }
    }
    assert_eq!(lost_ids.len(), 4, "two shards of two ids on each master");
    cluster.nodes[layout_master].restart_empty();
    wait_until("the cluster to be ok again", EVENT, || {
        cluster.nodes.iter().all(|n| {
            n.query::<String>(&["CLUSTER", "INFO"])
                .contains("cluster_state:ok")
        })
    });
    let before = cluster.keys();

    let run = [
        "run",
        "--redis",
        &url,
        "--min",
        "1",
        "--max",
        "12",
        "--wait",
        "0",
        "--delay",
        "0",
        "--no-safeguards",
        "--",
        "sh",
        "-c",
        "echo $YARAUS_WORKER_ID",
    ];
    let out = run_yaraus(&run, &[], LIMIT);
    assert_eq!(out.code, Some(125), "{out:#?}");
    assert!(out.stdout.is_empty(), "an id handed out again: {out:#?}");
    assert!(out.stderr.contains("{t:shard:"), "{}", out.stderr);
    assert_eq!(cluster.keys(), before, "the refused run wrote something");

    let out = ok(&[&["init", "--redis", &url][..], &range].concat());
    assert!(
        out.stderr
            .contains("4 of the 6 shards of {t}:layout outlived"),
        "{out:#?}"
    );
    let out = run_yaraus(&run, &[], LIMIT);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let id: u64 = out.stdout.trim().parse().expect("an id");
    assert!(lost_ids.contains(&id), "id {id} was held on a live shard");
}
