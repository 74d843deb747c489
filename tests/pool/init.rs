//! `yaraus init`: a fresh pool of 1..1023, a Go-layout pool adopted as it
//! is, 2^22 ids never seen partial, an interrupted init that leaves nothing
//! visible, growing, shrinking or moving the range around leases, and an
//! init stopped after its decision, finished by the next.

use super::*;

#[test]
fn init_creates_1_to_1023_and_is_idempotent() {
    let s = RedisServer::start();
    let url = s.url_ns("t");

    let out = yaraus_ok(&["--redis", &url, "init"]);
    assert_eq!(init_report(&out), "initialized: ids 1..1023 in t:ids");
    // Exactly the members A1..D1023, every one free (score 0), in id order.
    let flat: Vec<(String, String)> = s.query(&["ZRANGE", "t:ids", "0", "-1", "WITHSCORES"]);
    let want: Vec<(String, String)> = (1..=1023).map(|n| (enc(n), "0".to_string())).collect();
    assert_eq!(flat, want);
    assert_eq!(
        hash(&s, "t:stats"),
        BTreeMap::from([("min".into(), "1".into()), ("max".into(), "1023".into())])
    );
    // No temporary key left behind, no owners yet.
    assert_eq!(keys(&s), set_of(&["t:ids", "t:stats"]));

    let before = s.snapshot();
    let out = yaraus_ok(&["--redis", &url, "init", "--min", "1", "--max", "1023"]);
    assert!(init_report(&out).starts_with("already initialized: ids "));
    assert_eq!(s.snapshot(), before, "a second init changed Redis");
}

/// The report is the command's result, not a log line: `--quiet`, which
/// silences log lines, keeps it.
#[test]
fn init_reports_on_stdout_even_when_quiet() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    for (args, report) in [
        (
            &["-q", "init", "--max", "5"][..],
            "initialized: ids 1..5 in t:ids",
        ),
        (
            &["init", "--max", "5", "--quiet"],
            "already initialized: ids 1..5 in t:ids",
        ),
        (
            &["-q", "init", "--max", "7"],
            "resized t:ids from 1..5 to 1..7: 2 ids added, 0 removed",
        ),
    ] {
        let out = yaraus_ok(&[&["--redis", &url][..], args].concat());
        assert_eq!(init_report(&out), report, "{args:?}");
    }
}

#[test]
fn init_adopts_a_go_layout_pool_without_min_max() {
    // The Go tool writes no min/max: init must measure the pool, see that it
    // already is 1..1023, and touch no lease.
    let s = RedisServer::start();
    let url = s.url_ns("go");
    let mut conn = s.conn();
    let mut zadd = redis::cmd("ZADD");
    zadd.arg("go:ids");
    for n in 1..=1023u64 {
        zadd.arg(0).arg(enc(n));
    }
    let _: i64 = zadd.query(&mut conn).unwrap();
    let now = server_secs(&s) as f64;
    lease(&s, "go", 7, now + 600.0, "go-client-7");
    let ids_before = zset(&s, "go:ids");

    let out = yaraus_ok(&["--redis", &url, "init"]);
    assert!(init_report(&out).starts_with("already initialized: ids "));
    assert_eq!(zset(&s, "go:ids"), ids_before);
    assert_eq!(hash(&s, "go:clients")["A7"], "go-client-7");
}

