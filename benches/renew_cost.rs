//! What one renewal costs the server, and the floor under it.
//!
//! The measure: 40 `yaraus run --interval 100ms -- sleep 1000` on one
//! redis-server (loopback TCP, no persistence) holding ids of a pool of
//! `init`'s default size (1..1023, `--max` to change it); over a window,
//! the server's CPU (`used_cpu_user + used_cpu_sys` of `INFO cpu`) divided
//! by the renewals it ran (`cmdstat_evalsha` calls, counted from a `CONFIG
//! RESETSTAT` once every run holds its id). That total includes the
//! server's event loop (a wake-up, a read and a write per request, 40
//! processes' worth of cold caches); `usec_per_call` of `EVALSHA` is the
//! script alone, but in wall time: on a loaded machine it also counts the
//! moments the server was descheduled mid-script.
//!
//! Beside it, requests made the same way (40 processes, each one request
//! every 100 ms: `redis-cli -r -1 -i 0.1`), each on a fresh server: the
//! shipped renew.lua itself, then the floor under any renewal: `PING`, a
//! script that returns at once, and the least a renewal could run (`TIME`,
//! `ZADD XX`, one `HINCRBY`, one `HSET`). `--scripts a.lua,b.lua` adds
//! other renewal scripts (same KEYS and ARGV: the previous renew.lua, or
//! one with a line taken out, to price that line).
//!
//! Back to back: each request also sent `--calls` times in a row on one
//! connection, the server's CPU per call. Without the wake-ups and the
//! cold caches, that figure is steady enough on a loaded machine to show
//! a few microseconds saved.
//!
//! `--back-to-back-only` skips the 40 processes: quick, to price lines of
//! `--scripts` one by one.
//!
//! `--instructions`: each request's instructions, counted by callgrind on
//! a redis-server of its own (`instructions.rs`), the one figure a loaded
//! machine does not move: it prices a line to the thousand instructions.
//!
//! `--baseline PATH`: another yaraus binary's `run` measured beside this
//! build's (an A/B: the release build of the commit before a change). The
//! subjects take turns, `--rounds` times (default 3); the table gives each
//! one's median and range. Figures, never assertions.
//!
//! `cargo bench --bench renew_cost -- --window 10 --rounds 3`

#[path = "../tests/common/mod.rs"]
mod common;
// Its percentile of durations is not used: the figures here are medians of rounds.
#[allow(dead_code)]
mod figures;
mod instructions;
// Its count of scripts is not used: the renewals are counted per command here.
#[allow(dead_code)]
mod pool_load;

use common::RedisServer;
use common::spawn::without_yaraus_env;
use figures::{option, start_redis};
use pool_load::{server_cpu, wait_leased};
use std::collections::BTreeMap;
use std::process::{Child, Stdio};
use std::time::Duration;

const RUNS: usize = 40;
const INTERVAL: &str = "100ms";
/// After every process made its first request, before the window: the runs
/// past their lease, each process in its steady rhythm.
const SETTLE: Duration = Duration::from_secs(2);
/// Bound on the 40 runs taking their ids.
const START: Duration = Duration::from_secs(120);

const RENEW: &str = include_str!("../src/lease/renew.lua");
const TRIVIAL: &str = "return 1";
/// The least a renewal could run: the server's time, the score, one
/// counter, one record.
const LEAST: &str = "local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local expiry_ms = now_ms + tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], 'XX', expiry_ms / 1000, ARGV[2])
redis.call('HINCRBY', KEYS[3], 'extend_ttl_count', 1)
redis.call('HSET', KEYS[4], ARGV[2], ARGV[4])
return {1, expiry_ms, now_ms}";

/// What makes the requests.
enum Load {
    /// 40 `yaraus run` of this binary.
    Runs(String),
    /// 40 `redis-cli` sending this script with a renewal's KEYS and ARGV.
    Script(String),
    Ping,
}

struct Subject {
    name: String,
    load: Load,
}

