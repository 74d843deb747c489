//! Metrics of the long-running subcommands (`seq serve`, `hilo agent`,
//! `index`, `run`), for `--metrics-listen`: one Prometheus registry per
//! process, and the names of everything it holds.
//!
//! Design: the subcommand makes one [`Metrics`] handle and passes clones of
//! it to the places where the events already happen (the claim keeper's
//! renewal loop, seq serve's rounds and health probe, the hilo agent's
//! cycle). Recording is an atomic add on a metric of the official client
//! (`prometheus-client`), so the supervision path never waits on a scrape:
//! the HTTP listener ([`http`]) only reads the registry, on its own task.
//! Without `--metrics-listen` the handle is [`Metrics::off`], whose every
//! method returns at once, so the call sites need no `if`.
//!
//! Why the registry's text encoder and not hand-formatted lines: the
//! exposition format has `# TYPE`/`# UNIT` lines and histogram buckets
//! that are easy to get subtly wrong; the client gets them right and keeps
//! up with the format. Two things it leaves to us: label values, which it
//! writes unescaped (`labels.rs` escapes them, and bounds how many sequences
//! have series), and the Prometheus text format, which it does not write
//! ([`mod@format`] derives it from its OpenMetrics text).
//!
//! Each subcommand exports the metrics that mean something for it
//! ([`Kind`]): a `run` shows its claim and clock, `seq serve` its rounds.
//!
//! Readiness (`/readyz`) is what each subcommand says it is: seq serve's
//! health probe sets it (a majority of nodes answer), the hilo agent's
//! cycle sets it (its last cycle succeeded); for `run` and `index` it is
//! "a claim is held and the command runs" ([`Metrics::command_running`]
//! together with the claims-held gauge the keeper keeps).

pub mod format;
pub mod http;
mod labels;

pub use labels::{MAX_SEQUENCE_SERIES, escape_label_value};

use labels::{LabelValue, Labels, Sequences};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// A handle to the process's metrics; cheap to clone, a no-op when off.
#[derive(Clone, Default)]
pub struct Metrics(Option<Arc<Inner>>);

/// Which subcommand serves the metrics: it decides which metrics are
/// exported (a `run` has no sequence rounds to show) and what `/readyz`
/// means.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// Rounds, ids handed out; ready when a majority of nodes answers.
    SeqServe,
    /// Cycles, windows; ready when the last cycle succeeded.
    HiloAgent,
    /// A slot's claim; ready when it is held and the command runs.
    Index,
    /// A worker id's claim and the clock offset; ready when it is held and
    /// the command runs.
    Run,
}

impl Kind {
    fn holds_a_claim(self) -> bool {
        matches!(self, Kind::Index | Kind::Run)
    }
}

struct Inner {
    registry: Registry,
    kind: Kind,
    ready: AtomicBool,
    /// Which sequences have series of their own.
    sequences: Sequences,
    claims_held: Gauge,
    claims_lost: Counter,
    renewals: Counter,
    renewal_failures: Counter,
    renewal_latency: Histogram,
    wait_shortfalls: Counter,
    clock_offset: Gauge<f64, AtomicU64>,
    seq_rounds: Family<Labels, Counter>,
    seq_failed_rounds: Family<Labels, Counter>,
    seq_round_latency: Histogram,
    ids_handed_out: Family<Labels, Counter>,
    seq_nodes_ok: Gauge,
    seq_nodes: Gauge,
    seq_auth_failures: Counter,
    hilo_cycles: Counter,
    hilo_failed_cycles: Counter,
    hilo_windows_open: Family<Labels, Gauge>,
    hilo_windows_created: Counter,
}

impl Inner {
    /// Registers the metrics of this subcommand; the others are still
    /// recorded (a no-op worth nothing) but not exported.
    fn register(&mut self) {
        if self.kind.holds_a_claim() {
            self.register_claim();
        }
        match self.kind {
            Kind::Run => self.register_run(),
            Kind::SeqServe => self.register_seq(),
            Kind::HiloAgent => self.register_hilo(),
            _ => {}
        }
    }

