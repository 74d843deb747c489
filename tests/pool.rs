//! `yaraus init`, `stats` and `list` against real redis-server processes.
//!
//! Leases are mostly written by hand (ZADD/HSET with expiries relative to the
//! server's `TIME`), so that every figure the commands print has a value the
//! test knows in advance. Where a figure depends on when the command read the
//! clock, the test brackets that instant with `TIME` before and after the
//! command and checks the figure lies within the bracket.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant, UNIX_EPOCH};

use common::pool::{enc, server_now};
use common::{Output, RedisServer, wait_until};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value as Json;

/// 2^22 ids: the size the issue requires `init` and `list` to handle.
const BIG: u64 = 4_194_303;
/// Upper bound on any single yaraus invocation before the test gives up.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// The 2^22-id commands run a debug binary; give them room.
const BIG_TIMEOUT: Duration = Duration::from_secs(300);

// ----- helpers -------------------------------------------------------------

/// What a finished yaraus process left behind.
trait OneLine {
    fn one_line(&self) -> &str;
}

impl OneLine for Output {
    /// The one line on stderr; panics if there are zero or several.
    fn one_line(&self) -> &str {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "expected exactly one line on stderr: {self:#?}"
        );
        lines[0]
    }
}

/// Runs yaraus with `args` and waits for it (SIGKILL + panic after `timeout`).
fn yaraus_for(args: &[&str], timeout: Duration) -> Output {
    common::run_yaraus(args, &[], timeout)
}

fn yaraus(args: &[&str]) -> Output {
    yaraus_for(args, COMMAND_TIMEOUT)
}

/// Runs yaraus and insists on exit status 0.
fn yaraus_ok(args: &[&str]) -> Output {
    let out = yaraus(args);
    assert_eq!(out.code, Some(0), "yaraus {args:?} failed: {out:#?}");
    out
}

/// A spawned yaraus that is SIGKILLed if the test fails while it runs.
struct Spawned(Option<Child>);

impl Spawned {
    fn child(&mut self) -> &mut Child {
        self.0.as_mut().expect("child")
    }

    /// Waits for the exit status (panics after `timeout`).
    fn wait(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let child = self.child();
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "yaraus did not exit within {timeout:?}"
            );
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The server's clock, whole seconds (rounded down).
fn server_secs(s: &RedisServer) -> u64 {
    let (secs, _): (u64, u64) = s.query(&["TIME"]);
    secs
}

/// Writes a lease by hand, as a client of the Go tool's layout would:
/// score = expiry (Unix seconds), owner in `ns:clients`.
fn lease(s: &RedisServer, ns: &str, id: u64, expiry: f64, owner: &str) {
    let (ids, member) = (format!("{ns}:ids"), enc(id));
    let old: Option<f64> = s.query(&["ZSCORE", &ids, &member]);
    assert!(old.is_some(), "id {id} is not in the pool {ids}");
    let _: i64 = s.query(&["ZADD", &ids, "XX", &format!("{expiry}"), &member]);
    let _: i64 = s.query(&["HSET", &format!("{ns}:clients"), &member, owner]);
}

/// Every member of `ns:ids` with its score, as Redis prints the score.
fn zset(s: &RedisServer, key: &str) -> BTreeMap<String, String> {
    let flat: Vec<(String, String)> = s.query(&["ZRANGE", key, "0", "-1", "WITHSCORES"]);
    flat.into_iter().collect()
}

fn hash(s: &RedisServer, key: &str) -> BTreeMap<String, String> {
    s.query(&["HGETALL", key])
}

fn keys(s: &RedisServer) -> BTreeSet<String> {
    s.query::<Vec<String>>(&["KEYS", "*"]).into_iter().collect()
}

fn set_of(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// RFC 3339 with milliseconds, UTC, as `list` prints `expire_at`.
fn rfc3339(secs: f64) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_secs_f64(secs)).to_string()
}

