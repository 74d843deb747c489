//! The majority sequence's benchmark (`scripts/bench.sh` runs it): figures,
//! never assertions, as Markdown tables.
//!
//! In one run, so that the figures compare:
//!
//! 1. `redis-benchmark -c 50 -n 200000 INCR orders` against `yaraus seq
//!    serve` over three redis-servers with `appendonly yes` + `appendfsync
//!    always` (their files in the temporary directory, whose filesystem is
//!    printed), and the same against one redis-server without persistence
//!    (the non-durable single-node ceiling) and one with `appendfsync
//!    always` (the fsync ceiling: what one durable node gives the same
//!    clients; serve cannot beat it, since every id waits for a majority's
//!    fsync that began after its request). Also serve with 200 clients, and
//!    with 50 clients pipelining 16 requests each, to show the batch (and
//!    the rate) growing with the requests outstanding. Ids/s, p50/p99
//!    latency, and the batch sizes from serve's `INFO`; serve at 50 clients
//!    is run again in RESP3 (`redis-benchmark -3`) beside it;
//! 2. the clients sweep (`seq_sweep.rs`): serve, one durable Redis and
//!    one plain Redis at 1 to 1,000 clients and pipelined, interleaved
//!    rounds, medians, and the curve's CSV;
//! 3. `yaraus seq next` as a whole process: p50/p99 wall time;
//! 4. `MajoritySequence::next` through the library, one caller: calls/s.
//!
//! Options: `--requests N` (per redis-benchmark run, default 200000),
//! `--runs N` (seq next processes, default 200), `--seconds S` (library
//! loop, default 5); for the sweep: `--sweep-rounds N` (default 3, 0 to
//! skip it), `--sweep-requests N` (most per run, default 50000), `--csv
//! PATH` (default docs/figures/seq_serve_clients.csv), `--yaraus PATH`
//! (repeated: one more serve series per binary, for an A/B with the one
//! built; in the tables only, not in the CSV), `--sweep-only` (nothing
//! else).

#[path = "../tests/common/mod.rs"]
mod common;
mod figures;
mod seq_sweep;

use common::RedisServer;
use figures::{option, percentile, start_redis};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use yaraus::seq::MajoritySequence;
use yaraus::store::{Quorum, Target};

/// `yaraus seq serve` on a free port; killed when dropped.
struct Serve {
    child: Child,
    port: u16,
}

