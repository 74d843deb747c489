//! Metrics of the long-running subcommands (`seq serve`, `hilo agent`,
//! `index`, `run`), for `--metrics-listen`: one Prometheus registry per
//! process, what every subcommand shares, and the way each domain adds its
//! own.
//!
//! Design: the subcommand makes one [`Metrics`] handle and passes clones of
//! it to the places where the events already happen (the claim keeper's
//! renewal loop, the supervised command's start and end). A domain with
//! metrics of its own (seq serve's rounds, the hilo agent's cycles, run's
//! clock) keeps them beside its code, in a small struct of metric handles
//! that it fills by [`Metrics::register`]: this module knows the registry,
//! not the domains, so it sits below all of them. Recording is an atomic
//! add on a metric of the official client (`prometheus-client`), so the
//! supervision path never waits on a scrape: the HTTP listener ([`http`])
//! only reads the registry, on its own task, and the registry's lock is
//! taken only by registering (at start) and by a scrape, never by
//! recording. Without `--metrics-listen` the handle is [`Metrics::off`]:
//! it holds nothing, registers nothing (a domain's struct is then empty
//! too), and every method returns at once, so the call sites need no `if`.
//!
//! Why the registry's text encoder and not hand-formatted lines: the
//! exposition format has `# TYPE`/`# UNIT` lines and histogram buckets
//! that are easy to get subtly wrong; the client gets them right and keeps
//! up with the format. Two things it leaves to us: label values, which it
//! writes unescaped (`labels.rs` escapes them, and bounds how many names
//! have series), and the Prometheus text format, which it does not write
//! ([`mod@format`] derives it from its OpenMetrics text).
//!
//! What is shared, and so lives here ([`Kind`]): readiness (`/readyz`),
//! which seq serve's health probe and the hilo agent's cycle set, and which
//! for `run` and `index` is "a claim is held and the command runs"
//! ([`Metrics::command_running`] together with the claims-held gauge); and
//! the claims' holding and renewals, which the keeper records for both.

pub mod format;
pub mod http;
mod labels;

pub use labels::{LabelValue, Labels, MAX_SEQUENCE_SERIES, Sequences, escape_label_value};

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// A handle to the process's metrics; cheap to clone, a no-op when off.
#[derive(Clone, Default)]
pub struct Metrics(Option<Arc<Inner>>);

/// Which subcommand serves the metrics: it decides whether the claims'
/// metrics are exported and what `/readyz` means.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// Ready when a majority of nodes answers.
    SeqServe,
    /// Ready when the last cycle succeeded.
    HiloAgent,
    /// A slot's claim; ready when it is held and the command runs.
    Index,
    /// A worker id's claim; ready when it is held and the command runs.
    Run,
}

impl Kind {
    fn holds_a_claim(self) -> bool {
        matches!(self, Kind::Index | Kind::Run)
    }
}

struct Inner {
    /// Written when a domain registers, read by a scrape.
    registry: Mutex<Registry>,
    kind: Kind,
    ready: AtomicBool,
    claims: Claims,
}

/// A claim's holding and renewals (run, index).
struct Claims {
    held: Gauge,
    lost: Counter,
    renewals: Counter,
    renewal_failures: Counter,
    renewal_latency: Histogram,
}

impl Claims {
    fn new() -> Claims {
        Claims {
            held: Gauge::default(),
            lost: Counter::default(),
            renewals: Counter::default(),
            renewal_failures: Counter::default(),
            renewal_latency: latency_histogram(),
        }
    }

    fn register(&self, r: &mut Registry) {
        r.register(
            "claims_held",
            "Claims (worker id, index slot) this process holds now",
            self.held.clone(),
        );
        r.register(
            "claims_lost",
            "Claims lost: taken by another holder, or not renewed before their deadline",
            self.lost.clone(),
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
}

/// A latency histogram, with buckets from 0.5 ms to about 8 s: a round or
/// a renewal is a few fsyncs on a LAN, and anything beyond seconds is an
/// outage.
pub fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0005, 2.0, 15))
}

impl Metrics {
    /// No metrics: every method returns at once.
    pub fn off() -> Metrics {
        Metrics(None)
    }

    /// A registry with what `kind` shares with the other subcommands, at
    /// zero; its domain adds its own ([`register`](Self::register)).
    pub fn new(kind: Kind) -> Metrics {
        let claims = Claims::new();
        let mut registry = Registry::with_prefix("yaraus");
        if kind.holds_a_claim() {
            claims.register(&mut registry);
        }
        Metrics(Some(Arc::new(Inner {
            registry: Mutex::new(registry),
            kind,
            ready: AtomicBool::new(false),
            claims,
        })))
    }

    /// Lets a domain register its own metrics: `register` is given the
    /// registry and returns the domain's handles, or is not called at all
    /// when metrics are off (`None`: the domain records nothing).
    pub fn register<T>(&self, register: impl FnOnce(&mut Registry) -> T) -> Option<T> {
        let inner = self.0.as_ref()?;
        let mut registry = inner
            .registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Some(register(&mut registry))
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
            m.claims.held.inc_by(if held { 1 } else { -1 });
        });
    }

    /// A claim was lost while it was meant to be kept.
    pub fn claim_lost(&self) {
        self.with(|m| {
            m.claims.lost.inc();
        });
    }

    /// A renewal succeeded after `latency`.
    pub fn renewed(&self, latency: Duration) {
        self.with(|m| {
            m.claims.renewals.inc();
            m.claims.renewal_latency.observe(latency.as_secs_f64());
        });
    }

    /// A renewal did not happen.
    pub fn renewal_failed(&self) {
        self.with(|m| {
            m.claims.renewal_failures.inc();
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
            flag && (!m.kind.holds_a_claim() || m.claims.held.get() > 0)
        })
    }

    /// The registry in OpenMetrics text ([`mod@format`] makes the Prometheus
    /// text format of it).
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some(m) = &self.0 {
            let registry = m.registry.lock().unwrap_or_else(PoisonError::into_inner);
            // Writing to a String cannot fail.
            let _ = encode(&mut out, &registry);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, Metrics};
    use prometheus_client::metrics::counter::Counter;
    use std::time::Duration;

    #[test]
    fn names_follow_the_conventions() {
        let m = Metrics::new(Kind::Run);
        m.claim_held(true);
        m.renewed(Duration::from_millis(3));
        let text = m.render();
        for line in [
            "yaraus_claims_held 1",
            "yaraus_renewals_total 1",
            "yaraus_renewal_latency_seconds_count 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
        // A seq serve holds no claim: it shows none.
        assert!(!Metrics::new(Kind::SeqServe).render().contains("claims"));
    }

    #[test]
    fn a_domain_registers_its_own_and_nothing_when_off() {
        let m = Metrics::new(Kind::HiloAgent);
        let counter = m.register(|r| {
            let c = Counter::<u64>::default();
            r.register("things", "Things", c.clone());
            c
        });
        counter.unwrap().inc();
        assert!(m.render().lines().any(|l| l == "yaraus_things_total 1"));
        assert!(Metrics::off().register(|_| ()).is_none());
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