fn parse_json(text: &str) -> Json {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// The 13 fields of the Go tool's `stats`.
const GO_STATS_FIELDS: [&str; 13] = [
    "client_id_count",
    "client_get_id_count",
    "client_get_id_success",
    "get_id_no_available_id",
    "extend_ttl_count",
    "extend_ttl_success",
    "extend_ttl_ownership_error",
    "extend_ttl_expire_warning",
    "unusing_ids",
    "using_ids",
    "using_ttl_max",
    "using_ttl_mid",
    "using_ttl_min",
];

/// `yaraus stats` as JSON, checked to carry every Go field as a number.
fn stats_json(url: &str) -> serde_json::Map<String, Json> {
    let out = yaraus_ok(&["--redis", url, "stats"]);
    let Json::Object(map) = parse_json(&out.stdout) else {
        panic!("stats is not a JSON object:\n{}", out.stdout);
    };
    for field in GO_STATS_FIELDS {
        assert!(
            map.get(field).is_some_and(Json::is_number),
            "stats lacks the numeric field {field}:\n{}",
            out.stdout
        );
    }
    map
}

fn int(map: &serde_json::Map<String, Json>, field: &str) -> i64 {
    map[field]
        .as_i64()
        .unwrap_or_else(|| panic!("{field} is not an integer: {}", map[field]))
}

fn num(map: &serde_json::Map<String, Json>, field: &str) -> f64 {
    map[field].as_f64().expect("a number")
}

/// Asserts `lo - 0.002 <= value <= hi + 0.002` (the output is rounded to ms).
fn assert_within(what: &str, value: f64, lo: f64, hi: f64) {
    assert!(
        value >= lo - 0.002 && value <= hi + 0.002,
        "{what} = {value}, expected within [{lo}, {hi}]"
    );
}

// ----- init ----------------------------------------------------------------

#[test]
fn init_creates_1_to_1023_and_is_idempotent() {
    let s = RedisServer::start();
    let url = s.url_ns("t");

    let out = yaraus_ok(&["--redis", &url, "init"]);
    let line = out.one_line();
    assert!(
        line.contains("initialized") && !line.contains("already"),
        "{line}"
    );
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
    assert!(out.one_line().contains("already initialized"), "{out:#?}");
    assert_eq!(s.snapshot(), before, "a second init changed Redis");
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
    assert!(out.one_line().contains("already initialized"), "{out:#?}");
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
    assert!(out.one_line().contains("initialized"), "{out:#?}");
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
    let line = out.one_line();
    assert!(line.contains("1024 ids added"), "{line}");

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
    assert!(out.one_line().contains("already initialized"), "{out:#?}");
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
    assert!(out.one_line().contains("1024 removed"), "{out:#?}");

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

// ----- stats ---------------------------------------------------------------

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
        yaraus_ok(&[
            "-q",
            "--redis",
            &url,
            "run",
            "--no-safeguards",
            "--delay",
            "0",
            "--",
            "true",
        ]);
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
    let out = yaraus(&[
        "-q",
        "--redis",
        &url,
        "run",
        "--no-safeguards",
        "--delay",
        "0",
        "--wait",
        "0",
        "--",
        "true",
    ]);
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
            .args([
                "-q",
                "--redis",
                &url,
                "run",
                "--no-safeguards",
                "--delay",
                "0",
            ])
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
    let mut stderr = String::new();
    run.child()
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
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

/// One sample of the Prometheus text format: name, labels, value.
type Sample = (String, BTreeMap<String, String>, f64);

/// A strict reader of the Prometheus text exposition format (0.0.4): every
/// line is a `# HELP`, a `# TYPE`, another comment, blank, or a sample
/// `name{label="value",...} value [timestamp]`; a metric's TYPE comes before
/// its samples and at most once; samples of one metric are contiguous.
fn parse_prometheus(text: &str) -> (Vec<Sample>, BTreeMap<String, String>) {
    fn is_name(s: &str, colon: bool) -> bool {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || (colon && c == ':'))
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':'))
    }
    fn value(s: &str) -> Option<f64> {
        match s {
            "+Inf" => Some(f64::INFINITY),
            "-Inf" => Some(f64::NEG_INFINITY),
            "NaN" => Some(f64::NAN),
            _ => s.parse().ok(),
        }
    }
    assert!(
        text.ends_with('\n'),
        "the exposition must end with a newline"
    );
    let mut samples = Vec::new();
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut helps: BTreeSet<String> = BTreeSet::new();
    let mut finished: BTreeSet<String> = BTreeSet::new();
    let mut current: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        let bad = |why: &str| -> ! { panic!("line {}: {why}: {line:?}\n{text}", n + 1) };
        if line.trim().is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            let mut words = rest.trim_start().splitn(3, ' ');
            match words.next() {
                Some("HELP") => {
                    let name = words.next().unwrap_or_else(|| bad("HELP without a name"));
                    if !is_name(name, true) || !helps.insert(name.to_string()) {
                        bad("bad or repeated HELP");
                    }
                }
                Some("TYPE") => {
                    let name = words.next().unwrap_or_else(|| bad("TYPE without a name"));
                    let kind = words.next().unwrap_or_else(|| bad("TYPE without a type"));
                    if !is_name(name, true)
                        || !["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind)
                    {
                        bad("bad TYPE");
                    }
                    if types.insert(name.into(), kind.into()).is_some() || finished.contains(name) {
                        bad("TYPE repeated, or after the metric's samples");
                    }
                }
                _ => {} // a plain comment
            }
            continue;
        }
        let (name, rest) = match line.find(['{', ' ']) {
            Some(i) => line.split_at(i),
            None => bad("a sample without a value"),
        };
        if !is_name(name, true) {
            bad("bad metric name");
        }
        let mut labels = BTreeMap::new();
        let rest = if let Some(body) = rest.strip_prefix('{') {
            let mut chars = body.char_indices().peekable();
            let end;
            loop {
                // label name
                let start = chars
                    .peek()
                    .map(|&(i, _)| i)
                    .unwrap_or_else(|| bad("unclosed {"));
                if body[start..].starts_with('}') {
                    end = start + 1;
                    break;
                }
                let eq = body[start..]
                    .find('=')
                    .unwrap_or_else(|| bad("label without ="))
                    + start;
                let lname = &body[start..eq];
                if !is_name(lname, false) {
                    bad("bad label name");
                }
                while chars.peek().is_some_and(|&(i, _)| i <= eq) {
                    chars.next();
                }
                if chars.next().map(|(_, c)| c) != Some('"') {
                    bad("label value not quoted");
                }
                let mut lvalue = String::new();
                loop {
                    match chars.next() {
                        Some((_, '\\')) => match chars.next() {
                            Some((_, '\\')) => lvalue.push('\\'),
                            Some((_, '"')) => lvalue.push('"'),
                            Some((_, 'n')) => lvalue.push('\n'),
                            _ => bad("bad escape in a label value"),
                        },
                        Some((_, '"')) => break,
                        Some((_, c)) => lvalue.push(c),
                        None => bad("unterminated label value"),
                    }
                }
                if labels.insert(lname.to_string(), lvalue).is_some() {
                    bad("repeated label");
                }
                match chars.next() {
                    Some((_, ',')) => continue,
                    Some((i, '}')) => {
                        end = i + 1;
                        break;
                    }
                    _ => bad("expected , or } after a label"),
                }
            }
            &body[end..]
        } else {
            rest
        };
        let mut fields = rest.split_ascii_whitespace();
        let v = fields
            .next()
            .and_then(value)
            .unwrap_or_else(|| bad("bad sample value"));
        if let Some(ts) = fields.next() {
            if ts.parse::<i64>().is_err() {
                bad("bad timestamp");
            }
        }
        if fields.next().is_some() || !rest.starts_with(' ') {
            bad("garbage around the value");
        }
        if current.as_deref() != Some(name) {
            if let Some(prev) = current.take() {
                finished.insert(prev);
            }
            if finished.contains(name) {
                bad("samples of one metric are not contiguous");
            }
            current = Some(name.to_string());
        }
        samples.push((name.to_string(), labels, v));
    }
    (samples, types)
}