#[test]
fn init_of_2_22_ids_is_never_seen_partial_and_redis_stays_responsive() {
    let s = RedisServer::start();
    let url = s.url_ns("big");
    // Server-side durations of every command over 10 ms.
    let _: () = s.query(&["CONFIG", "SET", "slowlog-log-slower-than", "10000"]);
    let _: () = s.query(&["CONFIG", "SET", "slowlog-max-len", "100000"]);
    let _: () = s.query(&["SLOWLOG", "RESET"]);

    let done = Arc::new(AtomicBool::new(false));
    let samples = Arc::new(AtomicU64::new(0));

    // Observer: what `run` would see. Only "no pool" or "the whole pool".
    let observer = {
        let mut conn = s.conn();
        let (done, samples) = (done.clone(), samples.clone());
        thread::spawn(move || {
            let mut seen: BTreeMap<u64, u64> = BTreeMap::new();
            loop {
                let finished = done.load(Ordering::SeqCst);
                let (card, exists): (u64, u64) = redis::pipe()
                    .cmd("ZCARD")
                    .arg("big:ids")
                    .cmd("EXISTS")
                    .arg("big:ids")
                    .query(&mut conn)
                    .expect("ZCARD");
                assert_eq!(exists == 1, card > 0, "EXISTS and ZCARD disagree");
                *seen.entry(card).or_default() += 1;
                samples.fetch_add(1, Ordering::SeqCst);
                if finished {
                    return seen;
                }
                // Pacing, not synchronisation: a partial pool would be
                // visible for seconds; leave the 2 cores to Redis and init.
                thread::sleep(Duration::from_millis(1));
            }
        })
    };
    // Pinger: the longest Redis made anyone wait during the init.
    let pinger = {
        let mut conn = s.conn();
        let done = done.clone();
        thread::spawn(move || {
            let (mut max, mut count) = (Duration::ZERO, 0u64);
            while !done.load(Ordering::SeqCst) {
                let t = Instant::now();
                let _: String = redis::cmd("PING").query(&mut conn).expect("PING");
                max = max.max(t.elapsed());
                count += 1;
                thread::sleep(Duration::from_millis(1)); // pacing, as above
            }
            (max, count)
        })
    };
    wait_until("the observer to start", Duration::from_secs(10), || {
        samples.load(Ordering::SeqCst) > 0
    });

    let started = Instant::now();
    let out = yaraus_for(&["--redis", &url, "init", "--max", "4194303"], BIG_TIMEOUT);
    let took = started.elapsed();
    done.store(true, Ordering::SeqCst);
    let seen = observer.join().expect("observer");
    let (max_ping, pings) = pinger.join().expect("pinger");
    assert_eq!(out.code, Some(0), "{out:#?}");

    let slowlog: Vec<Vec<redis::Value>> = s.query(&["SLOWLOG", "GET", "-1"]);
    // The slowest command by Redis's own clock, and its name. Printed, not
    // asserted: it is wall time, so a loaded machine inflates it.
    let (slowest_us, slowest_cmd) = slowlog
        .iter()
        .filter_map(|e| match (e.get(2), e.get(3)) {
            (Some(redis::Value::Int(us)), Some(redis::Value::Array(args))) => {
                let name = match args.first() {
                    Some(redis::Value::BulkString(b)) => String::from_utf8_lossy(b).into_owned(),
                    _ => "?".into(),
                };
                Some((*us, name))
            }
            _ => None,
        })
        .max()
        .unwrap_or((0, "none".into()));
    println!(
        "init of {BIG} ids: {took:?} wall (debug binary); max PING latency {max_ping:?} over {pings} PINGs; \
         {} commands over 10 ms server-side, slowest {} ms ({slowest_cmd}); observer samples {seen:?}",
        slowlog.len(),
        slowest_us as f64 / 1000.0
    );

    // Never a partial pool: no pool, then all of it.
    let partial: Vec<_> = seen.keys().filter(|&&c| c != 0 && c != BIG).collect();
    assert!(
        partial.is_empty(),
        "an observer saw a partial pool: {seen:?}"
    );
    assert!(seen.contains_key(&0) && seen.contains_key(&BIG), "{seen:?}");

    // Responsiveness: a correctness property of chunking (no single command
    // blocks Redis for seconds), not a speed benchmark — hence the generous
    // bound. Speed is measured by scripts/bench.sh.
    assert!(
        max_ping < Duration::from_secs(1),
        "PING waited {max_ping:?}"
    );

    // The pool itself.
    assert_eq!(s.query::<u64>(&["ZCARD", "big:ids"]), BIG);
    assert_eq!(s.query::<u64>(&["ZCOUNT", "big:ids", "0", "0"]), BIG);
    assert_eq!(
        s.query::<Vec<String>>(&["ZRANGE", "big:ids", "0", "0"]),
        ["A1"]
    );
    assert_eq!(
        s.query::<Vec<String>>(&["ZRANGE", "big:ids", "-1", "-1"]),
        ["G4194303"]
    );
    assert_eq!(
        hash(&s, "big:stats"),
        BTreeMap::from([("min".into(), "1".into()), ("max".into(), BIG.to_string())])
    );
    assert_eq!(keys(&s), set_of(&["big:ids", "big:stats"]));
}

