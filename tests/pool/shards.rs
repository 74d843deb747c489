//! A pool split into shards (`init --shards N`) on one server: its keys and
//! layout record, a full shard passed over, a lost shard passed over or
//! made again from its runs, the clock records kept in their shard,
//! `stats` (JSON, Prometheus), `health` and `list --using` over the
//! shards, growing and shrinking it, a waiter woken by a release on any
//! shard, the clients that read no layout refused with nothing changed,
//! and bad input. The same on a Redis Cluster: tests/deploy/shards.rs.

use super::*;
use common::process::{Run, run_cmd, timings};
use common::scratch::Scratch;
use yaraus::lease::PoolKeys;
use yaraus::lease::clock_guard::Offset;
use yaraus::lease::script::{Acquire, Stats as StatsScript};

/// Quick runs: a lease of 1 s renewed every 100 ms, started at once.
const FAST: &[&str] = &timings("1s", "300ms");

/// The shards of namespace `t` on one server.
fn shard_ids(k: usize) -> String {
    format!("t:shard:{k}:ids")
}

/// Leases `id` of shard `k` by hand for ten minutes.
fn lease_in_shard(s: &RedisServer, k: usize, id: u64) {
    let until = format!("{}", server_now(s) + 600.0);
    let _: i64 = s.query(&["ZADD", &shard_ids(k), "XX", &until, &enc(id)]);
    let _: i64 = s.query(&["HSET", &format!("t:shard:{k}:clients"), &enc(id), "by-hand"]);
}

/// `yaraus run` once with `--wait 0`: the id its command saw.
fn one_run(url: &str) -> u64 {
    let out = yaraus_ok(&quick_run(
        url,
        &["--wait", "0", "--", "sh", "-c", "echo $YARAUS_WORKER_ID"],
    ));
    out.stdout.trim().parse().expect("an id on stdout")
}

