//! What `yaraus health` costs against the number of counters, and how long
//! its gate takes to heal a wiped node: three redis-servers with
//! `appendfsync always`, N sequences on each (written directly, as a
//! deployment that had used them), then
//!
//! * `health`: one look at every counter on every node, a whole process
//!   timed from spawn to exit (the median of `--runs`);
//! * `health --wait 5m` after one node was emptied (`FLUSHALL`): the time
//!   until it returns 0, every counter marked, quarantined (10 s on the
//!   node's clock) and set again, which bounds it from below.
//!
//! Figures go to stdout as a Markdown table; nothing is asserted.
//! `cargo bench --bench health -- --runs N --counters 100,10000`.

#[path = "../tests/common/mod.rs"]
mod common;
mod figures;

use common::RedisServer;
use figures::{option, percentile, start_redis};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// `yaraus health ARGS` over `servers`, stdout to /dev/null: its wall time
/// and exit status.
fn timed(servers: &[RedisServer], args: &[&str]) -> (Duration, i32) {
    let mut cmd = common::yaraus();
    cmd.arg("health").args(args);
    for s in servers {
        cmd.arg("--redis").arg(s.url());
    }
    let started = Instant::now();
    let status = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn yaraus");
    (started.elapsed(), status.code().unwrap_or(-1))
}

/// `n` sequences at 5 on every server, in pipelines of 1,000.
fn fill(servers: &[RedisServer], n: usize) {
    for s in servers {
        let mut conn = s.conn();
        for chunk in (0..n).collect::<Vec<_>>().chunks(1000) {
            let mut pipe = redis::pipe();
            for i in chunk {
                pipe.cmd("SET")
                    .arg(format!("yaraus:seq:n{i}"))
                    .arg(5)
                    .ignore();
            }
            let _: () = pipe.query(&mut conn).expect("fill");
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = option(&args, "--runs").unwrap_or(5);
    let counts: String = option(&args, "--counters").unwrap_or("100,1000,10000".into());
    println!(
        "| sequences × 3 nodes | `health` (median of {runs}) | `health --wait` after one node emptied | exit |"
    );
    println!("| ---: | ---: | ---: | ---: |");
    for n in counts.split(',').filter_map(|c| c.parse::<usize>().ok()) {
        let servers: Vec<RedisServer> = (0..3).map(|_| start_redis(true)).collect();
        fill(&servers, n);
        let mut looks: Vec<Duration> = (0..runs)
            .map(|_| {
                let (took, code) = timed(&servers, &[]);
                assert_eq!(code, 0, "health of an intact deployment");
                took
            })
            .collect();
        looks.sort();
        let _: () = servers[2].query(&["FLUSHALL"]);
        let (gate, code) = timed(&servers, &["--wait", "5m"]);
        println!(
            "| {n} | {:.0} ms | {:.1} s | {code} |",
            percentile(&looks, 0.5).as_secs_f64() * 1000.0,
            gate.as_secs_f64()
        );
    }
}
