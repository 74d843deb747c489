//! What the hilo agent shows on `--metrics-listen`: its cycles (those that
//! succeeded and those that failed), the windows it created, and the
//! windows open per shard as its last cycle saw them; readiness ("the last
//! cycle succeeded") goes to the shared [`Metrics`] (`/readyz`). With
//! `--every`, its lock's fencing counter on each shard, as the background
//! sweep finds it, is [`SweepMetrics`], which `seq serve` shares.
//!
//! Registered into the process's registry before the agent's first cycle
//! ([`AgentMetrics::register`]), recorded once per cycle
//! ([`AgentMetrics::cycle`]). Without `--metrics-listen` the struct is
//! empty and recording returns at once.

use super::agent::AgentRun;
use crate::error::Result;
use crate::metrics::{LabelValue, Labels, Metrics};
use crate::seq::SweepMetrics;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// The hilo agent's metric handles; a no-op when off.
pub struct AgentMetrics {
    shared: Metrics,
    series: Option<Series>,
    /// The background sweep's, shared with `seq serve`.
    sweeps: SweepMetrics,
}

struct Series {
    cycles: Counter,
    failed_cycles: Counter,
    windows_open: Family<Labels, Gauge>,
    windows_created: Counter,
}

impl Series {
    fn register(r: &mut Registry) -> Series {
        let series = Series {
            cycles: Counter::default(),
            failed_cycles: Counter::default(),
            windows_open: Family::default(),
            windows_created: Counter::default(),
        };
        r.register(
            "hilo_cycles",
            "Cycles of the hilo agent that succeeded",
            series.cycles.clone(),
        );
        r.register(
            "hilo_failed_cycles",
            "Cycles of the hilo agent that failed",
            series.failed_cycles.clone(),
        );
        r.register(
            "hilo_windows_open",
            "Id windows open (not used up) per shard, as the hilo agent last saw them",
            series.windows_open.clone(),
        );
        r.register(
            "hilo_windows_created",
            "Id windows the hilo agent created",
            series.windows_created.clone(),
        );
        series
    }
}

impl AgentMetrics {
    /// The agent's metrics, registered into `metrics` (none when it is off).
    pub fn register(metrics: &Metrics) -> AgentMetrics {
        AgentMetrics {
            shared: metrics.clone(),
            series: metrics.register(Series::register),
            sweeps: SweepMetrics::register(metrics),
        }
    }

    /// Where the background sweep of `--every` records what it finds.
    pub fn sweeps(&self) -> SweepMetrics {
        self.sweeps.clone()
    }

    /// Records a cycle: its outcome (and so readiness), the windows it
    /// created, and the windows open on each shard (`shards`: their labels,
    /// in `--redis` order, as the run's counts are).
    pub fn cycle(&self, shards: &[String], run: &Result<AgentRun>) {
        let ok = run.as_ref().is_ok_and(|run| run.failed.is_empty());
        self.shared.set_ready(ok);
        let Some(m) = &self.series else {
            return;
        };
        if ok {
            m.cycles.inc();
        } else {
            m.failed_cycles.inc();
        }
        let Ok(run) = run else {
            return;
        };
        m.windows_created.inc_by(run.created.len() as u64);
        for (shard, open) in shards.iter().zip(&run.open) {
            let labels = [("shard", LabelValue::new(shard))];
            m.windows_open
                .get_or_create(&labels)
                .set(i64::try_from(*open).unwrap_or(i64::MAX));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::AgentMetrics;
    use crate::error::Error;
    use crate::hilo::AgentRun;
    use crate::metrics::{Kind, Metrics};

    #[test]
    fn a_cycle_is_counted_with_its_windows_and_readiness() {
        let metrics = Metrics::new(Kind::HiloAgent);
        let agent = AgentMetrics::register(&metrics);
        let run = AgentRun {
            open: vec![3, 2],
            ..AgentRun::default()
        };
        agent.cycle(&["a:1".into(), "b:2".into()], &Ok(run));
        assert!(metrics.ready());
        agent.cycle(&[], &Err(Error::Unavailable("down".into())));
        assert!(!metrics.ready());
        let text = metrics.render();
        for line in [
            "yaraus_hilo_cycles_total 1",
            "yaraus_hilo_failed_cycles_total 1",
            "yaraus_hilo_windows_open{shard=\"b:2\"} 2",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
        crate::metrics::format::assert_described(&text);
        AgentMetrics::register(&Metrics::off()).cycle(&[], &Ok(AgentRun::default()));
    }
}
