//! `yaraus init`, `stats` and `list` against real redis-server processes.
//!
//! Leases are mostly written by hand (ZADD/HSET with expiries relative to the
//! server's `TIME`), so that every figure the commands print has a value the
//! test knows in advance. Where a figure depends on when the command read the
//! clock, the test brackets that instant with `TIME` before and after the
//! command and checks the figure lies within the bracket.
//!
//! # Layout
//!
//! This file holds the helpers: yaraus run to its end, a spawned yaraus
//! killed with a failing test, leases written by hand, the pool's keys read
//! back, and the Go tool's `stats` fields.
//!
//! * `init.rs`: creating, adopting, growing and shrinking a pool, 2^22 ids
//!   included, and an init interrupted half-way.
//! * `race.rs`: two inits racing, stepped through their scripts, and an id
//!   missing from inside the recorded range put back.
//! * `stats.rs`: the JSON figures against a known history and the server's
//!   clock.
//! * `prometheus.rs`: the Prometheus text format, read strictly, against
//!   the JSON.
//! * `list.rs`: every id in order, as JSON and as a table, 2^22 of them,
//!   a Go-layout pool with gaps, and a reader that closes the pipe.
//! * `using.rs`: `list --using` and `stats` by a range query on the score,
//!   against the walk of the whole pool.
//! * `shards.rs`: a pool split by `init --shards N`: its keys, a full shard
//!   passed over, `stats` and `list` over the shards, resizing, wake-ups,
//!   older clients refused, bad shard counts.
//! * `stalls.rs`: `list` through a stop of its own process, a reader that
//!   pauses, and a server that stops answering.
//! * `renewal.rs`: the renewal script on a pool whose keys were deleted or
//!   replaced by keys of another type.
//! * `mixed.rs`: `yaraus run`s and clients of the Go tool's protocol
//!   churning through one small pool, their uses of each id never
//!   overlapping.

use crate::common;

mod init;
mod list;
mod mixed;
mod prometheus;
mod race;
mod renewal;
mod shards;
mod stalls;
mod stats;
mod using;

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

/// `init`'s report: one line on stdout, where a script reads a command's
/// result and `--quiet` leaves it, with nothing on stderr.
fn init_report(out: &Output) -> &str {
    assert_eq!(out.stderr, "", "init logged: {out:#?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "not one line on stdout: {out:#?}");
    lines[0]
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

/// The arguments of a quiet `yaraus run` on `url` that starts its command
/// at once (`--no-safeguards --delay 0`), followed by `rest` (more options,
/// `--`, the command).
fn quick_run<'a>(url: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "-q",
        "--redis",
        url,
        "run",
        "--no-safeguards",
        "--delay",
        "0",
    ];
    args.extend_from_slice(rest);
    args
}

/// A spawned yaraus that is SIGKILLed if the test fails while it runs.
struct Spawned(Option<Child>);

impl Spawned {
    /// `yaraus ARGS` with stdin closed and both outputs piped.
    fn piped(args: &[&str]) -> Spawned {
        Spawned(Some(
            common::yaraus()
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn yaraus"),
        ))
    }

    /// Everything on the piped stderr, to its end.
    fn stderr(&mut self) -> String {
        let mut stderr = String::new();
        self.child()
            .stderr
            .take()
            .expect("a piped stderr")
            .read_to_string(&mut stderr)
            .expect("read stderr");
        stderr
    }

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
