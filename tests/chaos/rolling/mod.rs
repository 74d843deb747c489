//! A rolling replacement with no operator: three `seq` nodes, three hilo
//! shards and three lock masters (every one `appendfsync always`), each
//! wiped and restarted empty in turn while clients keep taking ids, blocks
//! and locks; between two wipes, once the wiped node votes again, another
//! node restarts from its AOF, a third is frozen for a moment, and the pool
//! of the `run` clients loses its data: its master restarted empty, or a
//! Sentinel failover (in turn, so that every cycle of three wipes has both).
//! Nobody runs `set-floor`, sets a counter or runs `yaraus init`: the wiped
//! nodes heal by themselves (src/seq/heal.rs), so that the next wipe still
//! leaves a majority of holders, and the run clients create the pool again
//! (`run --min/--max`).
//!
//! * [`nodes`]: the three deployments and the wipe of one node of each;
//! * [`load`]: `seq serve` and its clients, `seq next`, the hilo agent on
//!   `--every` and `hilo next`, lock holders over the three masters;
//! * [`history`]: every call of that load is recorded (when it began and
//!   ended, on this process's monotonic clock, and what it got) and checked
//!   afterwards: no id twice and real-time order for the sequence (`seq
//!   next` and `seq serve` together: one sequence); no id in two hilo
//!   blocks; no fencing token twice, and real-time order for the tokens;
//! * [`group`]: the pool's Redis, a master and a replica without
//!   persistence behind three sentinels, and its two faults;
//! * [`runs`]: the chaos fleet of `run --sentinel ... --min 1 --max 3`
//!   clients, whose children's lives are checked for overlaps
//!   ([`crate::chaos::lives`]).
//!
//! The report line gives the calls answered, the time from each wipe to the
//! node voting again, and the run figures: lives, overlaps, the pool's
//! restarts and failovers, and the time from each to every id held again.

mod gated;
mod group;
mod history;
mod load;
mod nodes;
mod runs;

use crate::chaos::figures::{Budget, assert_no_overlap};
use crate::chaos::harness::serial;
use load::{Answered, Load, ShowLogs};
use nodes::{Deployments, wipe_and_heal};
use runs::{PoolFault, RunFigures, Runs};
use std::time::Duration;

/// The nearest-rank p50 and the max of `samples`, in ms ("-" for none).
pub(crate) fn p50_max(mut samples: Vec<Duration>) -> (String, String) {
    samples.sort();
    let ms = |d: Option<&Duration>| d.map_or("-".to_string(), |d| d.as_millis().to_string());
    let p50 = samples.get(samples.len().saturating_sub(1) / 2);
    (ms(p50), ms(samples.last()))
}

/// The report line, on stderr and in `$CHAOS_REPORT` (scripts/chaos.sh).
fn report(cycles: usize, a: &Answered, heals: Vec<Duration>, runs: &RunFigures) {
    let (heal_p50, heal_max) = p50_max(heals);
    let (pool_p50, pool_max) = p50_max(runs.recoveries.clone());
    let line = format!(
        "rolling: cycles={cycles} wipes={} calls={} answered={} ({:.2}%) \
         duplicates=0 order_violations=0 heal_p50={heal_p50}ms heal_max={heal_max}ms \
         run_lives={} run_overlaps={} run_killed={} run_exit125={} pool_restarts={} \
         failovers={} switches={} pools_created={} pool_recovery_p50={pool_p50}ms pool_recovery_max={pool_max}ms",
        cycles * 9,
        a.calls,
        a.answered,
        100.0 * a.answered as f64 / a.calls.max(1) as f64,
        runs.outcome.lives.len(),
        runs.outcome.overlaps.len(),
        runs.outcome.killed,
        runs.outcome.failed,
        runs.restarts,
        runs.failovers,
        runs.switches,
        runs.created,
    );
    say(&line);
}

/// `line` on stderr and in `$CHAOS_REPORT` (scripts/chaos.sh).
pub(crate) fn say(line: &str) {
    eprintln!("chaos: {line}");
    if let Some(path) = std::env::var_os("CHAOS_REPORT") {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("open $CHAOS_REPORT");
        writeln!(f, "{line}").expect("write $CHAOS_REPORT");
    }
}

#[test]
fn a_rolling_replacement_of_every_node_heals_with_no_operator_and_no_value_twice() {
    let _serial = serial();
    let mut d = Deployments::start();
    let scratch = tempfile::tempdir().unwrap();
    let load = Load::start(&d, scratch.path());
    // On a failure, the services' logs say what they were doing.
    let _logs = ShowLogs(scratch.path().to_path_buf());
    let mut runs = Runs::start();
    let budget = Budget::new(1);
    let (mut cycles, mut heals, mut step) = (0, Vec::new(), 0);
    while budget.more(cycles) {
        for i in 0..3 {
            heals.extend(wipe_and_heal(&mut d, i));
            // Between two wipes: another node restarts from its AOF, a
            // third is frozen for a moment, the pool loses its data.
            d.seq[(i + 1) % 3].restart();
            d.lock[(i + 1) % 3].restart();
            d.hilo[(i + 2) % 3].sigstop();
            std::thread::sleep(Duration::from_millis(500));
            d.hilo[(i + 2) % 3].sigcont();
            let faults = [PoolFault::RestartEmpty, PoolFault::Failover];
            runs.fault(faults[step % 2]);
            step += 1;
        }
        cycles += 1;
    }
    let answered = load.finish();
    let run = runs.finish();
    report(cycles, &answered, heals, &run);
    assert!(
        answered.answered > 0,
        "no call was answered: the scenario proves nothing"
    );
    assert!(
        !run.outcome.lives.is_empty(),
        "no run client ever held an id: the scenario proves nothing"
    );
    assert_no_overlap("rolling replacement (run clients)", &run.outcome);
}