#[test]
fn a_sharded_pool_splits_its_ids_and_a_full_shard_is_passed_over() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    let out = yaraus_ok(&[
        "--redis", &url, "init", "--min", "1", "--max", "8", "--shards", "4",
    ]);
    assert_eq!(
        init_report(&out),
        "initialized: ids 1..8 in t:layout (4 shards)"
    );
    for k in 0..4 {
        let want: BTreeMap<String, String> = [2 * k as u64 + 1, 2 * k as u64 + 2]
            .iter()
            .map(|&n| (enc(n), "0".to_string()))
            .collect();
        assert_eq!(zset(&s, &shard_ids(k)), want, "shard {k}");
    }
    let mark: String = s.query(&["GET", "t:ids"]);
    assert!(
        mark.contains("split into 4 shards") && mark.contains("t:layout"),
        "{mark}"
    );
    assert_eq!(s.query::<String>(&["GET", "t:stats"]), mark);
    let before = s.snapshot();
    let out = yaraus_ok(&["--redis", &url, "init", "--min", "1", "--max", "8"]);
    assert_eq!(
        init_report(&out),
        "already initialized: ids 1..8 in t:layout (4 shards)"
    );
    assert_eq!(s.snapshot(), before, "a second init changed Redis");

    // Three shards full: each run starts at a random shard, and moves on
    // until the fourth. (A run that did not would fail 3 times in 4.)
    for (k, id) in [(0, 1), (0, 2), (1, 3), (1, 4), (2, 5), (2, 6)] {
        lease_in_shard(&s, k, id);
    }
    for _ in 0..4 {
        let id = one_run(&url);
        assert!(id == 7 || id == 8, "leased {id}, from a full shard");
    }
    let counted: Option<i64> = s.query(&["HGET", "t:shard:3:stats", "get_id_success"]);
    assert_eq!(counted, Some(4));
    // The clock guard's records live with their shard.
    let records: Vec<String> = s.query(&["HKEYS", "t:shard:3:clock"]);
    assert!(!records.is_empty(), "no clock record in the shard");
    assert!(
        records.iter().all(|m| m == &enc(7) || m == &enc(8)),
        "{records:?}"
    );
    assert_eq!(s.query::<i64>(&["EXISTS", "t:clock"]), 0);

    // Every shard full: the soonest expiry of them all is waited for.
    lease_in_shard(&s, 3, 7);
    lease_in_shard(&s, 3, 8);
    let out = yaraus(&quick_run(&url, &["--wait", "0", "--", "true"]));
    assert_eq!(out.code, Some(75), "{out:#?}");
    assert!(
        out.stderr
            .contains("every id of the pool t:layout (4 shards) is held"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_lost_shard_is_passed_over_or_made_again_from_its_runs() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&[
        "--redis", &url, "init", "--min", "1", "--max", "4", "--shards", "2",
    ]);
    // Grown: shard 1 holds 3..4 and 7..8.
    yaraus_ok(&["--redis", &url, "init", "--min", "1", "--max", "8"]);
    lease_in_shard(&s, 0, 1);
    lease_in_shard(&s, 0, 2);
    lease_in_shard(&s, 0, 5);
    lease_in_shard(&s, 0, 6);
    // Shard 1's master restarted empty.
    s.cmd(&[
        "DEL",
        "t:shard:1:ids",
        "t:shard:1:clients",
        "t:shard:1:stats",
    ]);
    let out = yaraus(&quick_run(&url, &["--wait", "0", "--", "true"]));
    assert_eq!(
        out.code,
        Some(75),
        "the full shard, the lost one passed over: {out:#?}"
    );
    assert_eq!(s.query::<i64>(&["EXISTS", "t:shard:1:ids"]), 0);
    // Given the pool's range, run makes the shard again with its own runs.
    let id: u64 = yaraus_ok(&quick_run(
        &url,
        &[
            "--min",
            "1",
            "--max",
            "8",
            "--wait",
            "0",
            "--",
            "sh",
            "-c",
            "echo $YARAUS_WORKER_ID",
        ],
    ))
    .stdout
    .trim()
    .parse()
    .expect("an id");
    assert!([3, 4, 7, 8].contains(&id), "leased {id}");
    let members: BTreeSet<String> = zset(&s, &shard_ids(1)).into_keys().collect();
    assert_eq!(members, set_of(&[&enc(3), &enc(4), &enc(7), &enc(8)]));
}

#[test]
fn a_run_never_makes_a_pool_beside_the_shards_of_a_lost_layout() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&[
        "--redis", &url, "init", "--min", "1", "--max", "4", "--shards", "2",
    ]);
    // Every id held by runs that renew on their shards.
    for (k, id) in [(0, 1), (0, 2), (1, 3), (1, 4)] {
        lease_in_shard(&s, k, id);
    }
    // The layout's master restarted empty: the layout and the marks are
    // gone, the shards and their holders live on.
    s.cmd(&["DEL", "t:layout", "t:ids", "t:stats"]);
    let before = s.snapshot();
    let out = yaraus(&quick_run(
        &url,
        &[
            "--min",
            "1",
            "--max",
            "4",
            "--wait",
            "0",
            "--",
            "sh",
            "-c",
            "echo $YARAUS_WORKER_ID",
        ],
    ));
    assert_eq!(out.code, Some(125), "{out:#?}");
    assert!(
        out.stdout.is_empty(),
        "an id was handed out again: {out:#?}"
    );
    let said: Vec<&str> = (out.stderr.lines())
        .filter(|l| !l.contains("safeguards are off"))
        .collect();
    assert_eq!(said.len(), 1, "{out:#?}");
    for words in ["t:shard:0:", "t:layout", "init --shards"] {
        assert!(said[0].contains(words), "{words:?} not said: {}", said[0]);
    }
    assert_eq!(s.snapshot(), before, "the failed run wrote something");
    // Nor does an `init` that is not told the pool is sharded.
    let out = yaraus(&["--redis", &url, "init", "--min", "1", "--max", "4"]);
    assert_eq!(out.code, Some(125), "{out:#?}");
    assert!(out.one_line().contains("t:shard:0:"), "{}", out.stderr);
    assert_eq!(s.snapshot(), before, "the refused init wrote something");

    // `init` as the pool was made finds the shards as it made them: it
    // records the layout again, and the holders keep their ids.
    let out = yaraus(&[
        "--redis", &url, "init", "--min", "1", "--max", "4", "--shards", "2",
    ]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(
        out.stderr
            .contains("2 of the 2 shards of t:layout outlived their layout record"),
        "{out:#?}"
    );
    for k in 0..2 {
        let held: Vec<String> = s.query(&["HVALS", &format!("t:shard:{k}:clients")]);
        assert_eq!(held, ["by-hand", "by-hand"], "shard {k}");
    }
    // The pool is full: a run waits rather than take a held id.
    let out = yaraus(&quick_run(&url, &["--wait", "0", "--", "true"]));
    assert_eq!(out.code, Some(75), "{out:#?}");
    assert_eq!(s.query::<i64>(&["EXISTS", "t:ids"]), 1, "the mark is back");
    let mark: String = s.query(&["TYPE", "t:ids"]);
    assert_eq!(mark, "string", "t:ids is the layout's mark, not a pool");
}