/// One window of one subject.
#[derive(Clone, Copy, Default)]
struct Sample {
    calls: u64,
    cpu_us: f64,
    /// `usec_per_call` of `EVALSHA` (of `PING` for PING).
    usec: f64,
    /// Commands run inside the script, per call.
    inner: f64,
    waits: u64,
    /// Server CPU per call, back to back on one connection.
    warm_us: f64,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let window = Duration::from_secs(option(&args, "--window").unwrap_or(10));
    let rounds: usize = option(&args, "--rounds").unwrap_or(3);
    let max: u64 = option(&args, "--max").unwrap_or(1023);
    let calls: u64 = option(&args, "--calls").unwrap_or(20_000);
    common::tools::require_test_tool("redis-cli", "redis-tools", "it makes the floor's requests");
    let warm_only = args.iter().any(|a| a == "--back-to-back-only");
    let subjects = subjects(&args);
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); subjects.len()];
    for round in 1..=rounds {
        for (subject, out) in subjects.iter().zip(&mut samples) {
            let mut s = match (warm_only, &subject.load) {
                (true, Load::Runs(_)) => continue,
                (true, _) => Sample::default(),
                (false, _) => measure(subject, window, max),
            };
            s.warm_us = back_to_back(subject, max, calls);
            eprintln!(
                "round {round}: {}: {} calls, {:.1} µs of server CPU a call, EVALSHA {:.1} µs, \
                 back to back {:.1} µs",
                subject.name, s.calls, s.cpu_us, s.usec, s.warm_us
            );
            out.push(s);
        }
    }
    report(&subjects, &samples, window, max, calls);
    if args.iter().any(|a| a == "--instructions") {
        count_instructions(&subjects, max, calls.min(5_000));
    }
}

/// Each request's instructions on a redis-server under callgrind (user
/// space: the server's own code and its libraries, not the kernel's).
fn count_instructions(subjects: &[Subject], max: u64, calls: u64) {
    let server = instructions::Callgrind::start();
    init(&server.url(), max);
    let mut conn = server.conn().expect("a connection");
    let mut rows = Vec::new();
    for subject in subjects {
        if let Some(cmd) = request(&subject.load, &mut conn, max) {
            let n = server.per_request(&cmd, calls);
            eprintln!("{}: {n:.0} instructions a request", subject.name);
            rows.push((subject.name.as_str(), n));
        }
    }
    println!(
        "\nInstructions the server ran per request (callgrind, user space), {calls} requests \
         back to back after 100 unmeasured:\n"
    );
    println!("| requests | instructions per request | against renew.lua |");
    println!("| --- | ---: | ---: |");
    let shipped = rows.first().map_or(f64::NAN, |r| r.1);
    for (name, n) in rows {
        println!("| {name} | {n:.0} | {:+.0} |", n - shipped);
    }
}

fn subjects(args: &[String]) -> Vec<Subject> {
    let this = env!("CARGO_BIN_EXE_yaraus").to_string();
    let mut out = vec![Subject {
        name: "renewals of 40 `yaraus run` (this build)".into(),
        load: Load::Runs(this),
    }];
    if let Some(path) = option::<String>(args, "--baseline") {
        out.push(Subject {
            name: format!("renewals of 40 `yaraus run` ({path})"),
            load: Load::Runs(path),
        });
    }
    out.push(script("renew.lua", RENEW.to_string()));
    for path in option::<String>(args, "--scripts")
        .iter()
        .flat_map(|list| list.split(','))
    {
        let source = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        out.push(script(path, source));
    }
    out.push(script("TIME + ZADD XX + HINCRBY + HSET", LEAST.into()));
    out.push(script("`return 1`", TRIVIAL.into()));
    out.push(Subject {
        name: "PING".into(),
        load: Load::Ping,
    });
    out
}

fn script(name: &str, source: String) -> Subject {
    Subject {
        name: name.into(),
        load: Load::Script(source),
    }
}

/// A fresh server with the pool 1..=max.
fn pool(max: u64) -> RedisServer {
    let server = start_redis(false);
    init(&server.url(), max);
    server
}

/// `yaraus init --max MAX` (this build) on `url`.
fn init(url: &str, max: u64) {
    let status = common::yaraus()
        .args(["--quiet", "--redis", url, "init", "--max"])
        .arg(max.to_string())
        .stdout(Stdio::null())
        .status()
        .expect("yaraus init");
    assert!(status.success(), "yaraus init failed");
}

