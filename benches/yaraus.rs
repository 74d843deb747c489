//! The benchmark harness behind `scripts/bench.sh`.
//!
//! It starts its own redis-server on a loopback TCP port and measures, in the
//! same run so that the figures are comparable:
//!
//! 1. whole-process wall time of `yaraus run --delay 0 --no-safeguards -- true`
//!    against `flock FILE true` (median and p90 over `--runs` runs);
//! 2. acquire + renew + release cycles per second through the library on one
//!    connection, against the round-trip rate of a PING loop on the same
//!    server (the target: at least half of "three round trips").
//!
//! Figures go to stdout as a Markdown table. Nothing here is asserted: speed
//! is reported, never tested.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use yaraus::keeper::Claim;
use yaraus::lease::{Acquired, Lease, LeaseTerms, PoolKeys};
use yaraus::store::{Store, Target, Timeouts};

struct Server {
    child: Child,
    port: u16,
    _dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start_redis(dir: &Path, extra: &[&str]) -> Server {
    let port = free_port();
    let dir = dir.join(port.to_string());
    std::fs::create_dir_all(&dir).unwrap();
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", ""])
        .args(if extra.is_empty() {
            &["--appendonly", "no"][..]
        } else {
            extra
        })
        .arg("--dir")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server not found: run scripts/install-redis.sh");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "redis-server did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    Server {
        child,
        port,
        _dir: dir,
    }
}

/// A local etcd for the `etcdctl lock` comparison, if etcd is installed.
fn start_etcd(dir: &Path) -> Option<(Server, String)> {
    Command::new("etcd").arg("--version").output().ok()?;
    Command::new("etcdctl").arg("version").output().ok()?;
    let (client, peer) = (free_port(), free_port());
    let endpoint = format!("http://127.0.0.1:{client}");
    let child = Command::new("etcd")
        .arg("--data-dir")
        .arg(dir.join("etcd"))
        .args(["--listen-client-urls", &endpoint])
        .args(["--advertise-client-urls", &endpoint])
        .args(["--listen-peer-urls", &format!("http://127.0.0.1:{peer}")])
        .args([
            "--initial-advertise-peer-urls",
            &format!("http://127.0.0.1:{peer}"),
        ])
        .args([
            "--initial-cluster",
            &format!("default=http://127.0.0.1:{peer}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let server = Server {
        child,
        port: client,
        _dir: dir.join("etcd"),
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let ok = Command::new("etcdctl")
            .env("ETCDCTL_API", "3")
            .args(["--endpoints", &endpoint, "endpoint", "health"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if ok {
            return Some((server, endpoint));
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn time_runs(runs: usize, mut cmd: impl FnMut() -> Command) -> (Duration, Duration) {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let mut c = cmd();
        c.stdout(Stdio::null()).stderr(Stdio::null());
        let start = Instant::now();
        let status = c.status().expect("spawn");
        times.push(start.elapsed());
        assert!(status.success(), "benchmark command failed: {status}");
    }
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.9))
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let cycles: usize = args
        .iter()
        .position(|a| a == "--cycles")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let static_bin: Option<String> = args
        .iter()
        .position(|a| a == "--static-bin")
        .and_then(|i| args.get(i + 1))
        .cloned();

    let dir = std::env::temp_dir().join(format!("yaraus-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = start_redis(&dir, &[]);
    let url = format!("redis://127.0.0.1:{}/0?ns=bench", server.port);
    let yaraus = env!("CARGO_BIN_EXE_yaraus");

    let init = Command::new(yaraus)
        .args([
            "--quiet", "--redis", &url, "init", "--min", "1", "--max", "1023",
        ])
        .status()
        .unwrap();
    assert!(init.success());

    // Warm up the page cache and the server's script cache.
    let run = || {
        let mut c = Command::new(yaraus);
        c.args(["--quiet", "--redis", &url, "run", "--delay", "0"]);
        c.args(["--no-safeguards", "--", "true"]);
        c
    };
    time_runs(3, run);
    let lockfile = dir.join("flock.lock");
    let flock = || {
        let mut c = Command::new("flock");
        c.arg(&lockfile).arg("true");
        c
    };
    time_runs(3, flock);

    let (flock_p50, flock_p90) = time_runs(runs, flock);
    let (run_p50, run_p90) = time_runs(runs, run);

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (ping_rate, cycle_rate) = rt.block_on(async {
        let target = Target::parse(&url).unwrap();
        let mut store = Store::connect(&target, Timeouts::from_timeout(Duration::from_secs(2)))
            .await
            .unwrap();
        let n = cycles * 3;
        let start = Instant::now();
        for _ in 0..n {
            let _: String = store.query(&redis::cmd("PING")).await.unwrap();
        }
        let ping_rate = n as f64 / start.elapsed().as_secs_f64();

        let keys = PoolKeys::new("bench");
        let terms = LeaseTerms {
            expire: Duration::from_secs(30),
        };
        let mut client_id = String::new();
        let start = Instant::now();
        for _ in 0..cycles {
            let mut lease = match Lease::acquire(&mut store, &keys, &mut client_id, terms)
                .await
                .unwrap()
            {
                Acquired::Leased { lease, .. } => lease,
                _ => panic!("no id"),
            };
            lease.renew().await.unwrap();
            lease.release().await.unwrap();
        }
        (ping_rate, cycles as f64 / start.elapsed().as_secs_f64())
    });
    let limit = ping_rate / 3.0;

    println!("| measure | figure |");
    println!("| --- | --- |");
    println!(
        "| `flock FILE true`, median (p90) of {runs} | {} ({}) |",
        ms(flock_p50),
        ms(flock_p90)
    );
    println!(
        "| `yaraus run --delay 0 --no-safeguards -- true`, median (p90) of {runs} | {} ({}) |",
        ms(run_p50),
        ms(run_p90)
    );
    println!(
        "| yaraus run / flock (median) | {:.2}x (target ≤ 2x) |",
        run_p50.as_secs_f64() / flock_p50.as_secs_f64()
    );
    println!("| PING round trips per second, one connection | {ping_rate:.0} |");
    println!("| three-round-trip limit (PING rate / 3) | {limit:.0} cycles/s |");
    println!(
        "| acquire + renew + release through the library, {cycles} cycles | {cycle_rate:.0} cycles/s ({:.0}% of the limit; target ≥ 50%) |",
        100.0 * cycle_rate / limit
    );

    // ---- yaraus lock -------------------------------------------------
    // Three independent masters that fsync every write, as the fencing
    // sequence requires; the one-master figures use the server above.
    let fsync = ["--appendonly", "yes", "--appendfsync", "always"];
    let masters: Vec<Server> = (0..3).map(|_| start_redis(&dir, &fsync)).collect();
    let one = vec![format!("redis://127.0.0.1:{}/0", server.port)];
    let three: Vec<String> = masters
        .iter()
        .map(|m| format!("redis://127.0.0.1:{}/0", m.port))
        .collect();
    let lock_with = |bin: &str, urls: &[String]| {
        let urls = urls.to_vec();
        let bin = bin.to_string();
        move || {
            let mut c = Command::new(&bin);
            c.arg("--quiet");
            for u in &urls {
                c.args(["--redis", u]);
            }
            c.args(["lock", "bench-lock", "--", "true"]);
            c
        }
    };
    let lock = |urls: &[String]| lock_with(yaraus, urls);
    time_runs(3, lock(&one));
    time_runs(3, lock(&three));
    let (flock2_p50, _) = time_runs(runs, flock);
    let (lock1_p50, lock1_p90) = time_runs(runs, lock(&one));
    let (lock3_p50, lock3_p90) = time_runs(runs, lock(&three));
    let etcd = start_etcd(&dir);
    let etcd_figures = etcd.as_ref().map(|(_, endpoint)| {
        let endpoint = endpoint.clone();
        let etcdctl = move || {
            let mut c = Command::new("etcdctl");
            c.env("ETCDCTL_API", "3");
            c.args(["--endpoints", &endpoint, "lock", "bench-lock", "true"]);
            c
        };
        time_runs(3, etcdctl.clone());
        time_runs(runs.min(30), etcdctl)
    });

    let mut options = yaraus::lock::LockOptions::new(Duration::from_secs(30));
    options.namespace = "bench".into();
    let report1 = yaraus::lock::acquire_release_cycles_blocking(
        &one,
        "bench-cycles",
        cycles as u64,
        options.clone(),
    )
    .expect("lock cycles, 1 master");
    let report3 = yaraus::lock::acquire_release_cycles_blocking(
        &three,
        "bench-cycles",
        cycles as u64,
        options,
    )
    .expect("lock cycles, 3 masters");
    // What two trivial scripts a cycle cost on the same server: the ceiling
    // any two-script protocol can reach here.
    let trivial_rate = rt.block_on(async {
        let target = Target::parse(&one[0]).unwrap();
        let mut store = Store::connect(&target, Timeouts::from_timeout(Duration::from_secs(2)))
            .await
            .unwrap();
        let script = redis::Script::new("return redis.call('GET', KEYS[1])");
        let start = Instant::now();
        for _ in 0..cycles * 2 {
            let mut inv = script.prepare_invoke();
            inv.key("bench-trivial");
            let _: Option<String> = store.script(&inv).await.unwrap().unwrap();
        }
        cycles as f64 / start.elapsed().as_secs_f64()
    });

    println!();
    println!("| lock measure | figure |");
    println!("| --- | --- |");
    println!(
        "| `flock FILE true`, median of {runs} (same run) | {} |",
        ms(flock2_p50)
    );
    println!(
        "| `yaraus lock NAME -- true`, 1 master, median (p90) | {} ({}); {:.2}x flock (target ≤ 1.5x) |",
        ms(lock1_p50),
        ms(lock1_p90),
        lock1_p50.as_secs_f64() / flock2_p50.as_secs_f64()
    );
    println!(
        "| `yaraus lock NAME -- true`, 3 masters (appendfsync always), median (p90) | {} ({}); {:.2}x flock (target ≤ 2x) |",
        ms(lock3_p50),
        ms(lock3_p90),
        lock3_p50.as_secs_f64() / flock2_p50.as_secs_f64()
    );
    match etcd_figures {
        Some((p50, p90)) => println!(
            "| `etcdctl lock NAME true`, local etcd, median (p90) | {} ({}); yaraus lock (1 master) is {:.1}x faster (target ≥ 5x) |",
            ms(p50),
            ms(p90),
            p50.as_secs_f64() / lock1_p50.as_secs_f64()
        ),
        None => println!(
            "| `etcdctl lock NAME true` | etcd not installed (apt-get install etcd-server etcd-client) |"
        ),
    }
    for r in [&report1, &report3] {
        println!(
            "| lock acquire + release through the library, {} master(s), {} cycles | {:.0} cycles/s; PING to all masters {:.1} µs; {:.0}% of the two-round-trip limit {:.0}/s (target ≥ 80%) |",
            r.masters,
            r.cycles,
            r.cycles_per_second,
            r.ping_round_trip_us,
            100.0 * r.fraction_of_limit,
            r.two_round_trip_limit_per_second
        );
    }
    println!(
        "| two trivial scripts (`return GET`) per cycle, 1 master | {trivial_rate:.0} cycles/s ({:.0}% of the same limit): the ceiling of any two-script protocol here |",
        100.0 * trivial_rate / report1.two_round_trip_limit_per_second
    );

    // The same binary linked statically (scripts/bench.sh builds it), where
    // start-up skips the dynamic loader: most of what separates yaraus from
    // flock here is process start-up, not Redis.
    if let Some(bin) = static_bin {
        let run_static = || {
            let mut c = Command::new(&bin);
            c.args(["--quiet", "--redis", &url, "run", "--delay", "0"]);
            c.args(["--no-safeguards", "--", "true"]);
            c
        };
        time_runs(3, run_static);
        time_runs(3, lock_with(&bin, &one));
        let (flock3_p50, _) = time_runs(runs, flock);
        let (run_s, _) = time_runs(runs, run_static);
        let (lock1_s, _) = time_runs(runs, lock_with(&bin, &one));
        let (lock3_s, _) = time_runs(runs, lock_with(&bin, &three));
        let ratio = |d: Duration| d.as_secs_f64() / flock3_p50.as_secs_f64();
        println!();
        println!("| static build (crt-static), medians of {runs} | figure |");
        println!("| --- | --- |");
        println!("| `flock FILE true` (same run) | {} |", ms(flock3_p50));
        println!(
            "| `yaraus run --delay 0 --no-safeguards -- true` | {} ({:.2}x flock) |",
            ms(run_s),
            ratio(run_s)
        );
        println!(
            "| `yaraus lock NAME -- true`, 1 master | {} ({:.2}x flock) |",
            ms(lock1_s),
            ratio(lock1_s)
        );
        println!(
            "| `yaraus lock NAME -- true`, 3 masters (appendfsync always) | {} ({:.2}x flock) |",
            ms(lock3_s),
            ratio(lock3_s)
        );
    }
    drop(etcd);
    drop(masters);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