    /// A claim's holding and renewals (run, index).
    fn register_claim(&mut self) {
        // Disjoint fields: the registry is written, the metrics cloned.
        let r = &mut self.registry;
        r.register(
            "claims_held",
            "Claims (worker id, index slot) this process holds now",
            self.claims_held.clone(),
        );
        r.register(
            "claims_lost",
            "Claims lost: taken by another holder, or not renewed before their deadline",
            self.claims_lost.clone(),
        );
        r.register(
            "renewals",
            "Successful renewals of a claim",
            self.renewals.clone(),
        );
        r.register(
            "renewal_failures",
            "Renewals that did not happen (Redis unreachable, timeout, too few replicas)",
            self.renewal_failures.clone(),
        );
        r.register_with_unit(
            "renewal_latency",
            "Time from sending a renewal to its successful answer",
            Unit::Seconds,
            self.renewal_latency.clone(),
        );
    }

    /// What only run measures: WAIT shortfalls, the clock offset.
    fn register_run(&mut self) {
        // Disjoint fields: the registry is written, the metrics cloned.
        let r = &mut self.registry;
        r.register(
            "wait_shortfalls",
            "Renewals the replicas confirmed short of their majority (WAIT), still counted",
            self.wait_shortfalls.clone(),
        );
        r.register_with_unit(
            "clock_offset",
            "This host's wall clock minus the Redis server's, as last measured by run",
            Unit::Seconds,
            self.clock_offset.clone(),
        );
    }

    /// seq serve's nodes, rounds and ids.
    fn register_seq(&mut self) {
        // Disjoint fields: the registry is written, the metrics cloned.
        let r = &mut self.registry;
        r.register(
            "seq_nodes_ok",
            "Nodes that passed seq serve's last health probe (answer, durable where required)",
            self.seq_nodes_ok.clone(),
        );
        r.register(
            "seq_nodes",
            "Nodes behind seq serve (a majority of them must pass the probe)",
            self.seq_nodes.clone(),
        );
        r.register(
            "seq_rounds",
            "Majority rounds of seq serve that a majority accepted, per sequence",
            self.seq_rounds.clone(),
        );
        r.register(
            "seq_failed_rounds",
            "Majority rounds of seq serve that ended in an error, per sequence",
            self.seq_failed_rounds.clone(),
        );
        r.register_with_unit(
            "seq_round_latency",
            "Time of one accepted majority round of seq serve",
            Unit::Seconds,
            self.seq_round_latency.clone(),
        );
        r.register(
            "ids_handed_out",
            "Ids handed out by seq serve, per sequence",
            self.ids_handed_out.clone(),
        );
        r.register(
            "seq_auth_failures",
            "Wrong passwords sent to seq serve (AUTH, HELLO AUTH)",
            self.seq_auth_failures.clone(),
        );
    }

    /// The hilo agent's cycles and windows.
    fn register_hilo(&mut self) {
        // Disjoint fields: the registry is written, the metrics cloned.
        let r = &mut self.registry;
        r.register(
            "hilo_cycles",
            "Cycles of the hilo agent that succeeded",
            self.hilo_cycles.clone(),
        );
        r.register(
            "hilo_failed_cycles",
            "Cycles of the hilo agent that failed",
            self.hilo_failed_cycles.clone(),
        );
        r.register(
            "hilo_windows_open",
            "Id windows open (not used up) per shard, as the hilo agent last saw them",
            self.hilo_windows_open.clone(),
        );
        r.register(
            "hilo_windows_created",
            "Id windows the hilo agent created",
            self.hilo_windows_created.clone(),
        );
    }
}

/// Latency buckets from 0.5 ms to about 8 s: a round or a renewal is a
/// few fsyncs on a LAN, and anything beyond seconds is an outage.
fn latency_buckets() -> impl Iterator<Item = f64> {
    exponential_buckets(0.0005, 2.0, 15)
}

