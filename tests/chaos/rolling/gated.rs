//! The rolling replacement as an operator would run it from a script, with
//! no sleep and no knowledge of the quarantine: wipe one node of every
//! deployment, wait on `yaraus health --wait` for each deployment, wipe the
//! next node at once; under the same load and the same history checks.
//! A gate that does not return 0 is a stuck state: the test counts them
//! and fails on the first, since the next wipe would then lose a majority.

use super::load::{Load, ShowLogs};
use super::nodes::{Deployments, urls, wipe};
use super::{p50_max, say};
use crate::chaos::figures::Budget;
use crate::chaos::harness::serial;
use std::process::{Child, Stdio};
use std::time::Instant;

/// The gate's bound: the quarantine (10 s) with room for a loaded machine.
const GATE: &str = "90s";
/// How long the load may take to create its counters.
const START: std::time::Duration = std::time::Duration::from_secs(60);

/// `yaraus health --wait` over one deployment, started.
fn gate(urls: &[String], log: &std::path::Path) -> Child {
    crate::chaos::common::yaraus()
        .args(["health", "--wait", GATE])
        .args(urls)
        .stdout(std::fs::File::create(log.with_extension("out")).unwrap())
        .stderr(std::fs::File::create(log).unwrap())
        .stdin(Stdio::null())
        .spawn()
        .expect("start yaraus health")
}

#[test]
fn a_rolling_replacement_gated_only_by_health_wait_leaves_no_stuck_state() {
    let _serial = serial();
    let mut d = Deployments::start();
    let scratch = tempfile::tempdir().unwrap();
    let load = Load::start(&d, scratch.path());
    let _logs = ShowLogs(scratch.path().to_path_buf());
    // As the runbook: everything held before the first step (the load
    // creates its counters as it starts).
    for list in [urls(&d.seq), urls(&d.hilo), urls(&d.lock)] {
        crate::chaos::common::wait_until("the load's counters held on every node", START, || {
            let held = crate::chaos::common::yaraus()
                .arg("health")
                .args(&list)
                .output()
                .expect("run yaraus health")
                .status
                .success();
            if !held {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            held
        });
    }
    let budget = Budget::new(1);
    let (mut cycles, mut steps) = (0, Vec::new());
    while budget.more(cycles) {
        for i in 0..3 {
            let started = Instant::now();
            wipe(&mut d, i);
            let lists = [urls(&d.seq), urls(&d.hilo), urls(&d.lock)];
            let gates: Vec<(Child, std::path::PathBuf)> = ["seq", "hilo", "lock"]
                .iter()
                .zip(&lists)
                .map(|(name, list)| {
                    let log = scratch.path().join(format!("gate-{name}-{cycles}-{i}.log"));
                    (gate(list, &log), log)
                })
                .collect();
            for (mut child, log) in gates {
                let status = child.wait().expect("wait for yaraus health");
                assert!(
                    status.success(),
                    "a stuck state after wiping node {i} (cycle {cycles}): health --wait \
                     exited {status}:\n{}\n{}",
                    std::fs::read_to_string(log.with_extension("out")).unwrap_or_default(),
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            steps.push(started.elapsed());
        }
        cycles += 1;
    }
    let answered = load.finish();
    let (p50, max) = p50_max(steps.clone());
    let line = format!(
        "rolling-gated: cycles={cycles} steps={} stuck=0 calls={} answered={} duplicates=0 \
         order_violations=0 step_p50={p50}ms step_max={max}ms",
        steps.len(),
        answered.calls,
        answered.answered,
    );
    say(&line);
    assert!(
        answered.answered > 0,
        "no call was answered: the scenario proves nothing"
    );
}