/// A pool of 1..9 in 3 shards with ids 2, 4, 6 and 9 leased by hand.
fn sharded_with_leases(s: &RedisServer, url: &str) {
    yaraus_ok(&[
        "--redis", url, "init", "--min", "1", "--max", "9", "--shards", "3",
    ]);
    let leased = [(0, 2), (1, 4), (1, 6), (2, 9)];
    for (k, id) in leased {
        lease_in_shard(s, k, id);
    }
}

#[test]
fn stats_and_list_go_over_every_shard() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    sharded_with_leases(&s, &url);
    let stats = stats_json(&url);
    assert_eq!(int(&stats, "using_ids"), 4);
    assert_eq!(int(&stats, "unusing_ids"), 5);
    assert_eq!((int(&stats, "min"), int(&stats, "max")), (1, 9));
    let shards = stats["shards"].as_array().expect("shards");
    let using: Vec<i64> = shards
        .iter()
        .map(|s| s["using_ids"].as_i64().unwrap())
        .collect();
    assert_eq!(using, [1, 2, 1]);
    assert_within("using_ttl_mid", num(&stats, "using_ttl_mid"), 595.0, 600.0);
    let prom = yaraus_ok(&["--redis", &url, "stats", "--format", "prometheus"]);
    crate::pool::common::metrics::assert_promtool_passes(&prom.stdout, false);
    for line in [
        "yaraus_using_ids{pool=\"t:ids\"} 4",
        "yaraus_shard_using_ids{pool=\"t:ids\",shard=\"t:shard:1:ids\"} 2",
        "yaraus_shard_unusing_ids{pool=\"t:ids\",shard=\"t:shard:2:ids\"} 2",
    ] {
        assert!(
            prom.stdout.lines().any(|l| l == line),
            "{line} not in {}",
            prom.stdout
        );
    }
    let health = yaraus_ok(&["--redis", &url, "health"]);
    assert!(
        health
            .stdout
            .contains("pool t:layout (3 shards): ids 1..9, 4 leased, 5 free"),
        "{health:#?}"
    );

    // The ids of the rows `list ARGS` prints.
    let listed = |args: &[&str]| -> Vec<u64> {
        let out = yaraus_ok(&[&["--redis", &url, "list"][..], args].concat());
        let rows = parse_json(&out.stdout);
        (rows.as_array().unwrap().iter())
            .map(|r| r["id"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(listed(&["--using"]), [2, 4, 6, 9]);
    assert_eq!(listed(&[]), (1..=9).collect::<Vec<_>>());
}

#[test]
fn a_sharded_pool_grows_and_shrinks_without_moving_an_id() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    sharded_with_leases(&s, &url);
    // Grown, each shard gets a share of the new ids and keeps its own;
    // shrunk, the leased ids outside the range refuse it.
    let out = yaraus_ok(&["--redis", &url, "init", "--min", "1", "--max", "15"]);
    assert_eq!(
        init_report(&out),
        "resized t:layout (3 shards) from 1..9 to 1..15: 6 ids added, 0 removed"
    );
    for (k, grown) in [(0, [10, 11]), (1, [12, 13]), (2, [14, 15])] {
        let held = zset(&s, &shard_ids(k));
        assert_eq!(held.len(), 5, "shard {k}: {held:?}");
        assert!(
            grown.iter().all(|&n| held.contains_key(&enc(n))),
            "shard {k}: {held:?}"
        );
    }
    let before = s.snapshot();
    let out = yaraus(&["--redis", &url, "init", "--min", "1", "--max", "8"]);
    assert_eq!(out.code, Some(125), "{out:#?}");
    assert!(out.one_line().contains("9 (by by-hand)"), "{}", out.stderr);
    assert_eq!(s.snapshot(), before, "a refused shrink changed Redis");
    let out = yaraus_ok(&["-q", "--redis", &url, "init", "--min", "2", "--max", "9"]);
    assert_eq!(
        init_report(&out),
        "resized t:layout (3 shards) from 1..15 to 2..9: 0 ids added, 7 removed"
    );
    assert_eq!(int(&stats_json(&url), "unusing_ids"), 4);
}

#[test]
fn a_release_on_any_shard_wakes_a_run_waiting_for_a_full_sharded_pool() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&[
        "--redis", &url, "init", "--min", "1", "--max", "2", "--shards", "2",
    ]);
    let scratch = Scratch::new();
    let hold = |name: &str| {
        let body = format!(
            "echo $YARAUS_WORKER_ID > \"$D/{name}\"; while [ ! -e \"$D/go.$YARAUS_WORKER_ID\" ]; do sleep 0.05; done"
        );
        let run = Run::start(&url, &scratch, FAST, &["sh", "-c", &body]);
        wait_until("the holder's command to start", common::EVENT, || {
            scratch.exists(name)
        });
        run
    };
    let (mut a, mut b) = (hold("a"), hold("b"));
    let waiter = run_cmd(
        &url,
        &scratch,
        &[FAST, &["--poll", "30s"]].concat(),
        &["sh", "-c", "echo $YARAUS_WORKER_ID > \"$D/w\""],
    );
    let mut waiter = Run::spawn(waiter, &scratch);
    for k in 0..2 {
        let channel = format!("t:wake:t:shard:{k}:ids");
        wait_until("the waiter to listen on every shard", common::EVENT, || {
            let (_, n): (String, i64) = s.query(&["PUBSUB", "NUMSUB", &channel]);
            n >= 1
        });
    }
    // The second shard's id goes back: the waiter gets it long before its
    // poll of 30 s.
    std::fs::write(scratch.path("go.2"), "").unwrap();
    let (released, kept) = match scratch.wait_line("a").as_str() {
        "2" => (&mut a, &mut b),
        _ => (&mut b, &mut a),
    };
    assert_eq!(released.wait(), 0, "{}", released.log());
    assert_eq!(waiter.wait(), 0, "{}", waiter.log());
    assert_eq!(scratch.wait_line("w"), "2");
    std::fs::write(scratch.path("go.1"), "").unwrap();
    assert_eq!(kept.wait(), 0, "{}", kept.log());
}