impl Metrics {
    /// No metrics: every method returns at once.
    pub fn off() -> Metrics {
        Metrics(None)
    }

    /// A registry with every metric of yaraus, at zero.
    pub fn new(kind: Kind) -> Metrics {
        let mut inner = Inner {
            registry: Registry::with_prefix("yaraus"),
            kind,
            ready: AtomicBool::new(false),
            sequences: Sequences::default(),
            claims_held: Gauge::default(),
            claims_lost: Counter::default(),
            renewals: Counter::default(),
            renewal_failures: Counter::default(),
            renewal_latency: Histogram::new(latency_buckets()),
            wait_shortfalls: Counter::default(),
            clock_offset: Gauge::default(),
            seq_rounds: Family::default(),
            seq_failed_rounds: Family::default(),
            seq_round_latency: Histogram::new(latency_buckets()),
            ids_handed_out: Family::default(),
            seq_nodes_ok: Gauge::default(),
            seq_nodes: Gauge::default(),
            seq_auth_failures: Counter::default(),
            hilo_cycles: Counter::default(),
            hilo_failed_cycles: Counter::default(),
            hilo_windows_open: Family::default(),
            hilo_windows_created: Counter::default(),
        };
        inner.register();
        Metrics(Some(Arc::new(inner)))
    }

    fn with(&self, f: impl FnOnce(&Inner)) {
        if let Some(inner) = &self.0 {
            f(inner);
        }
    }

    /// Whether metrics are collected at all.
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// A claim was taken (`true`) or ended (`false`).
    pub fn claim_held(&self, held: bool) {
        self.with(|m| {
            m.claims_held.inc_by(if held { 1 } else { -1 });
        });
    }

    /// A claim was lost while it was meant to be kept.
    pub fn claim_lost(&self) {
        self.with(|m| {
            m.claims_lost.inc();
        });
    }

    /// A renewal succeeded after `latency`.
    pub fn renewed(&self, latency: Duration) {
        self.with(|m| {
            m.renewals.inc();
            m.renewal_latency.observe(latency.as_secs_f64());
        });
    }

    /// A renewal did not happen.
    pub fn renewal_failed(&self) {
        self.with(|m| {
            m.renewal_failures.inc();
        });
    }

    /// `n` more writes were confirmed by fewer replicas than wanted.
    pub fn wait_shortfalls(&self, n: u64) {
        self.with(|m| {
            m.wait_shortfalls.inc_by(n);
        });
    }

    /// This host's clock offset from the server's, in seconds.
    pub fn clock_offset(&self, seconds: f64) {
        self.with(|m| {
            m.clock_offset.set(seconds);
        });
    }

    /// A round of `sequence` accepted by a majority handed out `ids` ids
    /// (counted under `sequence=""` beyond [`MAX_SEQUENCE_SERIES`]).
    pub fn seq_round(&self, sequence: &str, ids: u64, latency: Duration) {
        self.with(|m| {
            let labels = m.sequences.labels(sequence);
            m.seq_rounds.get_or_create(&labels).inc();
            m.ids_handed_out.get_or_create(&labels).inc_by(ids);
            m.seq_round_latency.observe(latency.as_secs_f64());
        });
    }

    /// A round of `sequence` ended in an error.
    pub fn seq_round_failed(&self, sequence: &str) {
        self.with(|m| {
            let labels = m.sequences.labels(sequence);
            m.seq_failed_rounds.get_or_create(&labels).inc();
        });
    }

    /// The sequencer of `sequence` retired: its series go, and make room
    /// for another name's. Its caller makes sure no round of the same name
    /// is recorded meanwhile (seq serve's registry lock).
    pub fn seq_retired(&self, sequence: &str) {
        self.with(|m| {
            if let Some(labels) = m.sequences.forget(sequence) {
                m.seq_rounds.remove(&labels);
                m.seq_failed_rounds.remove(&labels);
                m.ids_handed_out.remove(&labels);
            }
        });
    }

