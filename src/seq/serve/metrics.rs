//! What `seq serve` shows on `--metrics-listen`: its rounds (accepted and
//! failed, per sequence), their latency, the ids handed out, the nodes
//! that pass the health probe, and the wrong passwords; readiness goes to
//! the shared [`Metrics`] (`/readyz`). The background sweep's (each node's
//! counters held, quarantined, missing) are [`SweepMetrics`], which `hilo
//! agent` shares.
//!
//! The handles are registered into the process's registry when the server
//! is configured ([`ServeMetrics::register`], before the first scrape can
//! come), and recorded where the events happen: the sequencers
//! (`batch.rs`), the health probe (`health.rs`), the sweep, the sessions
//! (`session.rs`). Without `--metrics-listen` the struct is empty and each
//! method returns at once.
//!
//! A client names the sequences, so their series are bounded
//! ([`crate::metrics::MAX_SEQUENCE_SERIES`] names, the rest counted under `sequence=""`)
//! and a name's series go when its sequencer retires; the shared
//! `metrics/labels.rs` keeps that bound and escapes the names.

use crate::metrics::{Labels, Metrics, Sequences, latency_histogram};
use crate::seq::SweepMetrics;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use std::sync::Arc;
use std::time::Duration;

/// seq serve's metric handles; cheap to clone, a no-op when off.
#[derive(Clone, Default)]
pub struct ServeMetrics {
    shared: Metrics,
    series: Option<Arc<Series>>,
    /// The background sweep's, shared with `hilo agent`.
    sweeps: SweepMetrics,
}

struct Series {
    /// Which sequences have series of their own.
    sequences: Sequences,
    nodes_ok: Gauge,
    nodes: Gauge,
    rounds: Family<Labels, Counter>,
    failed_rounds: Family<Labels, Counter>,
    round_latency: Histogram,
    ids_handed_out: Family<Labels, Counter>,
    auth_failures: Counter,
}

impl Series {
    fn register(r: &mut Registry) -> Series {
        let series = Series {
            sequences: Sequences::default(),
            nodes_ok: Gauge::default(),
            nodes: Gauge::default(),
            rounds: Family::default(),
            failed_rounds: Family::default(),
            round_latency: latency_histogram(),
            ids_handed_out: Family::default(),
            auth_failures: Counter::default(),
        };
        r.register(
            "seq_nodes_ok",
            "Nodes that passed seq serve's last health probe (answer, durable where required)",
            series.nodes_ok.clone(),
        );
        r.register(
            "seq_nodes",
            "Nodes behind seq serve (a majority of them must pass the probe)",
            series.nodes.clone(),
        );
        r.register(
            "seq_rounds",
            "Majority rounds of seq serve that a majority accepted, per sequence",
            series.rounds.clone(),
        );
        r.register(
            "seq_failed_rounds",
            "Majority rounds of seq serve that ended in an error, per sequence",
            series.failed_rounds.clone(),
        );
        r.register_with_unit(
            "seq_round_latency",
            "Time of one accepted majority round of seq serve",
            Unit::Seconds,
            series.round_latency.clone(),
        );
        r.register(
            "ids_handed_out",
            "Ids handed out by seq serve, per sequence",
            series.ids_handed_out.clone(),
        );
        r.register(
            "seq_auth_failures",
            "Wrong passwords sent to seq serve (AUTH, HELLO AUTH)",
            series.auth_failures.clone(),
        );
        series
    }
}

impl ServeMetrics {
    /// seq serve's metrics, registered into `metrics` (none when it is off).
    pub fn register(metrics: &Metrics) -> ServeMetrics {
        ServeMetrics {
            shared: metrics.clone(),
            series: metrics.register(Series::register).map(Arc::new),
            sweeps: SweepMetrics::register(metrics),
        }
    }

    /// Where the background sweep records what it finds.
    pub fn sweeps(&self) -> SweepMetrics {
        self.sweeps.clone()
    }

    fn with(&self, f: impl FnOnce(&Series)) {
        if let Some(series) = &self.series {
            f(series);
        }
    }

    /// What `/readyz` answers: whether a majority passed the last probe.
    pub fn set_ready(&self, ready: bool) {
        self.shared.set_ready(ready);
    }

    /// The health probe found `ok` of `total` nodes fit to vote.
    pub fn nodes(&self, ok: usize, total: usize) {
        self.with(|m| {
            m.nodes_ok.set(i64::try_from(ok).unwrap_or(i64::MAX));
            m.nodes.set(i64::try_from(total).unwrap_or(i64::MAX));
        });
    }

    /// A round of `sequence` accepted by a majority handed out `ids` ids
    /// (counted under `sequence=""` beyond the bound of `metrics/labels.rs`).
    pub fn round(&self, sequence: &str, ids: u64, latency: Duration) {
        self.with(|m| {
            let labels = m.sequences.labels(sequence);
            m.rounds.get_or_create(&labels).inc();
            m.ids_handed_out.get_or_create(&labels).inc_by(ids);
            m.round_latency.observe(latency.as_secs_f64());
        });
    }

    /// A round of `sequence` ended in an error.
    pub fn round_failed(&self, sequence: &str) {
        self.with(|m| {
            let labels = m.sequences.labels(sequence);
            m.failed_rounds.get_or_create(&labels).inc();
        });
    }

    /// The sequencer of `sequence` retired: its series go, and make room
    /// for another name's. Its caller makes sure no round of the same name
    /// is recorded meanwhile (the registry lock of `batch.rs`).
    pub fn retired(&self, sequence: &str) {
        self.with(|m| {
            if let Some(labels) = m.sequences.forget(sequence) {
                m.rounds.remove(&labels);
                m.failed_rounds.remove(&labels);
                m.ids_handed_out.remove(&labels);
            }
        });
    }

    /// A client sent a wrong password.
    pub fn auth_failure(&self) {
        self.with(|m| {
            m.auth_failures.inc();
        });
    }
}

#[cfg(test)]
mod tests {
    use super::ServeMetrics;
    use crate::metrics::{Kind, Metrics};
    use std::time::Duration;

    #[test]
    fn rounds_are_counted_per_sequence() {
        let m = ServeMetrics::register(&Metrics::new(Kind::SeqServe));
        m.round("orders", 5, Duration::from_millis(1));
        m.round_failed("orders");
        m.nodes(2, 3);
        let text = m.shared.render();
        let line = "yaraus_ids_handed_out_total{sequence=\"orders\"} 5";
        assert!(text.lines().any(|l| l == line), "{text}");
        assert!(!text.contains("claims"), "{text}");
        crate::metrics::format::assert_described(&text);
    }

    #[test]
    fn a_retired_sequence_s_series_go_and_the_others_stay() {
        let m = ServeMetrics::register(&Metrics::new(Kind::SeqServe));
        m.round("a", 1, Duration::ZERO);
        m.round_failed("a");
        m.round("b", 1, Duration::ZERO);
        m.retired("a");
        m.retired("never served");
        let text = m.shared.render();
        assert!(!text.contains("sequence=\"a\""), "{text}");
        assert_eq!(text.matches("sequence=\"b\"").count(), 2, "{text}");
    }

    #[test]
    fn off_records_nothing() {
        let m = ServeMetrics::register(&Metrics::off());
        assert!(m.series.is_none());
        m.round("a", 1, Duration::ZERO);
        m.auth_failure();
    }
}
