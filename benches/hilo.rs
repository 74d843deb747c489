//! The hilo benchmark (`scripts/bench.sh` runs it): figures, never
//! assertions, as Markdown tables.
//!
//! In one run, so that the figures compare:
//!
//! 1. ids/s from the in-process [`Allocator`] on one thread, against a bare
//!    `u64` counter in the same loop (the ceiling: what any allocator that
//!    hands out one id per call can reach here);
//! 2. blocks/s through the library's [`Reserver`], one caller and eight
//!    concurrent ones, over three shards with `appendfsync always`, and the
//!    same over three shards without persistence (the fsync-free ceiling);
//! 3. `yaraus hilo next` as a whole process: p50/p99 wall time, one at a
//!    time and eight at once, against `yaraus --version` (the process
//!    start-up ceiling).
//!
//! Options: `--seconds S` (each timed loop, default 3), `--runs N` (hilo next
//! processes, default 200).

#[path = "../tests/common/mod.rs"]
mod common;
mod figures;

use common::RedisServer;
use figures::{option, percentile, start_redis};
use std::hint::black_box;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use yaraus::hilo::{Allocator, AllocatorOptions, HiloKeys, Reserver};
use yaraus::store::{Quorum, Target};

const NAME: &str = "bench";

fn reserver(urls: &[String], durable: bool) -> Reserver {
    let targets: Vec<Target> = urls.iter().map(|u| Target::parse(u).unwrap()).collect();
    let quorum = Quorum::new(&targets, Duration::from_secs(2), durable).unwrap();
    Reserver::new(quorum, HiloKeys::new("yaraus", NAME).unwrap()).unwrap()
}

/// Opens windows of 10^12 ids, two per shard: no refill during the bench.
fn stock(yaraus: &str, urls: &[String], durable: bool) {
    let mut cmd = Command::new(yaraus);
    cmd.args(["--quiet", "hilo", "agent", NAME, "--once"])
        .args(["--window-size", "1000000000000", "--min-open", "2"]);
    if !durable {
        cmd.arg("--allow-volatile");
    }
    for u in urls {
        cmd.args(["--redis", u]);
    }
    assert!(cmd.status().unwrap().success(), "the agent failed");
}

/// ids/s of the allocator and of a bare counter, for `seconds` each.
async fn allocator_rate(urls: &[String], seconds: f64) -> (f64, f64, u64) {
    let mut alloc = Allocator::new(reserver(urls, true), AllocatorOptions::new(100_000)).unwrap();
    alloc.next().await.unwrap();
    let (mut n, start) = (0u64, Instant::now());
    while start.elapsed().as_secs_f64() < seconds {
        for _ in 0..1_000_000 {
            black_box(alloc.next().await.unwrap());
        }
        n += 1_000_000;
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    let (mut counter, mut m, start) = (0u64, 0u64, Instant::now());
    while start.elapsed().as_secs_f64() < seconds {
        for _ in 0..1_000_000 {
            counter += 1;
            black_box(counter);
        }
        m += 1_000_000;
    }
    (
        rate,
        m as f64 / start.elapsed().as_secs_f64(),
        alloc.batch(),
    )
}

/// blocks/s of `callers` reservers at once for `seconds`, and the p50/p99
/// of one reservation.
async fn reserve_rate(
    urls: &[String],
    durable: bool,
    callers: usize,
    seconds: f64,
) -> (f64, Duration, Duration) {
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let mut r = reserver(urls, durable);
            tokio::spawn(async move {
                let mut took = Vec::new();
                while Instant::now() < deadline {
                    let t = Instant::now();
                    r.reserve(100).await.unwrap();
                    took.push(t.elapsed());
                }
                took
            })
        })
        .collect();
    let start = Instant::now();
    let mut took = Vec::new();
    for t in tasks {
        took.extend(t.await.unwrap());
    }
    let rate = took.len() as f64 / start.elapsed().as_secs_f64();
    took.sort();
    (rate, percentile(&took, 0.5), percentile(&took, 0.99))
}

/// Wall times of `runs` processes of `args`, `parallel` at once; and the
/// processes per second.
fn processes(yaraus: &str, args: &[String], runs: usize, parallel: usize) -> (f64, Vec<Duration>) {
    let start = Instant::now();
    let mut took: Vec<Duration> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..parallel)
            .map(|_| {
                scope.spawn(|| {
                    (0..runs / parallel)
                        .map(|_| {
                            let t = Instant::now();
                            let ok = Command::new(yaraus)
                                .args(args)
                                .stdout(Stdio::null())
                                .status()
                                .unwrap()
                                .success();
                            assert!(ok, "{args:?} failed");
                            t.elapsed()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let rate = took.len() as f64 / start.elapsed().as_secs_f64();
    took.sort();
    (rate, took)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seconds: f64 = option(&args, "--seconds").unwrap_or(3.0);
    let runs: usize = option(&args, "--runs").unwrap_or(200);
    let yaraus = env!("CARGO_BIN_EXE_yaraus");
    let durable: Vec<RedisServer> = (0..3).map(|_| start_redis(true)).collect();
    let volatile: Vec<RedisServer> = (0..3).map(|_| start_redis(false)).collect();
    let durable_urls: Vec<String> = durable.iter().map(RedisServer::url).collect();
    let volatile_urls: Vec<String> = volatile.iter().map(RedisServer::url).collect();
    stock(yaraus, &durable_urls, true);
    stock(yaraus, &volatile_urls, false);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let (rate, ceiling, batch) = rt.block_on(allocator_rate(&durable_urls, seconds));
    println!("\n### In-process allocator, one thread ({seconds} s each)\n");
    println!("| loop | ids/s |\n| --- | --- |");
    println!(
        "| `Allocator::next` (batch grown to {batch}) | {:.1} M |",
        rate / 1e6
    );
    println!("| bare `u64` counter (ceiling) | {:.1} M |", ceiling / 1e6);

    println!("\n### Reserving blocks of 100 through the library ({seconds} s each)\n");
    println!("| shards | callers | blocks/s | p50 ms | p99 ms |\n| --- | --- | --- | --- | --- |");
    for (what, urls, fsync) in [
        ("3, appendfsync always", &durable_urls, true),
        ("3, no persistence", &volatile_urls, false),
    ] {
        for callers in [1, 8] {
            let (rate, p50, p99) = rt.block_on(reserve_rate(urls, fsync, callers, seconds));
            println!(
                "| {what} | {callers} | {rate:.0} | {:.3} | {:.3} |",
                p50.as_secs_f64() * 1e3,
                p99.as_secs_f64() * 1e3
            );
        }
    }

    println!("\n### `yaraus hilo next` as a process ({runs} runs)\n");
    println!("| command | at once | runs/s | p50 ms | p99 ms |\n| --- | --- | --- | --- | --- |");
    let mut next: Vec<String> = ["--quiet", "hilo", "next", NAME, "--batch", "100"]
        .map(String::from)
        .to_vec();
    for u in &durable_urls {
        next.extend(["--redis".to_string(), u.clone()]);
    }
    let version = vec!["--version".to_string()];
    for (what, args) in [
        ("hilo next (3 fsync shards)", &next),
        ("yaraus --version (start-up ceiling)", &version),
    ] {
        for parallel in [1, 8] {
            let (rate, took) = processes(yaraus, args, runs, parallel);
            println!(
                "| {what} | {parallel} | {rate:.0} | {:.2} | {:.2} |",
                percentile(&took, 0.5).as_secs_f64() * 1e3,
                percentile(&took, 0.99).as_secs_f64() * 1e3
            );
        }
    }
}