#[test]
fn stats_prometheus_parses_and_matches_json() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init", "--max", "10"]);
    yaraus_ok(&[
        "-q",
        "--redis",
        &url,
        "run",
        "--no-safeguards",
        "--delay",
        "0",
        "--",
        "true",
    ]);
    let base = server_secs(&s) as f64;
    for (id, ttl) in [(2, 100.0), (5, 250.0), (7, 3600.0)] {
        lease(&s, "t", id, base + ttl, &format!("c{id}"));
    }
    let _: i64 = s.query(&[
        "HSET",
        "t:stats",
        "extend_ttl_count",
        "12",
        "extend_ttl_success",
        "9",
    ]);
    let _: i64 = s.query(&["HSET", "t:stats", "extend_ttl_ownership_error", "2"]);
    let _: i64 = s.query(&["HSET", "t:stats", "extend_ttl_expire_warning", "1"]);

    let json = stats_json(&url);
    let out = yaraus_ok(&["--redis", &url, "stats", "--format", "prometheus"]);
    let (samples, types) = parse_prometheus(&out.stdout);
    println!("{}", out.stdout);

    let mut found = BTreeSet::new();
    for (name, labels, value) in &samples {
        assert_eq!(
            labels,
            &BTreeMap::from([("pool".to_string(), "t:ids".to_string())]),
            "{name}"
        );
        let field = name
            .strip_prefix("yaraus_")
            .unwrap_or_else(|| panic!("{name} lacks the yaraus_ prefix"));
        let (field, kind) = match field.strip_suffix("_total") {
            Some(f) => (f, "counter"),
            None => (field, "gauge"),
        };
        assert_eq!(
            types.get(name).map(String::as_str),
            Some(kind),
            "TYPE of {name}"
        );
        assert!(found.insert(field.to_string()), "{field} appears twice");
        let want = num(&json, field);
        if field.starts_with("using_ttl") {
            // Two reads of the clock, a moment apart.
            assert!((value - want).abs() < 5.0, "{name} {value} vs JSON {want}");
        } else {
            assert_eq!(*value, want, "{name} vs JSON {field}");
        }
    }
    let mut want: BTreeSet<String> = GO_STATS_FIELDS.iter().map(|f| f.to_string()).collect();
    want.insert("wait_shortfall".into());
    assert_eq!(found, want, "every Go figure and wait_shortfall, once");
    assert_eq!(num(&json, "extend_ttl_count"), 12.0);
    assert_eq!(num(&json, "client_get_id_success"), 1.0);
    assert_eq!(num(&json, "using_ids"), 3.0);
}