fn measure(subject: &Subject, window: Duration, max: u64) -> Sample {
    let server = pool(max);
    let mut load = start(&server, &subject.load, max);
    std::thread::sleep(SETTLE);
    let _: () = server.query(&["CONFIG", "RESETSTAT"]);
    let cpu0 = server_cpu(&server);
    std::thread::sleep(window);
    let cpu1 = server_cpu(&server);
    let stats = commandstats(&server);
    stop(&mut load, &subject.load);
    let outer = match subject.load {
        Load::Ping => "ping",
        _ => "evalsha",
    };
    let (calls, usec) = stats.get(outer).copied().unwrap_or_default();
    let inner: u64 = stats
        .iter()
        .filter(|(name, _)| {
            !["evalsha", "ping", "info", "config|resetstat"].contains(&name.as_str())
        })
        .map(|(_, (c, _))| c)
        .sum();
    Sample {
        calls,
        cpu_us: (cpu1 - cpu0) * 1e6 / calls.max(1) as f64,
        usec,
        inner: inner as f64 / calls.max(1) as f64,
        waits: stats.get("wait").map_or(0, |s| s.0),
        warm_us: 0.0,
    }
}

/// Starts the 40 processes; returns once each made its first request.
fn start(server: &RedisServer, load: &Load, max: u64) -> Vec<Child> {
    match load {
        Load::Runs(bin) => {
            let children = (0..RUNS).map(|_| run(bin, &server.url())).collect();
            wait_leased(server, RUNS, START);
            children
        }
        Load::Script(source) => {
            let sha: String = server.query(&["SCRIPT", "LOAD", source]);
            let mut conn = server.conn();
            (0..RUNS)
                .map(|i| {
                    let id = hold(&mut conn, max - i as u64, &format!("bench-{i}"));
                    let mut args = vec!["EVALSHA".to_string(), sha.clone()];
                    args.extend(renewal_args(&format!("bench-{i}"), &id));
                    redis_cli(server, &args)
                })
                .collect()
        }
        Load::Ping => (0..RUNS)
            .map(|_| redis_cli(server, &["PING".to_string()]))
            .collect(),
    }
}

