//! A fleet simulated: N worker-id leases held through the library by a few
//! driver processes (not N `yaraus run`s, which this machine could not
//! start), each lease renewed at its interval, on one Redis and on a Redis
//! Cluster of three masters with a pool of six shards (`init --shards 6`).
//!
//! For each setup, interval and N: fresh servers, the pool made by
//! `yaraus init` (exactly N ids, so the last leases search a full pool),
//! then `--drivers` processes (this bench run again with `--drive`), each
//! leasing its share of the N ids with one client id per lease and one
//! connection per process, the leases' renewals spread evenly over the
//! interval. Once every lease is held and a warm-up of two intervals has
//! passed, a window of `--window` seconds is measured:
//!
//! * each master's CPU (`INFO cpu`) and scripts run (`INFO commandstats`);
//! * the renewals done against those due (N × window / interval): below
//!   100% the drivers, not the server, became the bound;
//! * the drivers' own CPU (`/proc/PID/stat`), per renewal;
//! * the latency of each lease and each renewal, p50 and p99, as the
//!   library's callers see it.
//!
//! Then, with the fleet still renewing, the whole-process time of
//! `yaraus stats` and `yaraus list --using` (median of three).
//!
//! Writes `docs/figures/fleet_cpu.csv` (the busiest master's CPU) and
//! `fleet_renewal_p99.csv`, and prints a Markdown table. Nothing is
//! asserted: speed is reported, never tested.
//!
//! `cargo bench --bench fleet -- --sizes 1000,4096,16384,65536 --intervals 1,5 --window 10 --drivers 4`

#[path = "../tests/common/mod.rs"]
mod common;
#[allow(dead_code)]
mod figures;
mod fleet_driver;
// Its wait for `yaraus run`s is not used: the leases here are the library's.
#[allow(dead_code)]
mod pool_load;

use common::RedisServer;
use common::cluster::Cluster;
use figures::{option, percentile, start_redis};
use pool_load::{scripts, server_cpu};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write as _};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// The namespace of every pool here.
const NS: &str = "fleet";

/// How many shards the Cluster's pool has (two per master).
const SHARDS: usize = 6;

/// One setup measured: one Redis or the Cluster.
enum Servers {
    One(RedisServer),
    Cluster(Cluster),
}

impl Servers {
    fn start(cluster: bool) -> Servers {
        match cluster {
            true => Servers::Cluster(Cluster::start(3)),
            false => Servers::One(start_redis(false)),
        }
    }

    fn masters(&self) -> Vec<&RedisServer> {
        match self {
            Servers::One(s) => vec![s],
            Servers::Cluster(c) => c.nodes.iter().collect(),
        }
    }

    fn url(&self) -> String {
        match self {
            Servers::One(s) => format!("redis://127.0.0.1:{}/?ns={NS}", s.port().expect("tcp")),
            Servers::Cluster(c) => c.url(NS),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Servers::One(_) => "one Redis",
            Servers::Cluster(_) => "3-master Cluster, 6 shards",
        }
    }
}

/// What one point measured.
struct Point {
    setup: &'static str,
    leases: usize,
    interval_s: u64,
    /// Each master's CPU over the window, % of one core.
    master_cpu: Vec<f64>,
    /// Scripts each master ran a second.
    master_scripts: Vec<f64>,
    /// Each master's clients connected at the end of the window (the
    /// bench's own `INFO` one of them).
    master_clients: Vec<u64>,
    /// Each master's `used_memory`, MiB, at the end of the window.
    master_mib: Vec<f64>,
    /// Renewals done / due, %.
    kept_up: f64,
    /// Server CPU per renewal, all masters, µs.
    server_us: f64,
    /// Drivers' CPU per renewal, µs.
    client_us: f64,
    /// Drivers' CPU over the window, % of one core.
    client_cpu: f64,
    lease: (Duration, Duration),
    renewal: (Duration, Duration),
    failed: u64,
    /// Why the first failed renewal failed.
    why: Option<String>,
    stats: Duration,
    list_using: Duration,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--drive") {
        return fleet_driver::drive(&args);
    }
    let list = |name: &str, default: &str| -> Vec<usize> {
        option::<String>(&args, name)
            .unwrap_or_else(|| default.into())
            .split(',')
            .map(|s| s.trim().parse().expect("numbers separated by commas"))
            .collect()
    };
    let sizes = list("--sizes", "1000,4096,16384,65536");
    let intervals = list("--intervals", "1,5");
    let window = Duration::from_secs(option(&args, "--window").unwrap_or(10));
    let drivers: usize = option(&args, "--drivers").unwrap_or(4);
    let setups = option::<String>(&args, "--setups").unwrap_or_else(|| "one,cluster".into());
    let mut points = Vec::new();
    for setup in setups.split(',') {
        for &interval in &intervals {
            for &n in &sizes {
                let servers = Servers::start(setup == "cluster");
                let p = measure(&servers, n, interval as u64, window, drivers);
                eprintln!(
                    "{}, {n} leases every {interval}s: masters {:?}% CPU, kept up {:.1}%, \
                     server {:.1} µs + client {:.1} µs per renewal, renewal p99 {:?}",
                    p.setup, p.master_cpu, p.kept_up, p.server_us, p.client_us, p.renewal.1
                );
                points.push(p);
            }
        }
    }
    report(&points, window, drivers);
    for p in points.iter().filter(|p| p.failed > 0) {
        eprintln!(
            "{}, {} leases every {} s: {} renewals failed; the first: {}",
            p.setup,
            p.leases,
            p.interval_s,
            p.failed,
            p.why.as_deref().unwrap_or("?")
        );
    }
}