// ----- list ----------------------------------------------------------------

/// The fields of one `list` entry, checked to be exactly the documented five.
fn entry_fields(e: &Json) -> (Option<String>, u64, String, bool, f64) {
    let obj = e
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {e}"));
    let names: BTreeSet<&str> = obj.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        BTreeSet::from(["client_id", "id", "expire_at", "using", "ttl"]),
        "{e}"
    );
    (
        obj["client_id"].as_str().map(str::to_string),
        obj["id"].as_u64().expect("id"),
        obj["expire_at"].as_str().expect("expire_at").to_string(),
        obj["using"].as_bool().expect("using"),
        obj["ttl"].as_f64().expect("ttl"),
    )
}

#[test]
fn list_json_has_every_id_in_order_with_its_lease() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init", "--max", "20"]);
    let base = server_secs(&s) as f64;
    let leases: BTreeMap<u64, (f64, &str)> = BTreeMap::from([
        (3, (base + 100.25, "host-a-1.000-1")),
        (11, (base + 5000.5, "host-b-2.000-2")),
        (20, (base + 30.0, "host-c-3.000-3")),
        (8, (base - 60.75, "host-d-released")), // held once, free now
    ]);
    for (&id, &(score, owner)) in &leases {
        lease(&s, "t", id, score, owner);
    }

    let t0 = server_now(&s);
    let out = yaraus_ok(&["--redis", &url, "list"]);
    let t1 = server_now(&s);
    let Json::Array(entries) = parse_json(&out.stdout) else {
        panic!("not an array:\n{}", out.stdout)
    };
    assert_eq!(entries.len(), 20);
    for (i, e) in entries.iter().enumerate() {
        let (client, id, expire_at, using, ttl) = entry_fields(e);
        assert_eq!(id, i as u64 + 1, "id order");
        match leases.get(&id) {
            Some(&(score, owner)) if score > t0 => {
                assert_eq!(client.as_deref(), Some(owner), "{e}");
                assert!(using, "{e}");
                assert_eq!(expire_at, rfc3339(score), "{e}");
                assert_within(&format!("ttl of {id}"), ttl, score - t1, score - t0);
            }
            Some(&(score, owner)) => {
                assert_eq!(client.as_deref(), Some(owner), "{e}");
                assert!(!using, "{e}");
                assert_eq!(expire_at, rfc3339(score), "{e}");
                assert_eq!(ttl, 0.0, "{e}");
            }
            None => {
                assert_eq!(client, None, "{e}");
                assert!(!using, "{e}");
                assert_eq!(expire_at, "1970-01-01T00:00:00.000Z", "{e}");
                assert_eq!(ttl, 0.0, "{e}");
            }
        }
    }

    // --using keeps exactly the leased ones, still in id order.
    let out = yaraus_ok(&["--redis", &url, "list", "--using"]);
    let Json::Array(using) = parse_json(&out.stdout) else {
        panic!("not an array:\n{}", out.stdout)
    };
    let ids: Vec<u64> = using.iter().map(|e| entry_fields(e).1).collect();
    let t1 = server_now(&s);
    let expected: Vec<u64> = leases
        .iter()
        .filter(|(_, (score, _))| *score > t1)
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(ids, expected);
    assert!(using.iter().all(|e| entry_fields(e).3));

    // list only reads.
    let before = s.snapshot();
    yaraus_ok(&["--redis", &url, "list"]);
    assert_eq!(s.snapshot(), before);
}