#[test]
fn clients_that_read_no_layout_are_refused_and_change_nothing() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&[
        "--redis", &url, "init", "--min", "1", "--max", "4", "--shards", "2",
    ]);
    let before = s.snapshot();
    // What an older yaraus runs: the pool's scripts and init, on the
    // namespace's own keys.
    let base = PoolKeys::new("t");
    let mut conn = s.conn();
    let acquire = Acquire {
        keys: &base,
        client: "",
        host: "older",
        ttl_ms: 60_000,
        horizon: 0,
        offset: Offset::UNKNOWN,
        queued: None,
    };
    let e = acquire
        .invocation()
        .invoke::<redis::Value>(&mut conn)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("t:ids is a string, not the sorted set of a pool"),
        "{e}"
    );
    let e = StatsScript { keys: &base }
        .invocation()
        .invoke::<redis::Value>(&mut conn)
        .unwrap_err();
    assert!(e.to_string().contains("t:ids is a string"), "{e}");
    // What the Go tool does first to lease or count: it meets a string.
    for cmd in [
        vec!["HINCRBY", "t:stats", "client_id_count", "1"],
        vec!["ZRANGEBYSCORE", "t:ids", "-inf", "+inf"],
    ] {
        let e = s.try_query::<redis::Value>(&cmd).unwrap_err();
        assert_eq!(e.code(), Some("WRONGTYPE"), "{cmd:?}: {e}");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let target = yaraus::store::Target::parse(&url).unwrap();
    let timeouts = yaraus::timing::Timeouts::default();
    let e = rt
        .block_on(async {
            let mut store = yaraus::store::Store::connect(&target, timeouts).await?;
            yaraus::lease::init(&mut store, &base, (1, 4), false).await
        })
        .unwrap_err();
    assert!(e.to_string().contains("t:ids is a string"), "{e}");
    assert_eq!(
        s.snapshot(),
        before,
        "an older client changed the sharded pool"
    );
}