    /// Seq serve's health probe found `ok` of `total` nodes fit to vote.
    pub fn seq_nodes(&self, ok: usize, total: usize) {
        self.with(|m| {
            m.seq_nodes_ok.set(i64::try_from(ok).unwrap_or(i64::MAX));
            m.seq_nodes.set(i64::try_from(total).unwrap_or(i64::MAX));
        });
    }

    /// A client of seq serve sent a wrong password.
    pub fn seq_auth_failure(&self) {
        self.with(|m| {
            m.seq_auth_failures.inc();
        });
    }

    /// A cycle of the hilo agent ended: `ok`, and the windows created.
    pub fn hilo_cycle(&self, ok: bool, created: u64) {
        self.with(|m| {
            if ok {
                m.hilo_cycles.inc();
            } else {
                m.hilo_failed_cycles.inc();
            }
            m.hilo_windows_created.inc_by(created);
        });
    }

    /// The hilo agent saw `open` windows on `shard`.
    pub fn hilo_windows_open(&self, shard: &str, open: u64) {
        self.with(|m| {
            let labels = [("shard", LabelValue::new(shard))];
            m.hilo_windows_open
                .get_or_create(&labels)
                .set(i64::try_from(open).unwrap_or(i64::MAX));
        });
    }

    /// Sets readiness (seq serve, hilo agent), or whether the command runs
    /// (run, index: ready also needs the claim held).
    pub fn set_ready(&self, ready: bool) {
        self.with(|m| m.ready.store(ready, Relaxed));
    }

    /// The supervised command started (`true`) or ended.
    pub fn command_running(&self, running: bool) {
        self.set_ready(running);
    }

    /// What `/readyz` answers.
    pub fn ready(&self) -> bool {
        self.0.as_ref().is_some_and(|m| {
            let flag = m.ready.load(Relaxed);
            flag && (!m.kind.holds_a_claim() || m.claims_held.get() > 0)
        })
    }

    /// The registry in OpenMetrics text ([`mod@format`] makes the Prometheus
    /// text format of it).
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some(m) = &self.0 {
            // Writing to a String cannot fail.
            let _ = encode(&mut out, &m.registry);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, Metrics};
    use std::time::Duration;

    #[test]
    fn names_follow_the_conventions() {
        let m = Metrics::new(Kind::Run);
        m.claim_held(true);
        m.renewed(Duration::from_millis(3));
        m.seq_round("orders", 5, Duration::from_millis(1));
        m.clock_offset(-0.25);
        let text = m.render();
        for line in [
            "yaraus_claims_held 1",
            "yaraus_renewals_total 1",
            "yaraus_renewal_latency_seconds_count 1",
            "yaraus_clock_offset_seconds -0.25",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
        // A run has no rounds to show.
        assert!(!text.contains("ids_handed_out"), "{text}");
        let seq = Metrics::new(Kind::SeqServe);
        seq.seq_round("orders", 5, Duration::from_millis(1));
        let line = "yaraus_ids_handed_out_total{sequence=\"orders\"} 5";
        assert!(seq.render().lines().any(|l| l == line), "{}", seq.render());
    }

    #[test]
    fn a_retired_sequence_s_series_go_and_the_others_stay() {
        let m = Metrics::new(Kind::SeqServe);
        m.seq_round("a", 1, Duration::ZERO);
        m.seq_round_failed("a");
        m.seq_round("b", 1, Duration::ZERO);
        m.seq_retired("a");
        m.seq_retired("never served");
        let text = m.render();
        assert!(!text.contains("sequence=\"a\""), "{text}");
        assert_eq!(text.matches("sequence=\"b\"").count(), 2, "{text}");
    }

    #[test]
    fn ready_needs_the_claim_and_the_command() {
        let m = Metrics::new(Kind::Index);
        m.command_running(true);
        assert!(!m.ready());
        m.claim_held(true);
        assert!(m.ready());
        m.claim_held(false);
        assert!(!m.ready());
        assert!(!Metrics::off().ready());
        assert!(Metrics::off().render().is_empty());
    }
}