#[test]
fn interrupted_init_leaves_no_visible_pool() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    let mut init = Spawned(Some(
        common::yaraus()
            .args(["--redis", &url, "init", "--max", "1000000"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn yaraus init"),
    ));
    let known = set_of(&["t:ids", "t:clients", "t:stats"]);
    let under_construction = |s: &RedisServer| -> Option<(String, u64)> {
        keys(s)
            .into_iter()
            .filter(|k| !known.contains(k))
            .find_map(|k| {
                let n: u64 = s.query(&["ZCARD", &k]);
                (n >= 20_000).then_some((k, n))
            })
    };
    wait_until(
        "init to be part-way through",
        Duration::from_secs(30),
        || {
            let visible: u64 = s.query(&["ZCARD", "t:ids"]);
            assert_eq!(visible, 0, "a pool under construction is visible as t:ids");
            under_construction(&s).is_some()
        },
    );
    let pid = init.child().id();
    kill(Pid::from_raw(pid as i32), Signal::SIGKILL).expect("kill init");
    let status = init.wait(Duration::from_secs(10));
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "init finished before it could be interrupted: {status:?}"
    );

    let (partial, n) = under_construction(&s).expect("the partial pool");
    assert!(n < 1_000_000, "the partial pool is complete");
    assert_eq!(
        s.query::<u64>(&["EXISTS", "t:ids"]),
        0,
        "a partial pool is visible"
    );
    let pttl: i64 = s.query(&["PTTL", &partial]);
    assert!(
        pttl > 0,
        "the partial pool {partial} never expires (PTTL {pttl})"
    );

    // Nothing sees a pool, and looking writes nothing.
    let before = s.snapshot();
    for args in [
        vec!["--redis", &url, "stats"],
        vec!["--redis", &url, "list"],
        vec!["-q", "--redis", &url, "run", "--wait", "0", "--", "true"],
    ] {
        let out = yaraus(&args);
        assert_eq!(out.code, Some(125), "{args:?}: {out:#?}");
        assert!(out.one_line().contains("does not exist"), "{out:#?}");
    }
    assert_eq!(s.snapshot(), before);

    // Running init again builds a complete pool.
    let out = yaraus_ok(&["--redis", &url, "init", "--max", "1000"]);
    assert!(init_report(&out).starts_with("initialized: ids "));
    assert_eq!(s.query::<u64>(&["ZCARD", "t:ids"]), 1000);
}

#[test]
fn init_grows_1023_to_2047_keeping_leases() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init"]);
    let now = server_secs(&s) as f64;
    lease(&s, "t", 5, now + 600.0, "c-5");
    lease(&s, "t", 1000, now + 700.5, "c-1000");
    lease(&s, "t", 1023, now + 800.0, "c-1023");
    lease(&s, "t", 7, now - 10.0, "c-7-released"); // held once, free now
    let ids_before = zset(&s, "t:ids");
    let clients_before = hash(&s, "t:clients");

    let out = yaraus_ok(&["--redis", &url, "init", "--max", "2047"]);
    assert_eq!(
        init_report(&out),
        "resized t:ids from 1..1023 to 1..2047: 1024 ids added, 0 removed"
    );

    let mut want = ids_before.clone();
    for n in 1024..=2047 {
        want.insert(enc(n), "0".into());
    }
    assert_eq!(
        zset(&s, "t:ids"),
        want,
        "grow must add exactly 1024..2047, free"
    );
    assert_eq!(hash(&s, "t:clients"), clients_before);
    let st = hash(&s, "t:stats");
    assert_eq!((st["min"].as_str(), st["max"].as_str()), ("1", "2047"));

    let out = yaraus_ok(&["--redis", &url, "init", "--max", "2047"]);
    assert!(init_report(&out).starts_with("already initialized: ids "));
}

#[test]
fn init_refuses_to_shrink_past_a_leased_id_then_shrinks_when_free() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init", "--max", "2047"]);
    let now = server_secs(&s) as f64;
    lease(&s, "t", 2000, now + 600.0, "holder-2000");
    lease(&s, "t", 10, now + 600.0, "holder-10");
    lease(&s, "t", 1500, now - 5.0, "old-1500");

    let before = s.snapshot();
    let out = yaraus(&["--redis", &url, "init", "--max", "1023"]);
    assert_eq!(out.code, Some(125), "{out:#?}");
    let line = out.one_line();
    assert!(
        line.contains("refusing") && line.contains("2000") && line.contains("holder-2000"),
        "the refusal must name the leased id and its holder: {line}"
    );
    assert_eq!(s.snapshot(), before, "a refused shrink changed Redis");

    // Released (score = now, as release does): the shrink goes through.
    lease(&s, "t", 2000, server_now(&s), "holder-2000");
    let ids_before = zset(&s, "t:ids");
    let out = yaraus_ok(&["--redis", &url, "init", "--max", "1023"]);
    // What it removes is said on stderr, the report on stdout.
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{out:#?}");
    assert!(
        lines[0].ends_with(" removing ids 1024..2047 from t:ids"),
        "{out:#?}"
    );
    assert_eq!(
        out.stdout.trim_end(),
        "resized t:ids from 1..2047 to 1..1023: 0 ids added, 1024 removed"
    );

    let want: BTreeMap<String, String> = ids_before
        .into_iter()
        .filter(|(m, _)| (1..=1023).any(|n| enc(n) == *m))
        .collect();
    assert_eq!(want.len(), 1023);
    assert_eq!(zset(&s, "t:ids"), want);
    // Owners of removed ids go with them; the others stay.
    assert_eq!(
        hash(&s, "t:clients"),
        BTreeMap::from([("B10".into(), "holder-10".into())])
    );
    let st = hash(&s, "t:stats");
    assert_eq!((st["min"].as_str(), st["max"].as_str()), ("1", "1023"));
}