/// The fleet of `n` leases on `servers`, renewed every `interval_s`.
fn measure(
    servers: &Servers,
    n: usize,
    interval_s: u64,
    window: Duration,
    drivers: usize,
) -> Point {
    let url = servers.url();
    let yaraus = env!("CARGO_BIN_EXE_yaraus");
    let mut fleet = start_fleet(servers, n, interval_s, drivers);
    // Every lease's renewals under way: two intervals after the last lease.
    std::thread::sleep(Duration::from_secs(2 * interval_s));

    let masters = servers.masters();
    let before = Reading::take(&masters, &fleet);
    for d in &mut fleet {
        d.say("measure");
    }
    let start = Instant::now();
    std::thread::sleep(window);
    for d in &mut fleet {
        d.say("rest");
    }
    let secs = start.elapsed().as_secs_f64();
    let after = Reading::take(&masters, &fleet);
    let cpu: Vec<f64> = after
        .cpu
        .iter()
        .zip(&before.cpu)
        .map(|(a, b)| a - b)
        .collect();
    let client = after.client - before.client;

    let stats = median_run(yaraus, &["stats", "--redis", &url]);
    let list_using = median_run(yaraus, &["list", "--using", "--redis", &url]);

    let mut record = fleet_driver::Record::default();
    for d in fleet {
        record.merge(d.finish());
    }
    record.lease.sort();
    record.renewal.sort();
    let renewals = record.renewal.len().max(1) as f64;
    let due = n as f64 * secs / interval_s as f64;
    let quantiles = |v: &[Duration]| (percentile(v, 0.5), percentile(v, 0.99));
    Point {
        setup: servers.name(),
        leases: n,
        interval_s,
        master_cpu: cpu.iter().map(|c| 100.0 * c / secs).collect(),
        master_scripts: (after.scripts.iter().zip(&before.scripts))
            .map(|(a, b)| (a - b) as f64 / secs)
            .collect(),
        master_clients: after.clients,
        master_mib: after.mib,
        kept_up: 100.0 * record.renewal.len() as f64 / due,
        server_us: cpu.iter().sum::<f64>() * 1e6 / renewals,
        client_us: client * 1e6 / renewals,
        client_cpu: 100.0 * client / secs,
        lease: quantiles(&record.lease),
        renewal: quantiles(&record.renewal),
        failed: record.failed,
        why: record.why.take(),
        stats,
        list_using,
    }
}

/// A pool of exactly `n` ids made on `servers`, and `drivers` drivers
/// holding all of them, returned once every lease is held.
fn start_fleet(servers: &Servers, n: usize, interval_s: u64, drivers: usize) -> Vec<Driver> {
    let url = servers.url();
    let max = (n - 1).to_string();
    let mut init = Command::new(env!("CARGO_BIN_EXE_yaraus"));
    init.args(["init", "--redis", &url, "--min", "0", "--max", &max]);
    if matches!(servers, Servers::Cluster(_)) {
        init.args(["--shards", &SHARDS.to_string()]);
    }
    let out = init.output().expect("yaraus init");
    assert!(out.status.success(), "init: {out:?}");
    let mut fleet: Vec<Driver> = (0..drivers)
        .map(|d| n / drivers + usize::from(d < n % drivers))
        .map(|share| Driver::start(&url, share, interval_s))
        .collect();
    for d in &mut fleet {
        d.expect("leased");
    }
    fleet
}

/// What the masters and the drivers say at one instant.
struct Reading {
    /// Each master's CPU seconds.
    cpu: Vec<f64>,
    /// Each master's scripts run.
    scripts: Vec<u64>,
    /// Each master's connected clients.
    clients: Vec<u64>,
    /// Each master's `used_memory`, MiB.
    mib: Vec<f64>,
    /// The drivers' CPU seconds, together.
    client: f64,
}

impl Reading {
    fn take(masters: &[&RedisServer], fleet: &[Driver]) -> Reading {
        Reading {
            cpu: masters.iter().map(|m| server_cpu(m)).collect(),
            scripts: masters.iter().map(|m| scripts(m)).collect(),
            clients: (masters.iter())
                .map(|m| info_number(m, "clients", "connected_clients") as u64)
                .collect(),
            mib: (masters.iter())
                .map(|m| info_number(m, "memory", "used_memory") / (1024.0 * 1024.0))
                .collect(),
            client: fleet.iter().map(Driver::cpu).sum(),
        }
    }
}