#[test]
fn bad_shard_counts_get_one_line_and_change_nothing() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    // `init ARGS` on the namespace of `url`: exit `code`, one line that
    // `says`, nothing changed.
    let refused_on = |url: &str, args: &[&str], code: i32, says: &str| {
        let before = s.snapshot();
        let out = yaraus(&[&["--redis", url, "init"][..], args].concat());
        assert_eq!(out.code, Some(code), "{args:?}: {out:#?}");
        assert!(out.one_line().contains(says), "{args:?}: {}", out.stderr);
        assert_eq!(s.snapshot(), before, "{args:?} changed Redis");
    };
    let refused = |args: &[&str], code: i32, says: &str| refused_on(&url, args, code, says);
    refused(
        &["--shards", "0"],
        2,
        "--shards 0: a pool has 1 to 1024 shards",
    );
    refused(&["--shards", "1025"], 2, "1 to 1024 shards");
    refused(&["--max", "5", "--shards", "6"], 2, "--shards 6 for 5 ids");
    yaraus_ok(&["--redis", &url, "init", "--max", "5"]);
    refused(
        &["--max", "5", "--shards", "2"],
        125,
        "t:ids exists: the namespace holds a pool that is not sharded",
    );
    let other = s.url_ns("u");
    yaraus_ok(&["--redis", &other, "init", "--max", "5", "--shards", "2"]);
    refused_on(
        &other,
        &["--max", "5", "--shards", "3"],
        125,
        "the pool u:layout has 2 shards, not 3",
    );
    // Shards left over from a pool whose layout record was lost, asked for
    // with another range than they were made with (1..5).
    s.cmd(&["DEL", "u:layout", "u:ids", "u:stats"]);
    refused_on(
        &other,
        &["--max", "6", "--shards", "2"],
        125,
        "u:shard:1:ids holds ids 3 outside the ids 4..6 this split gives it, and no layout \
         u:layout records it",
    );
    // Shards of 3 whose first two fit a split in 2 (1..3, 4..7) while the
    // third holds 7..9, which that split would give out again.
    let third = s.url_ns("v");
    yaraus_ok(&["--redis", &third, "init", "--max", "9", "--shards", "3"]);
    s.cmd(&["DEL", "v:layout", "v:ids", "v:stats"]);
    refused_on(
        &third,
        &["--max", "7", "--shards", "2"],
        125,
        "v:shard:2:ids exists, of a shard that 2 shards would not have",
    );
}