impl Serve {
    fn start(yaraus: &str, urls: &[String]) -> Serve {
        let mut cmd = Command::new(yaraus);
        // Room for redis-benchmark's 1,000 clients and its own probe.
        cmd.args(["--quiet", "seq", "serve", "--listen", "127.0.0.1:0"])
            .args(["--max-clients", "2000"]);
        for u in urls {
            cmd.args(["--redis", u]);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start yaraus seq serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let port = loop {
            let line = lines
                .next()
                .expect("seq serve exited before listening")
                .unwrap();
            if let Some(rest) = line.split("listening on 127.0.0.1:").nth(1) {
                break rest.split(' ').next().unwrap().parse().unwrap();
            }
        };
        // Keep draining its stderr so that it never blocks on it.
        std::thread::spawn(move || lines.for_each(drop));
        Serve { child, port }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One `redis-benchmark --csv` result.
struct Bench {
    rps: f64,
    p50: f64,
    p99: f64,
}

/// `redis-benchmark -c CLIENTS -n REQUESTS -P PIPELINE --csv INCR KEY`.
fn redis_benchmark(
    port: u16,
    clients: usize,
    pipeline: usize,
    requests: usize,
    key: &str,
) -> Bench {
    redis_benchmark_with(&[], port, clients, pipeline, requests, key)
}

/// [`redis_benchmark`] with `extra` flags first (`-3`: RESP3).
fn redis_benchmark_with(
    extra: &[&str],
    port: u16,
    clients: usize,
    pipeline: usize,
    requests: usize,
    key: &str,
) -> Bench {
    let out = Command::new("redis-benchmark")
        .args(extra)
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(["-c", &clients.to_string(), "-n", &requests.to_string()])
        .args(["-P", &pipeline.to_string()])
        .args(["--csv", "INCR", key])
        .output()
        .expect("redis-benchmark (it comes with redis-server: scripts/install-redis.sh)");
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text
        .lines()
        .find(|l| l.starts_with("\"INCR"))
        .unwrap_or_else(|| panic!("no result from redis-benchmark:\n{text}"));
    let cells: Vec<f64> = row
        .split(',')
        .skip(1)
        .map(|c| c.trim_matches('"').parse().unwrap_or(f64::NAN))
        .collect();
    // "rps","avg","min","p50","p95","p99","max"
    Bench {
        rps: cells[0],
        p50: cells[3],
        p99: cells[5],
    }
}

/// `field` of the `seq_NAME:` line of serve's `INFO sequences`.
fn info_field(port: u16, name: &str, field: &str) -> String {
    let out = Command::new("redis-cli")
        .args(["-p", &port.to_string(), "INFO", "sequences"])
        .output()
        .expect("redis-cli");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.trim().strip_prefix(&format!("seq_{name}:")))
        .and_then(|l| {
            l.split(',')
                .find_map(|kv| kv.strip_prefix(&format!("{field}=")))
                .map(str::to_string)
        })
        .unwrap_or_else(|| "?".into())
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

/// `batch_mean / batch_max` of the sequence `name` on serve.
fn batch(port: u16, name: &str) -> String {
    format!(
        "{} / {}",
        info_field(port, name, "batch_mean"),
        info_field(port, name, "batch_max")
    )
}

/// The filesystem type of `dir` and the device under it (`stat -f` says
/// ext2/ext3 for ext4 too; df names it).
fn filesystem_of(dir: &Path) -> String {
    Command::new("df")
        .args(["--output=fstype,source"])
        .arg(dir)
        .output()
        .ok()
        .and_then(|o| {
            let text = String::from_utf8_lossy(&o.stdout).to_string();
            text.lines()
                .nth(1)
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" on "))
        })
        .unwrap_or_else(|| "?".into())
}

/// The redis-benchmark table: serve at 50 and 200 clients and pipelining,
/// beside the fsync ceiling (`durable`) and one plain redis-server.
fn serve_table(
    serve: &Serve,
    plain: &RedisServer,
    durable: &RedisServer,
    requests: usize,
    tmp: &Path,
) {
    println!("## The majority sequence\n");
    println!(
        "Nodes: 3 redis-servers with appendonly yes + appendfsync always, their AOF in {} \
         ({}); {} cores. `redis-benchmark -c C -n {requests} INCR KEY`.\n",
        tmp.display(),
        filesystem_of(tmp),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("| target | clients | ids/s | p50 ms | p99 ms | batch mean / max |");
    println!("| --- | ---: | ---: | ---: | ---: | --- |");
    let serve50 = redis_benchmark(serve.port, 50, 1, requests, "orders");
    let batch50 = batch(serve.port, "orders");
    let resp3 = redis_benchmark_with(&["-3"], serve.port, 50, 1, requests, "orders-resp3");
    let batch_resp3 = batch(serve.port, "orders-resp3");
    let plain50 = redis_benchmark(plain.port().unwrap(), 50, 1, requests, "orders");
    let fsync50 = redis_benchmark(durable.port().unwrap(), 50, 1, requests, "orders");
    let serve200 = redis_benchmark(serve.port, 200, 1, requests, "orders200");
    let batch200 = batch(serve.port, "orders200");
    let piped = redis_benchmark(serve.port, 50, 16, requests, "orders-piped");
    let batch_piped = batch(serve.port, "orders-piped");
    for (name, clients, b, batch) in [
        (
            "`seq serve`, 3 fsync'ing nodes",
            50,
            &serve50,
            batch50.as_str(),
        ),
        (
            "`seq serve`, 3 fsync'ing nodes, RESP3 (`-3`)",
            50,
            &resp3,
            batch_resp3.as_str(),
        ),
        (
            "`seq serve`, 3 fsync'ing nodes",
            200,
            &serve200,
            batch200.as_str(),
        ),
        (
            "`seq serve`, 3 fsync'ing nodes, `-P 16`",
            50,
            &piped,
            batch_piped.as_str(),
        ),
        (
            "one redis-server, appendfsync always (fsync ceiling)",
            50,
            &fsync50,
            "",
        ),
        ("one redis-server, no persistence", 50, &plain50, ""),
    ] {
        println!(
            "| {name} | {clients} | {:.0} | {:.3} | {:.3} | {batch} |",
            b.rps, b.p50, b.p99
        );
    }
    println!(
        "\n`seq serve` at 50 clients: {:.2}× the plain single-Redis INCR rate, {:.2}× the \
         fsync ceiling; in RESP3 {:.2}× its RESP2 rate.\n",
        serve50.rps / plain50.rps,
        serve50.rps / fsync50.rps,
        resp3.rps / serve50.rps
    );
}

/// The wall time of `runs` `yaraus seq next` processes, sorted.
fn seq_next_times(yaraus: &str, urls: &[String], runs: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let mut cmd = Command::new(yaraus);
        cmd.args(["--quiet", "seq", "next", "bench-next"]);
        for u in urls {
            cmd.args(["--redis", u]);
        }
        let started = Instant::now();
        let out = cmd.output().expect("yaraus seq next");
        times.push(started.elapsed());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    times.sort();
    times
}

/// `MajoritySequence::next` through the library, one caller, for `seconds`:
/// the calls made and the time they took.
fn library_calls(urls: &[String], seconds: u64) -> (u64, Duration) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let targets: Vec<Target> = urls.iter().map(|u| Target::parse(u).unwrap()).collect();
    let mut quorum = Quorum::new(&targets, Duration::from_millis(500), true).unwrap();
    let mut seq = MajoritySequence::new("yaraus:seq:bench-lib");
    rt.block_on(async {
        let started = Instant::now();
        let mut calls = 0u64;
        while started.elapsed() < Duration::from_secs(seconds) {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
            seq.next(&mut quorum, deadline).await.unwrap();
            calls += 1;
        }
        (calls, started.elapsed())
    })
}

/// Every value of the repeated option `name`.
fn options(args: &[String], name: &str) -> Vec<String> {
    args.windows(2)
        .filter(|w| w[0] == name)
        .map(|w| w[1].clone())
        .collect()
}

/// The clients sweep: a serve per binary in `bins` (the one built without
/// any) over `urls`, then the durable and the plain Redis.
fn sweep(args: &[String], urls: &[String], plain: &RedisServer, durable: &RedisServer) {
    let rounds: usize = option(args, "--sweep-rounds").unwrap_or(3);
    if rounds == 0 {
        return;
    }
    let most: usize = option(args, "--sweep-requests").unwrap_or(50_000);
    let csv: String = option(args, "--csv").unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/figures/seq_serve_clients.csv"
        )
        .into()
    });
    // The binary built first (the curve's series, and the ratios), then
    // any other binary given, for an A/B (in the tables, not the curve).
    let mut bins: Vec<(String, String)> = vec![(
        env!("CARGO_BIN_EXE_yaraus").into(),
        "seq serve (3 durable nodes)".into(),
    )];
    for bin in options(args, "--yaraus") {
        let label = format!("seq serve (3 durable nodes) {bin}");
        bins.push((bin, label));
    }
    let serves: Vec<(String, Serve)> = bins
        .iter()
        .map(|(bin, label)| (label.clone(), Serve::start(bin, urls)))
        .collect();
    let mut targets: Vec<seq_sweep::Target> = serves
        .iter()
        .enumerate()
        .map(|(i, (label, s))| seq_sweep::Target {
            label: label.clone(),
            port: s.port,
            curve: i == 0,
        })
        .collect();
    for (label, server) in [
        ("redis appendfsync always", durable),
        ("redis plain", plain),
    ] {
        targets.push(seq_sweep::Target {
            label: label.into(),
            port: server.port().unwrap(),
            curve: true,
        });
    }
    seq_sweep::sweep(
        &targets,
        rounds,
        most,
        Path::new(&csv),
        |port, c, p, n, key| redis_benchmark(port, c, p, n, key).rps,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let requests: usize = option(&args, "--requests").unwrap_or(200_000);
    let runs: usize = option(&args, "--runs").unwrap_or(200);
    let seconds: u64 = option(&args, "--seconds").unwrap_or(5);
    let yaraus = env!("CARGO_BIN_EXE_yaraus");

    let masters: Vec<RedisServer> = (0..3).map(|_| start_redis(true)).collect();
    let plain = start_redis(false);
    let durable = start_redis(true);
    let urls: Vec<String> = masters.iter().map(RedisServer::url).collect();
    let tmp = masters[0].dir().parent().unwrap().to_path_buf();
    if args.iter().any(|a| a == "--sweep-only") {
        sweep(&args, &urls, &plain, &durable);
        return;
    }
    let serve = Serve::start(yaraus, &urls);
    serve_table(&serve, &plain, &durable, requests, &tmp);
    drop(serve);
    sweep(&args, &urls, &plain, &durable);

    let times = seq_next_times(yaraus, &urls, runs);
    let (calls, took) = library_calls(&urls, seconds);

    println!("| one caller | p50 ms | p99 ms | calls/s |");
    println!("| --- | ---: | ---: | ---: |");
    println!(
        "| `yaraus seq next` (whole process, {runs} runs) | {} | {} | {:.0} |",
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
        runs as f64 / times.iter().sum::<Duration>().as_secs_f64()
    );
    println!(
        "| `MajoritySequence::next` (library, {seconds} s) | | | {:.0} |",
        calls as f64 / took.as_secs_f64()
    );
}