/// A number of `INFO section`.
fn info_number(server: &RedisServer, section: &str, field: &str) -> f64 {
    server
        .info_field(section, field)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("INFO {section}: {field}"))
}

/// The median whole-process time of three runs of `yaraus args`.
fn median_run(yaraus: &str, args: &[&str]) -> Duration {
    let mut times: Vec<Duration> = (0..3)
        .map(|_| {
            let start = Instant::now();
            let out = Command::new(yaraus)
                .args(args)
                .stdout(Stdio::null())
                .output()
                .expect("yaraus");
            assert!(out.status.success(), "yaraus {args:?}: {out:?}");
            start.elapsed()
        })
        .collect();
    times.sort();
    times[1]
}

/// One driver process, told what to do by a line on its stdin and saying
/// where it is by a line on its stdout.
struct Driver {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Driver {
    fn start(url: &str, leases: usize, interval_s: u64) -> Driver {
        let mut child = Command::new(std::env::current_exe().expect("this bench"))
            .args(["--drive", url, &leases.to_string(), &interval_s.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("a driver");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Driver {
            child,
            stdin,
            stdout,
        }
    }

    fn say(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("a driver's stdin");
    }

    /// Waits for the line `what`.
    fn expect(&mut self, what: &str) {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("a driver's stdout");
        assert_eq!(line.trim(), what, "a driver said something else");
    }

    /// The process's CPU seconds so far: each thread's time on a CPU, in
    /// ns (`/proc/PID/task/TID/schedstat`).
    fn cpu(&self) -> f64 {
        let tasks =
            std::fs::read_dir(format!("/proc/{}/task", self.child.id())).expect("/proc/PID/task");
        let ns: f64 = tasks
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
            .filter_map(|stat| stat.split_whitespace().next()?.parse::<f64>().ok())
            .sum();
        ns / 1e9
    }

    /// Stops its renewals and reads what it measured.
    fn finish(mut self) -> fleet_driver::Record {
        drop(self.stdin);
        let mut text = String::new();
        std::io::Read::read_to_string(&mut self.stdout, &mut text).expect("a driver's record");
        let status = self.child.wait().expect("a driver");
        assert!(status.success(), "a driver failed: {status}");
        fleet_driver::Record::parse(&text)
    }
}

/// The Markdown table, and the CSV figures of the curves.
fn report(points: &[Point], window: Duration, drivers: usize) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut table = format!(
        "Leases held through the library by {drivers} driver processes, each lease renewed \
         at its interval; a window of {} s measured after a warm-up of two intervals.\n\n\
         | setup | leases | interval | CPU per master | scripts/s per master | renewals kept up | \
         server µs / renewal | driver µs / renewal | drivers' CPU | lease p50 / p99 | \
         renewal p50 / p99 | failed | `stats` | `list --using` | clients per master | \
         MiB per master |\n\
         | --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: \
         | --- | --- |\n",
        window.as_secs()
    );
    let mut cpu_csv = String::from("series,x,y\n");
    let mut p99_csv = String::from("series,x,y\n");
    for p in points {
        let joined = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:.0}"))
                .collect::<Vec<_>>()
                .join(" / ")
        };
        let _ = writeln!(
            table,
            "| {} | {} | {} s | {} % | {} | {:.1} % | {:.1} | {:.1} | {:.0} % | {:.2} / {:.2} ms | \
             {:.2} / {:.2} ms | {} | {:.0} ms | {:.0} ms | {} | {} |",
            p.setup,
            p.leases,
            p.interval_s,
            joined(&p.master_cpu),
            joined(&p.master_scripts),
            p.kept_up,
            p.server_us,
            p.client_us,
            p.client_cpu,
            ms(p.lease.0),
            ms(p.lease.1),
            ms(p.renewal.0),
            ms(p.renewal.1),
            p.failed,
            ms(p.stats),
            ms(p.list_using),
            p.master_clients
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(" / "),
            p.master_mib
                .iter()
                .map(|m| format!("{m:.1}"))
                .collect::<Vec<_>>()
                .join(" / "),
        );
        let series = format!("{}, every {} s", p.setup, p.interval_s);
        let busiest = p.master_cpu.iter().cloned().fold(0.0, f64::max);
        let _ = writeln!(cpu_csv, "{series},{},{busiest:.2}", p.leases);
        let _ = writeln!(p99_csv, "{series},{},{:.3}", p.leases, ms(p.renewal.1));
    }
    println!("{table}");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/figures");
    std::fs::write(dir.join("fleet_cpu.csv"), cpu_csv).expect("write fleet_cpu.csv");
    std::fs::write(dir.join("fleet_renewal_p99.csv"), p99_csv)
        .expect("write fleet_renewal_p99.csv");
}
