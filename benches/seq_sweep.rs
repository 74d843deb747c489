//! The clients sweep of the sequence benchmark:
//! `redis-benchmark INCR` at 1 to 1,000 clients, and at 50 clients
//! pipelining 16, against `yaraus seq serve` over three `appendfsync
//! always` nodes, one `appendfsync always` Redis (the durable single node
//! it is compared with) and one Redis without persistence.
//!
//! The machine these figures come from is shared and noisy (two cores, the
//! load generator and every server on them), so the targets are measured
//! interleaved: each round runs every target at every client count, the
//! targets' order turning from round to round, and the tables give the
//! median of the rounds beside the load average. Several serve binaries
//! (`--yaraus PATH`, repeated) are series of their own, measured the same
//! way: an A/B of two builds in one run.
//!
//! The medians also go to a CSV file (`series,x,y`: the series' label, the
//! clients, ids/s), from which the documentation's curve is drawn.

use std::fmt::Write as _;
use std::path::Path;

/// The client counts of the curve.
pub const CLIENTS: [usize; 6] = [1, 10, 50, 100, 500, 1000];
/// The pipelined point: 50 clients, 16 requests each in flight.
const PIPELINED: (usize, usize) = (50, 16);

/// One series: a label and the port that serves it.
pub struct Target {
    pub label: String,
    pub port: u16,
    /// Whether its medians go to the CSV (not an A/B's other binary).
    pub curve: bool,
}

/// Requests per redis-benchmark run at `clients`: enough that the run
/// lasts a few seconds at the rates seen here, and at least 100 per client.
fn requests(clients: usize, most: usize) -> usize {
    (clients * 1000)
        .clamp(2000, most.max(2000))
        .max(clients * 100)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Runs the sweep (`rounds` rounds, at most `most` requests a run), prints
/// its tables, and writes the medians to `csv`.
pub fn sweep(
    targets: &[Target],
    rounds: usize,
    most: usize,
    csv: &Path,
    bench: impl Fn(u16, usize, usize, usize, &str) -> f64,
) {
    let mut points: Vec<(usize, usize)> = CLIENTS.iter().map(|&c| (c, 1)).collect();
    points.push(PIPELINED);
    // rates[target][point]: one figure per round.
    let mut rates = vec![vec![Vec::new(); points.len()]; targets.len()];
    let load_before = load_average();
    for round in 0..rounds {
        for (p, &(clients, pipeline)) in points.iter().enumerate() {
            for k in 0..targets.len() {
                let t = (k + round) % targets.len();
                let key = format!("sweep-{t}-{clients}-{pipeline}");
                let n = requests(clients, most) * pipeline.min(4);
                let rps = bench(targets[t].port, clients, pipeline, n, &key);
                rates[t][p].push(rps);
            }
        }
    }
    let load_after = load_average();
    let medians: Vec<Vec<f64>> = rates
        .into_iter()
        .map(|per| per.into_iter().map(median).collect())
        .collect();
    print_table(
        targets,
        &points,
        &medians,
        rounds,
        &load_before,
        &load_after,
    );
    let mut text = String::from("series,x,y\n");
    for (t, target) in targets.iter().enumerate().filter(|(_, t)| t.curve) {
        for (p, &(clients, pipeline)) in points.iter().enumerate() {
            if pipeline == 1 {
                let _ = writeln!(text, "{},{clients},{:.0}", target.label, medians[t][p]);
            }
        }
    }
    if let Some(dir) = csv.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    match std::fs::write(csv, text) {
        Ok(()) => println!("The medians are in {}.\n", csv.display()),
        Err(e) => eprintln!("cannot write {}: {e}", csv.display()),
    }
}

fn print_table(
    targets: &[Target],
    points: &[(usize, usize)],
    medians: &[Vec<f64>],
    rounds: usize,
    load_before: &str,
    load_after: &str,
) {
    println!("## `seq serve` against one durable Redis, by clients\n");
    println!(
        "`redis-benchmark -c C [-P 16] INCR`, median ids/s of {rounds} interleaved rounds; \
         load average {load_before} before, {load_after} after.\n"
    );
    let mut head = String::from("| clients |");
    let mut rule = String::from("| ---: |");
    for t in targets {
        let _ = write!(head, " {} |", t.label);
        rule.push_str(" ---: |");
    }
    // The first series against the last two (durable, then plain Redis).
    let n = targets.len();
    println!("{head} first / durable | first / plain |\n{rule} ---: | ---: |");
    for (p, &(clients, pipeline)) in points.iter().enumerate() {
        let mut row = if pipeline == 1 {
            format!("| {clients} |")
        } else {
            format!("| {clients}, `-P {pipeline}` |")
        };
        for per_target in medians {
            let _ = write!(row, " {:.0} |", per_target[p]);
        }
        let _ = write!(
            row,
            " {:.2} | {:.2} |",
            medians[0][p] / medians[n - 2][p],
            medians[0][p] / medians[n - 1][p]
        );
        println!("{row}");
    }
    println!();
}
