//! What a fleet of `yaraus run` costs: the load that N
//! concurrent leases put on one Redis (commands/s and the server's CPU),
//! and the memory of each `yaraus run` (its own process and its watchdog).
//!
//! For each N in turn: a fresh pool on one redis-server (TCP, no
//! persistence), N `yaraus run --interval 1s -- sleep 3600` started, and
//! once every one holds its id (the pool's leased count, read from Redis),
//! the server's `total_commands_processed` and `used_cpu_user + used_cpu_sys`
//! over a measured window. Each run renews once an interval, so the load
//! should be N renewals per second and the CPU N × the cost of one renewal
//! script; the figures say whether it is.
//!
//! Memory: the resident and proportional set sizes (`VmRSS`, and `Pss`
//! from smaps_rollup, which shares the binary's pages out among the
//! processes mapping them) of each yaraus and of its watchdog, medians over
//! the N runs.
//!
//! How many fit: each run is three processes (yaraus, the watchdog, the
//! command). The default sizes stop at 1,000; `--sizes 10,100` chooses.
//! Writes `docs/figures/renewal_load.csv` and `renewal_cpu.csv` and prints a
//! Markdown table. Nothing is asserted: speed is reported, never tested.
//!
//! `cargo bench --bench renewals -- --sizes 10,30,100,300,1000 --window 10`

#[path = "../tests/common/mod.rs"]
mod common;
// Its percentile of durations is not used: the figures here are rates and sizes.
#[allow(dead_code)]
mod figures;
mod pool_load;

use common::RedisServer;
use figures::{option, start_redis};
use pool_load::{scripts, server_cpu, wait_leased};
use std::fmt::Write as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Every run renews this often (the default, named so the figures say it).
const INTERVAL: &str = "1s";

/// Bound on all N runs taking their ids.
const SETTLE: Duration = Duration::from_secs(300);

struct Figures {
    leases: usize,
    /// Scripts (EVALSHA and EVAL) a second: one per renewal.
    scripts_per_s: f64,
    /// Every command the server ran a second, those inside scripts too.
    commands_per_s: f64,
    cpu_percent: f64,
    rss_kib: (u64, u64),
    pss_kib: (u64, u64),
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sizes: Vec<usize> = option::<String>(&args, "--sizes")
        .unwrap_or_else(|| "10,30,100,300,1000".into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .expect("--sizes: numbers separated by commas")
        })
        .collect();
    let window = Duration::from_secs(option(&args, "--window").unwrap_or(10));
    let yaraus = env!("CARGO_BIN_EXE_yaraus");
    let mut all = Vec::new();
    for &n in &sizes {
        let figures = measure(yaraus, n, window);
        eprintln!(
            "{n} leases: {:.0} scripts/s, {:.0} commands/s, {:.1}% CPU",
            figures.scripts_per_s, figures.commands_per_s, figures.cpu_percent
        );
        all.push(figures);
    }
    report(&all, window);
}

fn measure(yaraus: &str, n: usize, window: Duration) -> Figures {
    let server = start_redis(false);
    let url = server.url();
    let max = (n as u64).max(2) * 2;
    let init = Command::new(yaraus)
        .args([
            "--quiet",
            "--redis",
            &url,
            "init",
            "--min",
            "1",
            "--max",
            &max.to_string(),
        ])
        .status()
        .expect("yaraus init");
    assert!(init.success(), "yaraus init failed");
    let mut runs: Vec<Child> = (0..n).map(|_| start_run(yaraus, &url)).collect();
    wait_leased(&server, n, SETTLE);
    let (s0, c0, cpu0, t0) = (
        scripts(&server),
        commands(&server),
        server_cpu(&server),
        Instant::now(),
    );
    std::thread::sleep(window);
    let (s1, c1, cpu1) = (scripts(&server), commands(&server), server_cpu(&server));
    let elapsed = t0.elapsed().as_secs_f64();
    let (rss_kib, pss_kib) = memory(&runs);
    for run in &mut runs {
        // SIGTERM: each run stops its command and releases its id.
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(run.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    for run in &mut runs {
        let _ = run.wait();
    }
    Figures {
        leases: n,
        scripts_per_s: (s1 - s0) as f64 / elapsed,
        commands_per_s: (c1 - c0) as f64 / elapsed,
        cpu_percent: (cpu1 - cpu0) / elapsed * 100.0,
        rss_kib,
        pss_kib,
    }
}

fn start_run(yaraus: &str, url: &str) -> Child {
    Command::new(yaraus)
        .args(["--quiet", "--redis", url, "run", "--interval", INTERVAL])
        .args(["--delay", "0s", "--no-safeguards", "--", "sleep", "3600"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn yaraus run")
}

fn commands(server: &RedisServer) -> u64 {
    let v = server.info_field("stats", "total_commands_processed");
    v.and_then(|v| v.parse().ok())
        .expect("total_commands_processed")
}

/// Medians over the runs of (yaraus, watchdog) resident and proportional
/// set sizes, KiB. The watchdog is yaraus's one child.
fn memory(runs: &[Child]) -> ((u64, u64), (u64, u64)) {
    let (mut rss, mut pss) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
    for run in runs {
        let pid = run.id();
        let Some(watchdog) = children(pid).first().copied() else {
            continue;
        };
        rss.0.push(kib(&format!("/proc/{pid}/status"), "VmRSS:"));
        rss.1
            .push(kib(&format!("/proc/{watchdog}/status"), "VmRSS:"));
        pss.0
            .push(kib(&format!("/proc/{pid}/smaps_rollup"), "Pss:"));
        pss.1
            .push(kib(&format!("/proc/{watchdog}/smaps_rollup"), "Pss:"));
    }
    (
        (median(rss.0), median(rss.1)),
        (median(pss.0), median(pss.1)),
    )
}

fn children(pid: u32) -> Vec<u32> {
    let path = format!("/proc/{pid}/task/{pid}/children");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

fn kib(path: &str, field: &str) -> u64 {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

fn report(all: &[Figures], window: Duration) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/figures");
    std::fs::create_dir_all(&dir).expect("docs/figures");
    let (mut load, mut cpu) = (String::from("series,x,y\n"), String::from("series,x,y\n"));
    println!("\nRenewal load on one Redis, each run renewing every {INTERVAL}, over {window:?}:\n");
    println!(
        "| leases | scripts/s (per lease) | commands/s, with those in scripts | server CPU \
         | yaraus RSS / PSS | watchdog RSS / PSS |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for f in all {
        let per = f.scripts_per_s / f.leases as f64;
        println!(
            "| {} | {:.0} ({per:.2}) | {:.0} | {:.1}% | {} / {} KiB | {} / {} KiB |",
            f.leases,
            f.scripts_per_s,
            f.commands_per_s,
            f.cpu_percent,
            f.rss_kib.0,
            f.pss_kib.0,
            f.rss_kib.1,
            f.pss_kib.1
        );
        let _ = writeln!(load, "scripts/s,{},{:.1}", f.leases, f.scripts_per_s);
        let _ = writeln!(
            load,
            "commands/s (with those in scripts),{},{:.1}",
            f.leases, f.commands_per_s
        );
        let _ = writeln!(cpu, "server CPU,{},{:.2}", f.leases, f.cpu_percent);
    }
    std::fs::write(dir.join("renewal_load.csv"), load).expect("renewal_load.csv");
    std::fs::write(dir.join("renewal_cpu.csv"), cpu).expect("renewal_cpu.csv");
}