fn run(bin: &str, url: &str) -> Child {
    let mut cmd = common::command(bin);
    without_yaraus_env(&mut cmd)
        .args(["--quiet", "--redis", url, "run", "--interval", INTERVAL])
        .args(["--delay", "0s", "--no-safeguards", "--", "sleep", "1000"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn yaraus run")
}

/// `redis-cli` sending `request` every 100 ms until killed.
fn redis_cli(server: &RedisServer, request: &[String]) -> Child {
    let port = server.port().expect("a TCP server").to_string();
    common::command("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port, "-r", "-1", "-i", "0.1"])
        .args(request)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn redis-cli")
}

/// Leases id `n` to `client` by hand for an hour; its member name.
fn hold(conn: &mut redis::Connection, n: u64, client: &str) -> String {
    let digits = n.to_string();
    let id = format!("{}{digits}", (b'A' + digits.len() as u8 - 1) as char);
    let (secs, _): (u64, u64) = redis::cmd("TIME").query(conn).expect("TIME");
    let _: i64 = redis::cmd("ZADD")
        .arg("yaraus:ids")
        .arg("XX")
        .arg(secs + 3600)
        .arg(&id)
        .query(conn)
        .expect("ZADD");
    let _: i64 = redis::cmd("HSET")
        .arg("yaraus:clients")
        .arg(&id)
        .arg(client)
        .query(conn)
        .expect("HSET");
    id
}

/// A subject's request as one connection sends it: PING, or its script
/// (loaded) renewing id `max`, held for it by hand. `None` for the runs.
fn request(load: &Load, conn: &mut redis::Connection, max: u64) -> Option<redis::Cmd> {
    let source = match load {
        Load::Runs(_) => return None,
        Load::Ping => return Some(redis::cmd("PING")),
        Load::Script(source) => source,
    };
    let id = hold(conn, max, "bench-0");
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(source)
        .query(conn)
        .expect("SCRIPT LOAD");
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(sha).arg(renewal_args("bench-0", &id));
    Some(cmd)
}

/// renew.lua's KEYS and ARGV for `client` holding `id`: a 30 s lease, a
/// horizon 30 s ahead, offset 0 ± 1 ms, no step back.
fn renewal_args(client: &str, id: &str) -> Vec<String> {
    let horizon = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis()
        + 30_000;
    let keys = [
        "yaraus:ids",
        "yaraus:clients",
        "yaraus:stats",
        "yaraus:clock",
    ];
    let mut args = vec!["4".to_string()];
    args.extend(keys.map(String::from));
    args.extend([client, id, "30000"].map(String::from));
    args.extend([horizon.to_string(), "0".into(), "1".into(), "0".into()]);
    args
}

fn stop(children: &mut [Child], load: &Load) {
    for child in children.iter_mut() {
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        // A run stops its command and gives its id back on SIGTERM.
        let signal = match load {
            Load::Runs(_) => nix::sys::signal::Signal::SIGTERM,
            _ => nix::sys::signal::Signal::SIGKILL,
        };
        let _ = nix::sys::signal::kill(pid, signal);
    }
    for child in children.iter_mut() {
        let _ = child.wait();
    }
}

/// The request sent `calls` times back to back on one connection: the
/// server's CPU per call, in µs.
fn back_to_back(subject: &Subject, max: u64, calls: u64) -> f64 {
    let server = pool(max);
    let mut conn = server.conn();
    let Some(cmd) = request(&subject.load, &mut conn, max) else {
        return f64::NAN;
    };
    let cpu0 = server_cpu(&server);
    for _ in 0..calls {
        let _: redis::Value = cmd.query(&mut conn).expect("the request");
    }
    (server_cpu(&server) - cpu0) * 1e6 / calls as f64
}

/// `INFO commandstats`: command → (calls, usec_per_call).
fn commandstats(server: &RedisServer) -> BTreeMap<String, (u64, f64)> {
    let info = server.info("commandstats");
    let mut out = BTreeMap::new();
    for line in info.lines() {
        let Some((name, rest)) = line.trim_end().split_once(':') else {
            continue;
        };
        let Some(name) = name.strip_prefix("cmdstat_") else {
            continue;
        };
        let field = |key: &str| {
            rest.split(',')
                .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        out.insert(
            name.to_string(),
            (field("calls") as u64, field("usec_per_call")),
        );
    }
    out
}

fn median(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn report(subjects: &[Subject], samples: &[Vec<Sample>], window: Duration, max: u64, calls: u64) {
    println!(
        "\nServer CPU per request: 40 processes, each one request every {INTERVAL}, on one \
         redis-server with the pool 1..{max}; {window:?} windows, median (range) of {} rounds; \
         back to back: {calls} requests in a row on one connection.\n",
        samples.iter().map(Vec::len).max().unwrap_or(0)
    );
    println!(
        "| requests | server CPU per request | `usec_per_call` (EVALSHA or PING) \
         | commands in the script | back to back |"
    );
    println!("| --- | --- | --- | --- | --- |");
    for (subject, s) in subjects.iter().zip(samples) {
        if s.is_empty() {
            continue;
        }
        // Without windows (`--back-to-back-only`), their columns say so.
        let windowed = s.iter().any(|x| x.calls > 0);
        let shown = |f: fn(&Sample) -> f64, measured: bool| {
            let (mid, lo, hi) = median(s.iter().map(f).collect());
            if !measured || mid.is_nan() {
                return "—".to_string();
            }
            format!("{mid:.1} µs ({lo:.1}–{hi:.1})")
        };
        let (inner, _, _) = median(s.iter().map(|x| x.inner).collect());
        let inner = if windowed {
            format!("{inner:.1}")
        } else {
            "—".to_string()
        };
        let driven = match subject.load {
            Load::Runs(_) => "",
            _ => ", 40 redis-cli",
        };
        println!(
            "| {}{driven} | {} | {} | {inner} | {} |",
            subject.name,
            shown(|x| x.cpu_us, windowed),
            shown(|x| x.usec, windowed),
            shown(|x| x.warm_us, true),
        );
    }
    let waits: Vec<u64> = subjects
        .iter()
        .zip(samples)
        .filter(|(s, _)| matches!(s.load, Load::Runs(_)))
        .flat_map(|(_, s)| s.iter().map(|x| x.waits))
        .collect();
    println!("\nWAIT sent by the runs in the windows (no replicas): {waits:?}");
}
