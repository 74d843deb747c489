//! `yaraus stats` as JSON: the counters after a known sequence of runs,
//! and the TTL figures against the server's clock.

use super::*;

#[test]
fn stats_counts_a_known_sequence_of_runs() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init", "--max", "3"]);
    let fresh = stats_json(&url);
    for field in GO_STATS_FIELDS {
        let want = match field {
            "unusing_ids" => 3.0,
            _ => 0.0,
        };
        assert_eq!(num(&fresh, field), want, "{field} of a fresh pool");
    }

    // Three runs that lease, run `true`, release.
    for _ in 0..3 {
        yaraus_ok(&quick_run(&url, &["--", "true"]));
    }
    let st = stats_json(&url);
    for (field, want) in [
        ("client_id_count", 3),
        ("client_get_id_count", 3),
        ("client_get_id_success", 3),
        ("get_id_no_available_id", 0),
        ("extend_ttl_count", 0),
        ("unusing_ids", 3),
        ("using_ids", 0),
    ] {
        assert_eq!(int(&st, field), want, "{field} after three runs");
    }

    // Every id leased by someone else: one attempt, no id.
    let now = server_secs(&s) as f64;
    for id in 1..=3 {
        lease(&s, "t", id, now + 600.0, "other");
    }
    let out = yaraus(&quick_run(&url, &["--wait", "0", "--", "true"]));
    assert_eq!(out.code, Some(75), "{out:#?}");
    let st = stats_json(&url);
    assert_eq!(int(&st, "client_id_count"), 4);
    assert_eq!(int(&st, "client_get_id_count"), 4);
    assert_eq!(int(&st, "client_get_id_success"), 3);
    assert_eq!(int(&st, "get_id_no_available_id"), 1);
    assert_eq!(int(&st, "using_ids"), 3);
    assert_eq!(int(&st, "unusing_ids"), 0);
    for id in 1..=3 {
        lease(&s, "t", id, 0.0, "other");
    }

    // A run that renews every 100 ms, sees its lease expire once (warning),
    // then loses its id to a thief (ownership error, exit 124).
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let mut run = Spawned(Some(
        common::yaraus()
            .args(quick_run(&url, &[]))
            .args([
                "--interval",
                "100ms",
                "--expire",
                "60s",
                "--kill-after",
                "1s",
                "--",
            ])
            .args(["sh", "-c", "touch \"$0\"; while :; do sleep 0.05; done"])
            .arg(&started)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn yaraus run"),
    ));
    wait_until("the child to start", Duration::from_secs(20), || {
        started.exists()
    });
    let counter = |f: &str| -> i64 { s.query::<Option<i64>>(&["HGET", "t:stats", f]).unwrap_or(0) };
    wait_until("two renewals", Duration::from_secs(20), || {
        counter("extend_ttl_success") >= 2
    });
    let held: Vec<String> = s.query(&["ZRANGEBYSCORE", "t:ids", &format!("({now}"), "+inf"]);
    assert_eq!(held.len(), 1, "{held:?}");
    let member = &held[0];
    let _: i64 = s.query(&[
        "ZADD",
        "t:ids",
        "XX",
        &format!("{}", server_now(&s) - 5.0),
        member,
    ]);
    wait_until(
        "a renewal of the expired lease",
        Duration::from_secs(20),
        || counter("extend_ttl_expire_warning") >= 1,
    );
    let _: i64 = s.query(&["HSET", "t:clients", member, "thief"]);
    let status = run.wait(Duration::from_secs(20));
    let stderr = run.stderr();
    assert_eq!(status.code(), Some(124), "run that lost its id: {stderr}");

    let st = stats_json(&url);
    let raw = hash(&s, "t:stats");
    let raw_int = |f: &str| raw.get(f).map_or(0, |v| v.parse::<i64>().unwrap());
    assert_eq!(int(&st, "client_id_count"), 5);
    assert_eq!(int(&st, "client_get_id_count"), 5);
    assert_eq!(int(&st, "client_get_id_success"), 4);
    assert_eq!(int(&st, "get_id_no_available_id"), 1);
    assert_eq!(int(&st, "extend_ttl_ownership_error"), 1);
    assert_eq!(int(&st, "extend_ttl_expire_warning"), 1);
    let success = int(&st, "extend_ttl_success");
    assert!(success >= 3, "extend_ttl_success {success}");
    assert_eq!(int(&st, "extend_ttl_count"), success + 1);
    // The Go tool's names for the counters Redis keeps under its own names.
    for (field, key) in [
        ("client_id_count", "client_id_count"),
        ("client_get_id_count", "get_id_count"),
        ("client_get_id_success", "get_id_success"),
        ("get_id_no_available_id", "get_id_no_available_id"),
        ("extend_ttl_count", "extend_ttl_count"),
        ("extend_ttl_success", "extend_ttl_success"),
        ("extend_ttl_ownership_error", "extend_ttl_ownership_error"),
        ("extend_ttl_expire_warning", "extend_ttl_expire_warning"),
    ] {
        assert_eq!(int(&st, field), raw_int(key), "{field} vs ns:stats {key}");
    }
    // The stolen id stays leased (to the thief) until its expiry.
    assert_eq!(int(&st, "using_ids"), 1);
    assert_eq!(int(&st, "unusing_ids"), 2);
}

#[test]
fn stats_ttl_min_mid_max_follow_server_time() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init", "--max", "10"]);
    let base = server_secs(&s) as f64;
    // Four leases, one expired lease (free), five never leased.
    for (id, ttl) in [(3, 100.0), (1, 200.0), (9, 300.5), (4, 400.0)] {
        lease(&s, "t", id, base + ttl, &format!("c{id}"));
    }
    lease(&s, "t", 2, base - 50.0, "gone");

    let t0 = server_now(&s);
    let st = stats_json(&url);
    let t1 = server_now(&s);
    assert_eq!(int(&st, "using_ids"), 4);
    assert_eq!(int(&st, "unusing_ids"), 6);
    let ttl = |score: f64| (base + score - t1, base + score - t0);
    let (lo, hi) = ttl(100.0);
    assert_within("using_ttl_min", num(&st, "using_ttl_min"), lo, hi);
    let (lo, hi) = ttl(400.0);
    assert_within("using_ttl_max", num(&st, "using_ttl_max"), lo, hi);
    // Even count: a median between the two middle leases (the Go tool takes
    // the upper one, yaraus their mean; both lie in this interval).
    let (lo, _) = ttl(200.0);
    let (_, hi) = ttl(300.5);
    assert_within("using_ttl_mid", num(&st, "using_ttl_mid"), lo, hi);

    // Odd count: the middle lease exactly.
    lease(&s, "t", 10, base + 1000.0, "c10");
    let t0 = server_now(&s);
    let st = stats_json(&url);
    let t1 = server_now(&s);
    let ttl = |score: f64| (base + score - t1, base + score - t0);
    assert_eq!(int(&st, "using_ids"), 5);
    assert_eq!(int(&st, "unusing_ids"), 5);
    let (lo, hi) = ttl(300.5);
    assert_within("using_ttl_mid", num(&st, "using_ttl_mid"), lo, hi);
    let (lo, hi) = ttl(1000.0);
    assert_within("using_ttl_max", num(&st, "using_ttl_max"), lo, hi);
    let (lo, hi) = ttl(100.0);
    assert_within("using_ttl_min", num(&st, "using_ttl_min"), lo, hi);

    // stats only reads.
    let before = s.snapshot();
    stats_json(&url);
    assert_eq!(s.snapshot(), before);
}
