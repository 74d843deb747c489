//! The benchmark harness behind `scripts/bench.sh`.
//!
//! It starts its own redis-servers on loopback TCP ports (one plain, three
//! with `appendfsync always`, three without), with the integration tests'
//! launcher (`tests/common`), and a local etcd when one is installed, and
//! measures, in the same run so that the figures compare:
//!
//! 1. whole-process wall time of `flock FILE true`, `yaraus run -- true`,
//!    `yaraus lock NAME -- true` on one and on three masters (and the same
//!    for a statically linked build, given `--static-bin`), and `etcdctl
//!    lock NAME true`: every command runs once per round, all taking turns,
//!    so that a VM whose speed drifts slows them alike; median and p90;
//! 2. cycles per second through the library, one client: worker-id
//!    acquire, renew and release, and lock acquire and release on one
//!    master, three fsync'ing masters and three plain ones, each beside the
//!    PING round trip of the same servers measured in alternating blocks;
//! 3. two ceilings: two trivial scripts against two PINGs, and one fsync'd
//!    write against one PING.
//!
//! Figures go to stdout as Markdown tables. Nothing here is asserted: speed
//! is reported, never tested.

#[path = "../tests/common/mod.rs"]
mod common;
mod cycles;
mod figures;
mod processes;

use common::RedisServer;
use figures::{option, start_redis};
use processes::{Etcd, print_processes, process_commands, start_etcd, time_processes};
use std::process::Command;
use std::time::{Duration, Instant};
use yaraus::claim::Claim;
use yaraus::error::Result;
use yaraus::lease::{Acquired, Leaser, PoolKeys};
use yaraus::store::{Store, Target};
use yaraus::timing::Timeouts;
use yaraus::timing::lease::{Requested, Timing};

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Rounds in which the library figures take turns (blocks of PINGs, of cycles).
const BLOCKS: usize = 10;

/// The one way the benches set contenders against each other: `rounds`
/// rounds, in each of which contender 0, 1, ... in turn runs its share of
/// `runs[i]` operations (`run(state, i)` once each; the shares of all rounds
/// add up to `runs[i]`), so that a machine whose speed drifts (a VM's
/// neighbours) slows them alike. Returns, for each contender, how long each
/// of its turns took, round by round; stops at the first error.
async fn take_turns<S, E>(
    state: &mut S,
    rounds: usize,
    runs: &[usize],
    mut run: impl AsyncFnMut(&mut S, usize) -> std::result::Result<(), E>,
) -> std::result::Result<Vec<Vec<Duration>>, E> {
    let mut turns: Vec<Vec<Duration>> = runs.iter().map(|_| Vec::with_capacity(rounds)).collect();
    for round in 0..rounds {
        for (i, &n) in runs.iter().enumerate() {
            let share = n * (round + 1) / rounds - n * round / rounds;
            let start = Instant::now();
            for _ in 0..share {
                run(state, i).await?;
            }
            turns[i].push(start.elapsed());
        }
    }
    Ok(turns)
}

/// Operations per second: `n` operations in `turns`.
fn per_second(n: usize, turns: &[Duration]) -> f64 {
    n as f64 / turns.iter().sum::<Duration>().as_secs_f64()
}

/// A PING, and a trivial script, on one store.
async fn ping(store: &mut Store) -> Result<()> {
    store.query::<String>(&redis::cmd("PING")).await.map(drop)
}

async fn trivial_script(store: &mut Store, script: &redis::Script) -> Result<()> {
    let mut inv = script.prepare_invoke();
    inv.key("bench-trivial").arg("x");
    let _: redis::Value = store.script(&inv).await?.expect("trivial script");
    Ok(())
}

async fn connect(url: &str) -> Store {
    let target = Target::parse(url).unwrap();
    Store::connect(&target, Timeouts::from_timeout(Duration::from_secs(2)))
        .await
        .unwrap()
}

/// The servers of one run of the benchmark, and its scratch directory.
struct Servers {
    dir: std::path::PathBuf,
    /// The plain server of the worker-id pool (namespace `bench`).
    server: RedisServer,
    /// Its URL with the namespace.
    url: String,
    /// Three masters that fsync every write, as the fencing sequence
    /// requires (yaraus refuses others unless told).
    masters: Vec<RedisServer>,
    /// Three that do not, to see the protocol without the disk.
    plain: Vec<RedisServer>,
    one: Vec<String>,
    three: Vec<String>,
    three_plain: Vec<String>,
    etcd: Option<Etcd>,
}

