//! The benchmark harness behind `scripts/bench.sh`.
//!
//! It starts its own redis-servers on loopback TCP ports (one plain, three
//! with `appendfsync always`, three without) and a local etcd when one is
//! installed, and measures, in the same run so that the figures compare:
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

mod cycles;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use yaraus::claim::Claim;
use yaraus::lease::{Acquired, Leaser, PoolKeys, Requested, Timing};
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

/// Runs every command of `cmds` once per round, `runs` rounds, in turn, so
/// that a machine whose speed drifts (a VM's neighbours) slows them alike;
/// returns the median and p90 of each.
fn time_interleaved(
    runs: usize,
    cmds: &mut [Box<dyn FnMut() -> Command + '_>],
) -> Vec<(Duration, Duration)> {
    let mut times: Vec<Vec<Duration>> = cmds.iter().map(|_| Vec::with_capacity(runs)).collect();
    for round in 0..runs + 3 {
        for (i, cmd) in cmds.iter_mut().enumerate() {
            let mut c = cmd();
            c.stdout(Stdio::null()).stderr(Stdio::null());
            let start = Instant::now();
            let status = c.status().expect("spawn");
            let took = start.elapsed();
            assert!(status.success(), "benchmark command failed: {status}");
            // The first rounds warm the page cache and the scripts.
            if round >= 3 {
                times[i].push(took);
            }
        }
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort();
            (percentile(&t, 0.5), percentile(&t, 0.9))
        })
        .collect()
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Arguments after `cargo bench --bench yaraus --`.
fn option<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

/// Rates (operations per second) of `a`, run `na` times, and `b`, run `nb`
/// times, on `state`, taking turns in ten blocks so that a machine whose
/// speed drifts slows both alike.
async fn alternating_rates<S>(
    state: &mut S,
    (na, nb): (usize, usize),
    mut a: impl AsyncFnMut(&mut S),
    mut b: impl AsyncFnMut(&mut S),
) -> (f64, f64) {
    const BLOCKS: usize = 10;
    let (mut ta, mut tb) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..BLOCKS {
        let start = Instant::now();
        for _ in 0..na / BLOCKS {
            a(state).await;
        }
        ta += start.elapsed();
        let start = Instant::now();
        for _ in 0..nb / BLOCKS {
            b(state).await;
        }
        tb += start.elapsed();
    }
    let rate = |n: usize, t: Duration| (n / BLOCKS * BLOCKS) as f64 / t.as_secs_f64();
    (rate(na, ta), rate(nb, tb))
}

/// A PING, and a trivial script, on one store.
async fn ping(store: &mut Store) {
    let _: String = store.query(&redis::cmd("PING")).await.unwrap();
}

async fn trivial_script(store: &mut Store, script: &redis::Script) {
    let mut inv = script.prepare_invoke();
    inv.key("bench-trivial").arg("x");
    let _: redis::Value = store.script(&inv).await.unwrap().unwrap();
}

async fn connect(url: &str) -> Store {
    let target = Target::parse(url).unwrap();
    Store::connect(&target, Timeouts::from_timeout(Duration::from_secs(2)))
        .await
        .unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = option(&args, "--runs").unwrap_or(200);
    let cycles: usize = option(&args, "--cycles").unwrap_or(5000);
    let static_bin: Option<String> = option(&args, "--static-bin");

    let dir = std::env::temp_dir().join(format!("yaraus-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = start_redis(&dir, &[]);
    let url = format!("redis://127.0.0.1:{}/0?ns=bench", server.port);
    let yaraus = env!("CARGO_BIN_EXE_yaraus").to_string();
    let init = Command::new(&yaraus)
        .args([
            "--quiet", "--redis", &url, "init", "--min", "1", "--max", "1023",
        ])
        .status()
        .unwrap();
    assert!(init.success());

    // Three independent masters that fsync every write, as the fencing
    // sequence requires (yaraus refuses others unless told), and three that
    // do not, to see the protocol without the disk.
    let fsync = ["--appendonly", "yes", "--appendfsync", "always"];
    let masters: Vec<Server> = (0..3).map(|_| start_redis(&dir, &fsync)).collect();
    let plain: Vec<Server> = (0..3).map(|_| start_redis(&dir, &[])).collect();
    let urls = |servers: &[&Server]| -> Vec<String> {
        servers
            .iter()
            .map(|m| format!("redis://127.0.0.1:{}/0", m.port))
            .collect()
    };
    let one = urls(&[&server]);
    let three = urls(&masters.iter().collect::<Vec<_>>());
    let three_plain = urls(&plain.iter().collect::<Vec<_>>());
    let etcd = start_etcd(&dir);

    // ---- whole processes, all in one interleaved loop -------------------
    let lockfile = dir.join("flock.lock");
    let flock = || {
        let mut c = Command::new("flock");
        c.arg(&lockfile).arg("true");
        c
    };
    let run_with = |bin: &str| {
        let (bin, url) = (bin.to_string(), url.clone());
        move || {
            let mut c = Command::new(&bin);
            c.args(["--quiet", "--redis", &url, "run", "--delay", "0"]);
            c.args(["--no-safeguards", "--", "true"]);
            c
        }
    };
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
    let mut names: Vec<String> = vec![
        "`flock FILE true`".into(),
        "`yaraus run --delay 0 --no-safeguards -- true`".into(),
        "`yaraus lock NAME -- true`, 1 master".into(),
        "`yaraus lock NAME -- true`, 3 masters (appendfsync always)".into(),
    ];
    let mut cmds: Vec<Box<dyn FnMut() -> Command + '_>> = vec![
        Box::new(flock),
        Box::new(run_with(&yaraus)),
        Box::new(lock_with(&yaraus, &one)),
        Box::new(lock_with(&yaraus, &three)),
    ];
    if let Some(bin) = &static_bin {
        names.push("static build: `yaraus run --delay 0 --no-safeguards -- true`".into());
        names.push("static build: `yaraus lock NAME -- true`, 1 master".into());
        names.push(
            "static build: `yaraus lock NAME -- true`, 3 masters (appendfsync always)".into(),
        );
        cmds.push(Box::new(run_with(bin)));
        cmds.push(Box::new(lock_with(bin, &one)));
        cmds.push(Box::new(lock_with(bin, &three)));
    }
    if let Some((_, endpoint)) = &etcd {
        let endpoint = endpoint.clone();
        names.push("`etcdctl lock NAME true`, local etcd".into());
        cmds.push(Box::new(move || {
            let mut c = Command::new("etcdctl");
            c.env("ETCDCTL_API", "3");
            c.args(["--endpoints", &endpoint, "lock", "bench-lock", "true"]);
            c
        }));
    }
    let figures = time_interleaved(runs, &mut cmds);
    drop(cmds);
    let flock_p50 = figures[0].0.as_secs_f64();
    let target = |name: &str| -> &str {
        if name.contains("run --delay") || name.contains("lock NAME") {
            "target ≤ 2x"
        } else {
            ""
        }
    };
    println!("Whole processes, median (p90) of {runs} runs, all commands taking turns:");
    println!();
    println!("| command | median (p90) | / flock |");
    println!("| --- | --- | --- |");
    for (name, (p50, p90)) in names.iter().zip(&figures) {
        let ratio = p50.as_secs_f64() / flock_p50;
        let note = target(name);
        let extra = if name.starts_with("`etcdctl") {
            format!(
                "; yaraus lock (1 master) is {:.1}x faster (target ≥ 5x){}",
                p50.as_secs_f64() / figures[2].0.as_secs_f64(),
                if static_bin.is_some() {
                    format!(
                        ", static build {:.1}x",
                        p50.as_secs_f64() / figures[5].0.as_secs_f64()
                    )
                } else {
                    String::new()
                }
            )
        } else if note.is_empty() {
            String::new()
        } else {
            format!(" ({note})")
        };
        println!(
            "| {name} | {} ({}) | {ratio:.2}x{extra} |",
            ms(*p50),
            ms(*p90)
        );
    }
    if etcd.is_none() {
        println!(
            "| `etcdctl lock NAME true` | etcd not installed (apt-get install etcd-server etcd-client) | |"
        );
    }

    // ---- the library ---------------------------------------------------
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (ping_rate, cycle_rate) = rt.block_on(async {
        let keys = PoolKeys::new("bench");
        let (timing, _) = Timing::safeguarded(Requested {
            interval: Duration::from_secs(1),
            delay: None,
            expire: Duration::from_secs(30),
            kill_after: None,
            safeguards: true,
        })
        .unwrap();
        let store = connect(&url).await;
        let leaser = Leaser::new(store.clone(), keys, &timing);
        let mut pool = (store, leaser);
        alternating_rates(
            &mut pool,
            (cycles * 3, cycles),
            async |(store, _)| ping(store).await,
            async |(_, leaser)| {
                let mut lease = match leaser.try_lease().await.unwrap() {
                    Acquired::Leased(lease) => lease,
                    _ => panic!("no id"),
                };
                lease.renew().await.unwrap();
                lease.release().await.unwrap();
            },
        )
        .await
    });
    let limit = ping_rate / 3.0;

    let mut options = yaraus::lock::LockOptions::new(Duration::from_secs(30));
    options.namespace = "bench".into();
    let cycles_on = |urls: &[String], require_fsync: bool| {
        let mut options = options.clone();
        options.require_fsync = require_fsync;
        cycles::acquire_release_cycles_blocking(urls, "bench-cycles", cycles as u64, options)
            .expect("lock cycles")
    };
    let reports = [
        ("1 master", cycles_on(&one, true)),
        ("3 masters (appendfsync always)", cycles_on(&three, true)),
        (
            "3 masters without fsync (`--no-fsync-check`)",
            cycles_on(&three_plain, false),
        ),
    ];
    // What two trivial scripts a cycle, and what one fsync'd write, cost
    // beside a PING on the same servers: the ceilings any protocol with
    // scripts, or with durable writes, can reach here.
    let get = redis::Script::new("return redis.call('GET', KEYS[1])");
    let set = redis::Script::new("return redis.call('SET', KEYS[1], ARGV[1])");
    let (ping_one, trivial_one) = rt.block_on(async {
        alternating_rates(
            &mut connect(&one[0]).await,
            (cycles * 2, cycles * 2),
            async |s| ping(s).await,
            async |s| trivial_script(s, &get).await,
        )
        .await
    });
    // The same two-script ceiling on the three plain masters, every request
    // sent to all three at once and waited for (as a lock round waits for
    // every master), against a PING sent the same way.
    let (ping_three, trivial_three) = rt.block_on(async {
        let mut stores = Vec::new();
        for url in &three_plain {
            stores.push(connect(url).await);
        }
        alternating_rates(
            &mut stores,
            (cycles * 2, cycles * 2),
            async |s| {
                let [a, b, c] = &mut s[..] else {
                    unreachable!()
                };
                tokio::join!(ping(a), ping(b), ping(c));
            },
            async |s| {
                let [a, b, c] = &mut s[..] else {
                    unreachable!()
                };
                tokio::join!(
                    trivial_script(a, &get),
                    trivial_script(b, &get),
                    trivial_script(c, &get)
                );
            },
        )
        .await
    });
    let (ping_fsync, write_fsync) = rt.block_on(async {
        alternating_rates(
            &mut connect(&three[0]).await,
            (cycles, cycles),
            async |s| ping(s).await,
            async |s| trivial_script(s, &set).await,
        )
        .await
    });

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
    for (what, r) in &reports {
        println!(
            "| lock: acquire + release, {what}, {} cycles | {:.0} cycles/s; PING to all masters {:.1} µs; {:.0}% of the two-round-trip limit {:.0}/s (target ≥ 80%) |",
            r.cycles,
            r.cycles_per_second,
            r.ping_round_trip_us,
            100.0 * r.fraction_of_limit,
            r.two_round_trip_limit_per_second
        );
    }
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

    drop(etcd);
    drop(masters);
    drop(plain);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
