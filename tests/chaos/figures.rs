//! The figures of a fault test: what the children's log says once the
//! fleet has finished ([`Outcome`]), how many trials a test runs
//! ([`Budget`]), and the one report line each test prints ([`Report`]).

use std::fs::OpenOptions;
use std::io::Write;
use std::time::{Duration, Instant};

use super::lives::{Life, Overlap};

/// What the children's log says once the fleet has finished.
#[derive(Default)]
pub struct Outcome {
    pub lives: Vec<Life>,
    pub overlaps: Vec<Overlap>,
    /// yaraus exits with 124 (the child killed because the claim was lost).
    pub killed: usize,
    /// Lives with no `stop` line: children SIGKILLed (by the watchdog).
    pub sigkilled: usize,
    /// yaraus exits with 125 ("another failure of yaraus"): not a safety
    /// matter, but a client that gives up where it should wait or retry.
    pub failed: usize,
}

impl Outcome {
    /// Adds another fleet's outcome (a test with a fleet per trial).
    pub fn add(&mut self, other: Outcome) {
        self.lives.extend(other.lives);
        self.overlaps.extend(other.overlaps);
        self.killed += other.killed;
        self.sigkilled += other.sigkilled;
        self.failed += other.failed;
    }

    /// Every overlap, printed with both lives.
    pub fn describe_overlaps(&self) -> String {
        self.overlaps
            .iter()
            .map(|o| o.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// How many trials a test runs: `CHAOS_TRIALS` (default `default`), or, when
/// `CHAOS_MINUTES` is set (the soak, scripts/chaos.sh), as many as fit in
/// this test's share of those minutes.
pub struct Budget {
    started: Instant,
    trials: usize,
    share: Option<Duration>,
}

/// How many fault tests share `CHAOS_MINUTES`.
pub const FAULT_TESTS: u32 = 8;

impl Budget {
    pub fn new(default: usize) -> Budget {
        let trials = std::env::var("CHAOS_TRIALS")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(default)
            .max(1);
        let share = std::env::var("CHAOS_MINUTES")
            .ok()
            .and_then(|m| m.parse::<f64>().ok())
            .map(|m| Duration::from_secs_f64(m * 60.0 / FAULT_TESTS as f64));
        Budget {
            started: Instant::now(),
            trials,
            share,
        }
    }

    /// Whether this is the soak (`CHAOS_MINUTES`).
    pub fn soak(&self) -> bool {
        self.share.is_some()
    }

    /// Whether to run another trial after `done` of them.
    pub fn more(&self, done: usize) -> bool {
        match self.share {
            Some(share) => done == 0 || self.started.elapsed() < share,
            None => done < self.trials,
        }
    }
}

/// One fault test's figures: printed as one line to stderr, and appended
/// to `$CHAOS_REPORT` (if set) for scripts/chaos.sh to aggregate.
pub struct Report {
    pub fault: &'static str,
    pub trials: usize,
    pub faults: usize,
    pub recoveries: Vec<Duration>,
}

impl Report {
    pub fn new(fault: &'static str) -> Report {
        Report {
            fault,
            trials: 0,
            faults: 0,
            recoveries: Vec::new(),
        }
    }

    /// Prints the line and records it.
    pub fn print(&self, outcome: &Outcome) {
        let mut ms: Vec<u128> = self.recoveries.iter().map(|d| d.as_millis()).collect();
        ms.sort_unstable();
        let p50 = ms.get(ms.len().saturating_sub(1) / 2).copied();
        let show = |v: Option<u128>| v.map_or("-".to_string(), |v| format!("{v}ms"));
        // One set of fields for the line on stderr and for $CHAOS_REPORT,
        // which scripts/chaos.sh reads.
        let fields = format!(
            "fault={} trials={} faults={} overlaps={} killed={} sigkilled={} lives={} exit125={}",
            self.fault,
            self.trials,
            self.faults,
            outcome.overlaps.len(),
            outcome.killed,
            outcome.sigkilled,
            outcome.lives.len(),
            outcome.failed,
        );
        eprintln!(
            "chaos: {fields} recovery p50={} max={}",
            show(p50),
            show(ms.last().copied()),
        );
        if let Some(path) = std::env::var_os("CHAOS_REPORT") {
            let samples: Vec<String> = ms.iter().map(|v| v.to_string()).collect();
            let line = format!("{fields} recovery_ms={}\n", samples.join(","));
            let mut f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .expect("open $CHAOS_REPORT");
            f.write_all(line.as_bytes()).expect("write $CHAOS_REPORT");
        }
    }
}

/// Asserts that the children's log shows no two overlapping lives.
pub fn assert_no_overlap(fault: &str, outcome: &Outcome) {
    assert!(
        outcome.overlaps.is_empty(),
        "{fault}: {} overlapping lives:\n{}",
        outcome.overlaps.len(),
        outcome.describe_overlaps()
    );
}