impl Servers {
    /// Starts every server (and etcd when installed) and creates the pool.
    fn start(yaraus: &str) -> Servers {
        let dir = std::env::temp_dir().join(format!("yaraus-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let server = start_redis(false);
        let url = server.url_ns("bench");
        let init = Command::new(yaraus)
            .args([
                "--quiet", "--redis", &url, "init", "--min", "1", "--max", "1023",
            ])
            .status()
            .unwrap();
        assert!(init.success());

        let masters: Vec<RedisServer> = (0..3).map(|_| start_redis(true)).collect();
        let plain: Vec<RedisServer> = (0..3).map(|_| start_redis(false)).collect();
        let urls = |servers: &[RedisServer]| -> Vec<String> {
            servers.iter().map(RedisServer::url).collect()
        };
        let one = vec![server.url()];
        let three = urls(&masters);
        let three_plain = urls(&plain);
        let etcd = start_etcd(&dir);
        Servers {
            dir,
            server,
            url,
            masters,
            plain,
            one,
            three,
            three_plain,
            etcd,
        }
    }

    /// Stops everything, etcd first, and removes the scratch directory.
    fn stop(self) {
        drop(self.etcd);
        drop(self.masters);
        drop(self.plain);
        drop(self.server);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// PINGs and worker-id cycles (acquire + renew + release) taking turns on
/// the pool at `url`: (PINGs per second, cycles per second).
fn worker_id_cycles(rt: &tokio::runtime::Runtime, url: &str, cycles: usize) -> (f64, f64) {
    rt.block_on(async {
        let keys = PoolKeys::new("bench");
        let (timing, _) = Timing::safeguarded(Requested {
            interval: Duration::from_secs(1),
            delay: None,
            expire: Duration::from_secs(30),
            kill_after: None,
            safeguards: true,
        })
        .unwrap();
        let store = connect(url).await;
        let leaser = Leaser::new(store.clone(), keys, &timing);
        let mut pool = (store, leaser);
        let (pings, leases) = (cycles * 3, cycles);
        let turns = take_turns(
            &mut pool,
            BLOCKS,
            &[pings, leases],
            async |(store, leaser), i| {
                if i == 0 {
                    return ping(store).await;
                }
                let mut lease = match leaser.try_lease().await? {
                    Acquired::Leased(lease) => lease,
                    _ => panic!("no id"),
                };
                lease.renew().await.unwrap();
                lease.release().await
            },
        )
        .await
        .expect("worker-id cycles");
        (per_second(pings, &turns[0]), per_second(leases, &turns[1]))
    })
}

/// Lock acquire + release cycles on one master, three fsync'ing masters and
/// three plain ones.
fn lock_cycles(s: &Servers, cycles: usize) -> [(&'static str, cycles::BenchReport); 3] {
    let options = yaraus::lock::LockOptions::new("bench", Duration::from_secs(30));
    let cycles_on = |urls: &[String], require_fsync: bool| {
        let mut options = options.clone();
        options.require_fsync = require_fsync;
        cycles::acquire_release_cycles_blocking(urls, "bench-cycles", cycles as u64, options)
            .expect("lock cycles")
    };
    [
        ("1 master", cycles_on(&s.one, true)),
        ("3 masters (appendfsync always)", cycles_on(&s.three, true)),
        (
            "3 masters without fsync (`--no-fsync-check`)",
            cycles_on(&s.three_plain, false),
        ),
    ]
}

/// What two trivial scripts a cycle, and what one fsync'd write, cost
/// beside a PING on the same servers: the ceilings any protocol with
/// scripts, or with durable writes, can reach here. Each pair is (PINGs or
/// PING rounds per second, the other operation per second).
struct Ceilings {
    one: (f64, f64),
    three: (f64, f64),
    fsync: (f64, f64),
}

fn ceilings(rt: &tokio::runtime::Runtime, s: &Servers, cycles: usize) -> Ceilings {
    let get = redis::Script::new("return redis.call('GET', KEYS[1])");
    let set = redis::Script::new("return redis.call('SET', KEYS[1], ARGV[1])");
    let one = rt.block_on(async {
        let n = cycles * 2;
        let turns = take_turns(
            &mut connect(&s.one[0]).await,
            BLOCKS,
            &[n, n],
            async |s, i| match i {
                0 => ping(s).await,
                _ => trivial_script(s, &get).await,
            },
        )
        .await
        .expect("two-script ceiling, 1 master");
        (per_second(n, &turns[0]), per_second(n, &turns[1]))
    });
    let three = rt.block_on(two_script_ceiling_on_three(&s.three_plain, &get, cycles));
    let fsync = rt.block_on(async {
        let turns = take_turns(
            &mut connect(&s.three[0]).await,
            BLOCKS,
            &[cycles, cycles],
            async |s, i| match i {
                0 => ping(s).await,
                _ => trivial_script(s, &set).await,
            },
        )
        .await
        .expect("fsync ceiling");
        (per_second(cycles, &turns[0]), per_second(cycles, &turns[1]))
    });
    Ceilings { one, three, fsync }
}

/// The two-script ceiling on three plain masters, every request sent to all
/// three at once and waited for (as a lock round waits for every master),
/// against a PING sent the same way.
async fn two_script_ceiling_on_three(
    urls: &[String],
    get: &redis::Script,
    cycles: usize,
) -> (f64, f64) {
    let mut stores = Vec::new();
    for url in urls {
        stores.push(connect(url).await);
    }
    let n = cycles * 2;
    let turns = take_turns(&mut stores, BLOCKS, &[n, n], async |s, i| {
        let [a, b, c] = &mut s[..] else {
            unreachable!()
        };
        match i {
            0 => tokio::try_join!(ping(a), ping(b), ping(c)).map(drop),
            _ => tokio::try_join!(
                trivial_script(a, get),
                trivial_script(b, get),
                trivial_script(c, get)
            )
            .map(drop),
        }
    })
    .await
    .expect("two-script ceiling, 3 masters");
    (per_second(n, &turns[0]), per_second(n, &turns[1]))
}

/// The library table: PINGs, worker-id cycles against the three-round-trip
/// limit, lock cycles against the two-round-trip limit, and the ceilings.
fn print_library(
    cycles: usize,
    (ping_rate, cycle_rate): (f64, f64),
    reports: &[(&str, cycles::BenchReport)],
    c: &Ceilings,
) {
    let limit = ping_rate / 3.0;
    println!();
    println!("Through the library, one client, PINGs and cycles taking turns:");
    println!();
    println!("| measure | figure |");
    println!("| --- | --- |");
    println!("| PING round trips per second, one connection | {ping_rate:.0} |");
    println!(
        "| worker id: acquire + renew + release, {cycles} cycles | {cycle_rate:.0} cycles/s ({:.0}% of the three-round-trip limit {limit:.0}/s; target ≥ 50%) |",
        100.0 * cycle_rate / limit
    );
    for (what, r) in reports {
        println!(
            "| lock: acquire + release, {what}, {} cycles | {:.0} cycles/s; PING to all masters {:.1} µs; {:.0}% of the two-round-trip limit {:.0}/s (target ≥ 80%) |",
            r.cycles,
            r.cycles_per_second,
            r.ping_round_trip_us,
            100.0 * r.fraction_of_limit,
            r.two_round_trip_limit_per_second
        );
    }
    let ((ping_one, trivial_one), (ping_three, trivial_three)) = (c.one, c.three);
    let (ping_fsync, write_fsync) = c.fsync;
    println!(
        "| ceiling: two trivial scripts (`return GET`) per cycle, 1 master | {:.0} cycles/s, {:.0}% of the two-PING rate {:.0}/s |",
        trivial_one / 2.0,
        100.0 * trivial_one / ping_one,
        ping_one / 2.0
    );
    println!(
        "| ceiling: two trivial scripts per cycle, each to 3 plain masters at once | {:.0} cycles/s, {:.0}% of the two-PING rate {:.0}/s |",
        trivial_three / 2.0,
        100.0 * trivial_three / ping_three,
        ping_three / 2.0
    );
    println!(
        "| ceiling: one write with `appendfsync always` vs a PING, same master | {:.0} µs vs {:.0} µs a round trip |",
        1e6 / write_fsync,
        1e6 / ping_fsync
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = option(&args, "--runs").unwrap_or(200);
    let cycles: usize = option(&args, "--cycles").unwrap_or(5000);
    let static_bin: Option<String> = option(&args, "--static-bin");
    let yaraus = env!("CARGO_BIN_EXE_yaraus");

    let servers = Servers::start(yaraus);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let (names, cmds) = process_commands(&servers, yaraus, static_bin.as_deref());
    let figures = time_processes(&rt, cmds, runs);
    print_processes(
        &names,
        &figures,
        runs,
        static_bin.is_some(),
        servers.etcd.is_some(),
    );

    let worker_ids = worker_id_cycles(&rt, &servers.url, cycles);
    let reports = lock_cycles(&servers, cycles);
    let ceilings = ceilings(&rt, &servers, cycles);
    print_library(cycles, worker_ids, &reports, &ceilings);

    servers.stop();
}
