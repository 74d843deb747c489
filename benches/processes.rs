//! Whole processes, timed from outside: `flock FILE true`, `yaraus run --
//! true`, `yaraus lock NAME -- true` on one and three masters (and a static
//! build's), and `etcdctl lock NAME true` when a local etcd can be started,
//! all taking turns. Part of the `yaraus` bench (`benches/yaraus.rs`).

use crate::common::free_port;
use crate::figures::percentile;
use crate::{Servers, ms, take_turns};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use yaraus::error::Result;

/// A local etcd; killed when dropped.
pub struct Etcd {
    child: Child,
    pub endpoint: String,
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A local etcd for the `etcdctl lock` comparison, if etcd is installed.
pub fn start_etcd(dir: &Path) -> Option<Etcd> {
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
    let etcd = Etcd { child, endpoint };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let ok = Command::new("etcdctl")
            .env("ETCDCTL_API", "3")
            .args(["--endpoints", &etcd.endpoint, "endpoint", "health"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if ok {
            return Some(etcd);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The whole-process commands, each built once (spawned anew at every
/// run), with their names in the table: flock, `yaraus run`, `yaraus
/// lock` on one and three masters (and the same with `static_bin`), and
/// `etcdctl lock` when etcd runs.
pub fn process_commands(
    s: &Servers,
    yaraus: &str,
    static_bin: Option<&str>,
) -> (Vec<String>, Vec<Command>) {
    let mut flock = Command::new("flock");
    flock.arg(s.dir.join("flock.lock")).arg("true");
    let run_with = |bin: &str| {
        let mut c = Command::new(bin);
        c.args(["--quiet", "--redis", &s.url, "run", "--delay", "0"]);
        c.args(["--no-safeguards", "--", "true"]);
        c
    };
    let lock_with = |bin: &str, urls: &[String]| {
        let mut c = Command::new(bin);
        c.arg("--quiet");
        for u in urls {
            c.args(["--redis", u]);
        }
        c.args(["lock", "bench-lock", "--", "true"]);
        c
    };
    let mut names: Vec<String> = vec![
        "`flock FILE true`".into(),
        "`yaraus run --delay 0 --no-safeguards -- true`".into(),
        "`yaraus lock NAME -- true`, 1 master".into(),
        "`yaraus lock NAME -- true`, 3 masters (appendfsync always)".into(),
    ];
    let mut cmds: Vec<Command> = vec![
        flock,
        run_with(yaraus),
        lock_with(yaraus, &s.one),
        lock_with(yaraus, &s.three),
    ];
    if let Some(bin) = static_bin {
        names.push("static build: `yaraus run --delay 0 --no-safeguards -- true`".into());
        names.push("static build: `yaraus lock NAME -- true`, 1 master".into());
        names.push(
            "static build: `yaraus lock NAME -- true`, 3 masters (appendfsync always)".into(),
        );
        cmds.push(run_with(bin));
        cmds.push(lock_with(bin, &s.one));
        cmds.push(lock_with(bin, &s.three));
    }
    if let Some(etcd) = &s.etcd {
        names.push("`etcdctl lock NAME true`, local etcd".into());
        let mut c = Command::new("etcdctl");
        c.env("ETCDCTL_API", "3");
        c.args(["--endpoints", &etcd.endpoint, "lock", "bench-lock", "true"]);
        cmds.push(c);
    }
    for c in &mut cmds {
        c.stdout(Stdio::null()).stderr(Stdio::null());
    }
    (names, cmds)
}

/// Runs every command once a round, `runs` rounds after a few that warm
/// the page cache and the scripts (left out); the median and p90 of each.
pub fn time_processes(
    rt: &tokio::runtime::Runtime,
    mut cmds: Vec<Command>,
    runs: usize,
) -> Vec<(Duration, Duration)> {
    const WARM_UP: usize = 3;
    let rounds = runs + WARM_UP;
    let every = vec![rounds; cmds.len()];
    let turns = rt
        .block_on(take_turns(
            &mut cmds,
            rounds,
            &every,
            async |cmds, i| -> Result<()> {
                let status = cmds[i].status().expect("spawn");
                assert!(status.success(), "benchmark command failed: {status}");
                Ok(())
            },
        ))
        .unwrap();
    turns
        .into_iter()
        .map(|t| {
            let mut t = t[WARM_UP..].to_vec();
            t.sort();
            (percentile(&t, 0.5), percentile(&t, 0.9))
        })
        .collect()
}

/// The whole-process table: each command's median (p90) and its ratio to
/// flock's median, with the targets; etcd's row compares it with `yaraus
/// lock` on one master (figure 2, and figure 5 for the static build).
pub fn print_processes(
    names: &[String],
    figures: &[(Duration, Duration)],
    runs: usize,
    with_static: bool,
    with_etcd: bool,
) {
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
    for (name, (p50, p90)) in names.iter().zip(figures) {
        let ratio = p50.as_secs_f64() / flock_p50;
        let note = target(name);
        let extra = if name.starts_with("`etcdctl") {
            format!(
                "; yaraus lock (1 master) is {:.1}x faster (target ≥ 5x){}",
                p50.as_secs_f64() / figures[2].0.as_secs_f64(),
                if with_static {
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
    if !with_etcd {
        println!(
            "| `etcdctl lock NAME true` | etcd not installed (apt-get install etcd-server etcd-client) | |"
        );
    }
}
