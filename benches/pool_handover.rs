//! The hand-over of a worker id on a full pool: how long
//! from the moment one `yaraus run`'s command ends to the moment a run
//! waiting for an id starts its own, on one server and on a Redis Cluster of
//! three masters, with wake-ups (the release publishes, the waiter listens)
//! and with polls only (`--wakeups off`: the waiter retries every
//! `--interval`, from half of it). Part of the `handover` bench.
//!
//! Both runs have `--interval 1s` (the default) and `--no-safeguards
//! --delay 0`: the grace delay (7 s by default) is a safety wait of its own,
//! not part of the hand-over. One round: a holder of the pool's only id
//! whose command waits for a file `go`; a waiter started once the holder's
//! command runs, given time to be refused (the pool's
//! `get_id_no_available_id` counter) and, with wake-ups, to subscribe, and
//! then 1.1 s more (so that polls start at random phases); then `go` is
//! created, and the figure is the waiter's `date` minus the holder's.

use crate::common::RedisServer;
use crate::common::cluster::Cluster;
use crate::{exits, nanos, wait_for};
use std::path::Path;
use std::process::{Child, Command};
use std::time::Duration;

const NS: &str = "benchpool";

fn run(yaraus: &str, url: &str, wakeups: bool, script: &str) -> Child {
    let mut c = Command::new(yaraus);
    c.args(["--quiet", "run", "--redis", url])
        .args(["--interval", "1s", "--no-safeguards", "--delay", "0"])
        .args(crate::wakeups_unless(wakeups))
        .args(["--", "sh", "-c", script]);
    crate::spawn_quiet(c, "run")
}

/// Where the pool lives: its URL, the node of its keys, and their names.
struct Pool<'a> {
    name: &'static str,
    url: String,
    node: &'a RedisServer,
    stats: String,
    channel: String,
    sharded: bool,
}

impl Pool<'_> {
    fn refusals(&self) -> i64 {
        let n: Option<i64> = self
            .node
            .query(&["HGET", &self.stats, "get_id_no_available_id"]);
        n.unwrap_or(0)
    }

    fn subscribed(&self) -> bool {
        let what = if self.sharded {
            "SHARDNUMSUB"
        } else {
            "NUMSUB"
        };
        let (_, n): (String, i64) = self.node.query(&["PUBSUB", what, &self.channel]);
        n >= 1
    }
}

fn init(yaraus: &str, url: &str) {
    let ok = Command::new(yaraus)
        .args([
            "--quiet", "init", "--redis", url, "--min", "1", "--max", "1",
        ])
        .status()
        .unwrap()
        .success();
    assert!(ok, "yaraus init on {url}");
}

fn round(yaraus: &str, pool: &Pool, wakeups: bool, dir: &Path) -> Duration {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let [started, go, ended, begun] = ["started", "go", "ended", "begun"].map(|f| dir.join(f));
    let mut holder = run(
        yaraus,
        &pool.url,
        true,
        &format!(
            "{}; date +%s%N > {}",
            crate::common::process::holds_until_go(&started, &go),
            ended.display()
        ),
    );
    wait_for("the holder's command", || started.exists());
    let refused = pool.refusals();
    let mut waiter = run(
        yaraus,
        &pool.url,
        wakeups,
        &format!("date +%s%N > {}", begun.display()),
    );
    wait_for("the waiter to be refused", || pool.refusals() > refused);
    if wakeups {
        wait_for("the waiter to subscribe", || pool.subscribed());
    }
    std::thread::sleep(Duration::from_millis(1100));
    std::fs::write(&go, "").unwrap();
    exits(&mut holder, "the holder to exit");
    assert!(holder.wait().unwrap().success());
    exits(&mut waiter, "the waiter to exit");
    assert!(waiter.wait().unwrap().success());
    Duration::from_nanos((nanos(&begun) - nanos(&ended)).max(0) as u64)
}

/// `rounds` rounds of each setting, taking turns; prints a Markdown table.
pub fn measure(yaraus: &str, rounds: usize) {
    let one = crate::figures::start_redis(false);
    let cluster = Cluster::start(3);
    let pools = [
        Pool {
            name: "1 server",
            url: format!("{}?ns={NS}", one.url()),
            node: &one,
            stats: format!("{NS}:stats"),
            channel: format!("{NS}:wake:{NS}:ids"),
            sharded: false,
        },
        Pool {
            name: "Cluster of 3 masters",
            url: cluster.url(NS),
            node: cluster.node_of(&format!("{{{NS}}}:ids")),
            stats: format!("{{{NS}}}:stats"),
            channel: format!("{NS}:wake:{{{NS}}}:ids"),
            sharded: true,
        },
    ];
    for pool in &pools {
        init(yaraus, &pool.url);
    }
    let dir = std::env::temp_dir().join(format!("yaraus-pool-{}", std::process::id()));
    let settings: Vec<(&Pool, bool)> = pools.iter().flat_map(|p| [(p, false), (p, true)]).collect();
    let mut gaps: Vec<Vec<Duration>> = settings.iter().map(|_| Vec::new()).collect();
    for _ in 0..rounds {
        for (i, &(pool, wakeups)) in settings.iter().enumerate() {
            gaps[i].push(round(yaraus, pool, wakeups, &dir));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "\n### `run` on a full pool: holder's command ends → waiter's command starts \
         ({rounds} rounds, --interval 1s --no-safeguards --delay 0)\n"
    );
    println!("| setting | median | p90 | max |\n| --- | --- | --- | --- |");
    for ((pool, wakeups), g) in settings.into_iter().zip(gaps) {
        let how = if wakeups {
            "wake-ups"
        } else {
            "polls only (before)"
        };
        println!("{}", crate::spread_row(&format!("{}, {how}", pool.name), g));
    }
}
