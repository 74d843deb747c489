//! Healing with no request: a long-running subcommand finds a node
//! restarted empty by its own background sweep (src/seq/sweep.rs),
//! quarantines it and sets it again after the quarantine, with no client
//! call and no run of its own; its metrics show the marks and repairs and
//! pass promtool. Real redis-servers that persist every write; the wipe is
//! a SIGKILL and a restart without the data files.
//!
//! * `seq_serve.rs`: `seq serve` with no client after the wipe.
//! * `hilo_agent.rs`: `hilo agent --every 1h`: its lock's fencing counter.
//!
//! Each takes the quarantine plus up to two sweeps (about 15 s): the wait
//! is for the repair, bounded by [`HEALED_WITHIN`], never a sleep.

use crate::common;

mod hilo_agent;
mod seq_serve;

use common::metrics::Endpoint;
use std::collections::BTreeMap;
use std::time::Duration;

/// The bound on a repair with no request: the quarantine (10 s) and two
/// sweeps (5 s each), with room for a loaded machine.
pub const HEALED_WITHIN: Duration = Duration::from_secs(45);

/// The value of the one sample whose name and labels contain every part.
pub fn sample(samples: &BTreeMap<String, f64>, parts: &[&str]) -> Option<f64> {
    let mut found = samples
        .iter()
        .filter(|(name, _)| parts.iter().all(|p| name.contains(p)));
    let (_, value) = found.next()?;
    assert!(found.next().is_none(), "{parts:?} names several samples");
    Some(*value)
}

/// Waits until the sweeps' metrics on `metrics` show `node` (its address)
/// holding its `kind` counter, marked once and repaired once; the page
/// passes promtool.
pub fn assert_sweep_metrics(metrics: &Endpoint, node: &str, kind: &str) {
    let node = format!("node=\"{node}\"");
    let kind = format!("kind=\"{kind}\"");
    common::wait_until("the sweep's metrics of the repair", common::EVENT, || {
        let samples = metrics.scrape();
        let state = |state: &str| {
            sample(
                &samples,
                &["yaraus_majority_counters{", &node, &kind, state],
            )
        };
        let heals = |action: &str| {
            sample(
                &samples,
                &["yaraus_sweep_heals_total{", &node, &kind, action],
            )
        };
        state("\"holding\"") == Some(1.0)
            && state("\"quarantined\"") == Some(0.0)
            && heals("\"marked\"") == Some(1.0)
            && heals("\"repaired\"") == Some(1.0)
    });
    let samples = metrics.scrape();
    assert_eq!(
        sample(&samples, &["yaraus_oldest_quarantine_seconds{", &node]),
        Some(0.0),
        "{samples:#?}"
    );
    assert!(samples["yaraus_sweeps_total"] >= 2.0, "{samples:#?}");
    metrics.assert_promtool_passes();
}