#[test]
fn init_refuses_to_raise_min_past_a_leased_id_then_does_when_free() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init"]);
    let now = server_secs(&s) as f64;
    lease(&s, "t", 5, now + 600.0, "holder-5");

    let before = s.snapshot();
    let out = yaraus(&["--redis", &url, "init", "--min", "10", "--max", "1023"]);
    assert_eq!(out.code, Some(125), "{out:#?}");
    let line = out.one_line();
    assert!(line.contains("refusing") && line.contains("id 5"), "{line}");
    assert_eq!(s.snapshot(), before, "a refused --min change changed Redis");

    lease(&s, "t", 5, now - 1.0, "holder-5");
    yaraus_ok(&["--redis", &url, "init", "--min", "10", "--max", "1023"]);
    let ids = zset(&s, "t:ids");
    let want: BTreeSet<String> = (10..=1023).map(enc).collect();
    assert_eq!(ids.keys().cloned().collect::<BTreeSet<_>>(), want);
    assert!(hash(&s, "t:clients").is_empty());
    let st = hash(&s, "t:stats");
    assert_eq!((st["min"].as_str(), st["max"].as_str()), ("10", "1023"));
}

/// An init stopped after resize.lua recorded the new range, before its
/// chunks removed (or added) the ids: the pool holds more (or fewer) ids
/// than its range, and the next init finishes the job instead of saying
/// "already initialized".
#[test]
fn an_init_stopped_after_its_decision_is_finished_by_the_next() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init", "--max", "20"]);
    let _: () = s.query(&["HSET", "t:stats", "min", "1", "max", "10"]);
    let out = yaraus_ok(&["--redis", &url, "init", "--max", "10"]);
    assert!(
        out.stderr.contains("removing ids 11..20 from t:ids"),
        "{out:#?}"
    );
    let want: BTreeSet<String> = (1..=10).map(enc).collect();
    assert_eq!(zset(&s, "t:ids").into_keys().collect::<BTreeSet<_>>(), want);

    let _: () = s.query(&["HSET", "t:stats", "max", "15"]);
    let out = yaraus_ok(&["--redis", &url, "init", "--max", "15"]);
    assert!(out.stdout.contains("5 ids added"), "{out:#?}");
    let want: BTreeSet<String> = (1..=15).map(enc).collect();
    assert_eq!(zset(&s, "t:ids").into_keys().collect::<BTreeSet<_>>(), want);
}

#[test]
fn init_rejects_empty_and_negative_ranges_without_writing() {
    let s = RedisServer::start();
    yaraus_ok(&["--redis", &s.url_ns("t"), "init"]);
    let before = s.snapshot();
    // On the existing pool and on a namespace without one.
    for ns in ["t", "fresh"] {
        let url = s.url_ns(ns);
        for (args, names) in [
            (vec!["init", "--min", "5", "--max", "4"], "greater than"),
            (vec!["init", "--max", "0"], "greater than"),
            (vec!["init", "--min", "-1"], "-1"),
            (vec!["init", "--max", "-5"], "-5"),
            // clap reads "-1023" as the short flags -1 -0 -2 -3 and names
            // the first; cli.rs would need allow_negative_numbers to say more.
            (vec!["init", "--min", "1", "--max", "-1023"], "'-1"),
        ] {
            let mut full = vec!["--redis", url.as_str()];
            full.extend(&args);
            let out = yaraus(&full);
            assert_eq!(out.code, Some(2), "{args:?}: {out:#?}");
            let line = out.one_line();
            assert!(line.contains(names), "{args:?}: {line}");
            assert!(out.stdout.is_empty(), "{out:#?}");
        }
    }
    assert_eq!(s.snapshot(), before);
}