#[test]
fn list_table_has_a_header_and_one_row_per_id() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init", "--max", "12"]);
    let base = server_secs(&s) as f64;
    lease(&s, "t", 4, base + 90.0, "host-x-1.000-4");
    lease(&s, "t", 12, base - 1.0, "host-y-old");

    let out = yaraus_ok(&["--redis", &url, "list", "--format", "table"]);
    let mut lines = out.stdout.lines();
    let header: Vec<&str> = lines.next().expect("a header").split_whitespace().collect();
    assert_eq!(header, ["ID", "USING", "TTL", "EXPIRE_AT", "CLIENT_ID"]);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 12, "{}", out.stdout);
    for (i, row) in rows.iter().enumerate() {
        let id = i as u64 + 1;
        assert_eq!(row.len(), 5, "{row:?}");
        assert_eq!(row[0], id.to_string());
        let ttl: f64 = row[2].parse().expect("ttl");
        match id {
            4 => {
                assert_eq!((row[1], row[4]), ("yes", "host-x-1.000-4"));
                assert!(ttl > 80.0 && ttl <= 90.0, "{row:?}");
                assert_eq!(row[3], rfc3339(base + 90.0));
            }
            12 => {
                assert_eq!((row[1], row[4]), ("no", "host-y-old"));
                assert_eq!(ttl, 0.0);
                assert_eq!(row[3], rfc3339(base - 1.0));
            }
            _ => {
                assert_eq!((row[1], row[4]), ("no", "-"));
                assert_eq!(ttl, 0.0);
                assert_eq!(row[3], "1970-01-01T00:00:00.000Z");
            }
        }
    }
}

