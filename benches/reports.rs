//! What the pool reports cost against the pool's size: `list`, `list --using` (3 ids leased), `stats` and `stats --format
//! prometheus`, each a whole `yaraus` process (the release build cargo
//! bench makes), timed from spawn to exit, for pools of 2^10, 2^12, …, 2^22
//! ids made by `yaraus init --max`.
//!
//! One pool at a time (the server holds one, then FLUSHALL), and within
//! it the four commands take turns run after run, so that a machine whose
//! load drifts slows them alike. Output goes to /dev/null: the figure is
//! what yaraus and Redis spend, not what a terminal does. Each pool's
//! `list` and `list --using` are also run once under `/usr/bin/time -f %M`
//! (when installed) for their peak resident memory: `list` streams its rows
//! and must not grow with the pool.
//!
//! Figures go to stdout as a Markdown table (median and p90) and to
//! `docs/figures/reports_pool_size.csv` (`series,x,y`: the command, the
//! pool's size in ids, the median in ms), for the curve of docs/benchmarks.md.
//! Nothing is asserted: speed is reported, never tested.
//!
//! `cargo bench --bench reports -- --runs N --max-exp E` (defaults 7 and 22).

#[path = "../tests/common/mod.rs"]
mod common;
mod figures;

use common::RedisServer;
use figures::{option, percentile, start_redis};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The commands timed, by their series name in the CSV.
const SERIES: [(&str, &[&str]); 4] = [
    ("list", &["list"]),
    ("list --using", &["list", "--using"]),
    ("stats", &["stats"]),
    (
        "stats --format prometheus",
        &["stats", "--format", "prometheus"],
    ),
];

/// Ids leased in every pool: `list --using` has this many rows.
const LEASED: [f64; 3] = [0.0, 0.5, 1.0];

/// One `yaraus --redis URL ARGS`, stdout to /dev/null; its wall time.
fn timed(url: &str, args: &[&str]) -> Duration {
    let started = Instant::now();
    let status = common::yaraus()
        .args(["--timeout", "30s", "--redis", url])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("spawn yaraus");
    let took = started.elapsed();
    assert!(status.success(), "yaraus {args:?} failed: {status}");
    took
}

/// The peak resident memory of `yaraus --redis URL ARGS`, in KiB, by
/// `/usr/bin/time -f %M`; `None` when it is not installed.
fn max_rss_kib(url: &str, args: &[&str]) -> Option<u64> {
    let out = common::command("/usr/bin/time")
        .args(["-f", "%M", env!("CARGO_BIN_EXE_yaraus")])
        .args(["--timeout", "30s", "--redis", url])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .ok()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr.lines().last()?.trim().parse().ok()
}

/// A pool of `size` ids in namespace `ns`, three of them leased for an
/// hour (the first, the middle and the last id, by three holders).
fn make_pool(s: &RedisServer, ns: &str, size: u64) -> String {
    let url = s.url_ns(ns);
    let max = size.to_string();
    let out = common::yaraus()
        .args(["-q", "--redis", &url, "init", "--max", &max])
        .output()
        .expect("run yaraus init");
    assert!(out.status.success(), "init {size} failed: {out:?}");
    let (secs, _): (u64, u64) = s.query(&["TIME"]);
    for (i, at) in LEASED.iter().enumerate() {
        let id = 1 + ((size - 1) as f64 * at) as u64;
        let member = common::pool::enc(id);
        let expiry = (secs + 3600 + i as u64).to_string();
        let _: i64 = s.query(&["ZADD", &format!("{ns}:ids"), "XX", &expiry, &member]);
        let owner = format!("bench-host-{i}-1.000-{i}");
        let _: i64 = s.query(&["HSET", &format!("{ns}:clients"), &member, &owner]);
    }
    url
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = option(&args, "--runs").unwrap_or(7);
    let max_exp: u32 = option(&args, "--max-exp").unwrap_or(22);
    let server = start_redis(false);
    let mut csv = String::from("series,x,y\n");
    println!("| ids | command | median ms | p90 ms | max RSS |");
    println!("| ---: | --- | ---: | ---: | ---: |");
    for exp in (10..=max_exp).step_by(2) {
        let size = 1u64 << exp;
        let ns = format!("p{exp}");
        let url = make_pool(&server, &ns, size);
        let mut turns: Vec<Vec<Duration>> = vec![Vec::new(); SERIES.len()];
        for _ in 0..runs {
            for ((_, cmd), turns) in SERIES.iter().zip(&mut turns) {
                turns.push(timed(&url, cmd));
            }
        }
        for ((name, cmd), mut turns) in SERIES.iter().zip(turns) {
            turns.sort();
            let median = percentile(&turns, 0.5);
            let rss = match name.starts_with("list") {
                true => max_rss_kib(&url, cmd).map_or("-".into(), |k| format!("{} MiB", k / 1024)),
                false => "-".to_string(),
            };
            println!(
                "| 2^{exp} | `yaraus {}` | {:.1} | {:.1} | {rss} |",
                cmd.join(" "),
                ms(median),
                ms(percentile(&turns, 0.9))
            );
            csv.push_str(&format!("{name},{size},{:.2}\n", ms(median)));
        }
        // The next pool gets the server's memory to itself.
        let _: () = server.query(&["FLUSHALL"]);
    }
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/figures");
    std::fs::create_dir_all(dir).expect("create docs/figures");
    let path = format!("{dir}/reports_pool_size.csv");
    std::fs::write(&path, csv).expect("write the CSV");
    println!("\n(curve data in {path})");
}