#[test]
fn list_of_2_22_ids_is_complete() {
    let s = RedisServer::start();
    let url = s.url_ns("big");
    let started = Instant::now();
    let out = yaraus_for(
        &["-q", "--redis", &url, "init", "--max", "4194303"],
        BIG_TIMEOUT,
    );
    assert_eq!(out.code, Some(0), "{out:#?}");
    let init_took = started.elapsed();
    assert_eq!(s.query::<u64>(&["ZCARD", "big:ids"]), BIG);
    let base = server_secs(&s) as f64;
    lease(&s, "big", BIG, base + 600.0, "holder-of-the-last");

    let started = Instant::now();
    let mut list = Spawned(Some(
        common::yaraus()
            .args(["--redis", &url, "list"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn yaraus list"),
    ));
    let stdout = list.child().stdout.take().unwrap();
    let mut lines = BufReader::with_capacity(1 << 20, stdout).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "[");
    let (mut count, mut first, mut last) = (0u64, String::new(), String::new());
    let mut closing = None;
    for line in lines {
        let line = line.unwrap();
        if line == "]" {
            closing = Some(line);
            continue;
        }
        assert!(
            closing.is_none(),
            "output after the closing bracket: {line}"
        );
        count += 1;
        // Cheap order check on every line; full parse of the first and last.
        let want = format!("\"id\":{count},");
        assert!(
            line.contains(&want),
            "entry {count} is not id {count}: {line}"
        );
        if count == 1 {
            first = line.clone();
        }
        last = line;
    }
    let status = list.wait(BIG_TIMEOUT);
    let list_took = started.elapsed();
    let mut stderr = String::new();
    list.child()
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    println!(
        "2^22 ids: init {init_took:?}, list {list_took:?} wall (debug binary), {count} entries"
    );
    assert!(status.success(), "list failed: {stderr}");
    assert!(closing.is_some(), "the JSON array is not closed");
    assert_eq!(count, BIG);

    let first = parse_json(first.trim_end_matches(','));
    let (client, id, expire_at, using, ttl) = entry_fields(&first);
    assert_eq!((client, id, using, ttl), (None, 1, false, 0.0));
    assert_eq!(expire_at, "1970-01-01T00:00:00.000Z");
    let last = parse_json(&last);
    let (client, id, expire_at, using, ttl) = entry_fields(&last);
    assert_eq!(client.as_deref(), Some("holder-of-the-last"));
    assert_eq!((id, using), (BIG, true));
    assert_eq!(expire_at, rfc3339(base + 600.0));
    assert!(ttl > 0.0 && ttl <= 600.0, "{ttl}");
}

#[test]
fn list_and_stats_read_a_go_layout_pool_with_gaps() {
    // The Go tool's layout: members ZADDed by hand, no min/max in ns:stats
    // (no ns:stats at all), ids with gaps.
    let s = RedisServer::start();
    let url = s.url_ns("go");
    let base = server_secs(&s) as f64;
    let present = [2u64, 3, 9, 17, 100, 4000];
    for &n in &present {
        let _: i64 = s.query(&["ZADD", "go:ids", "0", &enc(n)]);
    }
    let _: i64 = s.query(&["ZADD", "go:ids", &format!("{}", base + 300.0), &enc(17)]);
    let _: i64 = s.query(&["HSET", "go:clients", &enc(17), "go-host-1.000-1"]);
    let before = s.snapshot();

    let out = yaraus_ok(&["--redis", &url, "list"]);
    let Json::Array(entries) = parse_json(&out.stdout) else {
        panic!("not an array:\n{}", out.stdout)
    };
    let ids: Vec<u64> = entries.iter().map(|e| entry_fields(e).1).collect();
    assert_eq!(ids, present);
    for e in &entries {
        let (client, id, _, using, _) = entry_fields(e);
        assert_eq!(using, id == 17, "{e}");
        assert_eq!(client.is_some(), id == 17, "{e}");
    }
    let table = yaraus_ok(&["--redis", &url, "list", "--format", "table"]);
    assert_eq!(table.stdout.lines().count(), 1 + present.len());

    let st = stats_json(&url);
    assert_eq!(int(&st, "using_ids"), 1);
    assert_eq!(int(&st, "unusing_ids"), 5);
    assert_eq!(int(&st, "client_id_count"), 0);
    assert_eq!(s.snapshot(), before, "list and stats must not write");
}

#[test]
fn list_to_a_closed_pipe_is_not_an_error() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    // Far more output than a pipe buffers.
    yaraus_ok(&["-q", "--redis", &url, "init", "--max", "100000"]);
    for format in ["json", "table"] {
        let mut list = Spawned(Some(
            common::yaraus()
                .args(["--redis", &url, "list", "--format", format])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn yaraus list"),
        ));
        // `| head -1`: read one line, then close the pipe.
        let stdout = list.child().stdout.take().unwrap();
        let mut first = String::new();
        BufReader::new(stdout).read_line(&mut first).unwrap();
        assert!(!first.is_empty());
        let status = list.wait(COMMAND_TIMEOUT);
        let mut stderr = String::new();
        list.child()
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert_eq!(
            status.code(),
            Some(0),
            "{format}: {status:?}, stderr: {stderr}"
        );
        assert_eq!(stderr, "", "{format}");
    }
}
