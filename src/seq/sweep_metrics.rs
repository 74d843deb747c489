//! What the sweeps show on `--metrics-listen`, for `seq serve` and `hilo
//! agent --every` alike: per node and kind of counter, how many counters
//! the node holds, has quarantined, lacks or could not be read for; per
//! kind, how many counters stand held, degraded or lost; per node, the age
//! of its oldest quarantine; and the nodes the sweeps marked and repaired.
//!
//! The gauges are set from the latest sweep that could read the counters,
//! with what that sweep itself did applied (a node it repaired counts as
//! holding, one it marked as quarantined since now), so that a scrape
//! between two sweeps does not show a repair as pending. Every state of
//! every node is written at each sweep, zeros included: a series that
//! disappears would make an alert on it silent rather than resolved. The
//! series are bounded by the nodes (fixed at start), the kinds and the
//! states; no counter's name is a label, a namespace can have millions.
//!
//! An alert on a quarantine longer than twice
//! [`QUARANTINE`] (docs/service.md, "Alert rules") reads the age, which comes
//! from the node's own clock, the clock the repair obeys.

use super::census::{self, Census, Kind, Place, Standing};
use super::heal::{Healed, Healings};
use crate::metrics::{LabelValue, Metrics};
use crate::timing::sequence::QUARANTINE;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// A node's states, as the `state` label says them.
const STATES: [&str; 5] = ["holding", "quarantined", "missing", "unreachable", "other"];
/// A counter's standings, as the `standing` label says them.
const STANDINGS: [&str; 5] = ["held", "degraded", "lost", "unsettled", "out_of_reach"];

type Labels<const N: usize> = [(&'static str, LabelValue); N];

/// The sweeps' metric handles; cheap to clone, a no-op when off.
#[derive(Clone, Default)]
pub struct SweepMetrics(Option<Arc<Series>>);

struct Series {
    counters: Family<Labels<3>, Gauge>,
    standing: Family<Labels<2>, Gauge>,
    oldest_quarantine: Family<Labels<1>, Gauge<f64, AtomicU64>>,
    heals: Family<Labels<3>, Counter>,
    sweeps: Counter,
    failed_sweeps: Counter,
}

impl Series {
    fn register(r: &mut Registry) -> Series {
        let series = Series {
            counters: Family::default(),
            standing: Family::default(),
            oldest_quarantine: Family::default(),
            heals: Family::default(),
            sweeps: Counter::default(),
            failed_sweeps: Counter::default(),
        };
        r.register(
            "majority_counters",
            "Majority counters (sequences, lock fencing counters) per node, kind and state, as \
             the latest sweep left them: holding (votes), quarantined (marked after a loss), \
             missing (lost and not yet marked, or marked for a creation), unreachable (no \
             answer), other (another type)",
            series.counters.clone(),
        );
        r.register(
            "majority_counters_standing",
            "Majority counters per kind and standing, as the latest sweep left them: held (by \
             every node), degraded (by a majority), lost (by fewer than a majority that \
             answered: a person must decide), unsettled (by none: a creation), out_of_reach",
            series.standing.clone(),
        );
        r.register_with_unit(
            "oldest_quarantine",
            "Age of the oldest quarantine mark on the node, on its own clock (0: none); a \
             quarantine is 10 s, a sweep sets the node again within seconds after it",
            Unit::Seconds,
            series.oldest_quarantine.clone(),
        );
        r.register(
            "sweep_heals",
            "Nodes a sweep marked (found without a counter) or repaired (set again after the \
             quarantine), per node and kind",
            series.heals.clone(),
        );
        r.register(
            "sweeps",
            "Sweeps of the majority counters that read them",
            series.sweeps.clone(),
        );
        r.register(
            "failed_sweeps",
            "Sweeps of the majority counters that could not read them",
            series.failed_sweeps.clone(),
        );
        series
    }
}

fn standing_label(standing: &Standing) -> &'static str {
    match standing {
        Standing::Held => "held",
        Standing::Degraded => "degraded",
        Standing::Lost => "lost",
        Standing::Unsettled => "unsettled",
        Standing::OutOfReach => "out_of_reach",
    }
}

fn value(text: &str) -> LabelValue {
    LabelValue::new(text)
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl SweepMetrics {
    /// The sweeps' metrics, registered into `metrics` (none when it is off).
    pub fn register(metrics: &Metrics) -> SweepMetrics {
        SweepMetrics(metrics.register(Series::register).map(Arc::new))
    }

    /// Records a sweep over `kinds`: the census it took and what it healed
    /// (per counter, what each node went through).
    pub fn record(&self, kinds: &[Kind], found: &Census, healed: &Healings) {
        let Some(m) = &self.0 else {
            return;
        };
        m.sweeps.inc();
        let labels = &found.labels;
        let counters: Vec<census::Counter> = found
            .counters
            .iter()
            .map(|c| after(c, labels, healed))
            .collect();
        for kind in kinds {
            let of_kind = || counters.iter().filter(|c| c.kind == *kind);
            for (i, node) in labels.iter().enumerate() {
                for state in STATES {
                    let n = of_kind()
                        .filter(|c| c.places.get(i).map(Place::label) == Some(state))
                        .count();
                    let key = [
                        ("node", value(node)),
                        ("kind", value(Kind::label(*kind))),
                        ("state", value(state)),
                    ];
                    m.counters.get_or_create(&key).set(count(n));
                }
            }
            for standing in STANDINGS {
                let n = of_kind()
                    .filter(|c| standing_label(&c.standing(found.majority)) == standing)
                    .count();
                let key = [
                    ("kind", value(Kind::label(*kind))),
                    ("standing", value(standing)),
                ];
                m.standing.get_or_create(&key).set(count(n));
            }
        }
        for (i, node) in labels.iter().enumerate() {
            let oldest = counters
                .iter()
                .filter_map(|c| match c.places.get(i) {
                    Some(Place::Quarantined { age, .. }) => Some(*age),
                    _ => None,
                })
                .max()
                .unwrap_or(Duration::ZERO);
            m.oldest_quarantine
                .get_or_create(&[("node", value(node))])
                .set(oldest.as_secs_f64());
        }
        count_heals(m, found, healed);
    }

    /// A sweep could not read the counters: the gauges keep the last
    /// sweep's.
    pub fn failed(&self) {
        if let Some(m) = &self.0 {
            m.failed_sweeps.inc();
        }
    }
}

/// The nodes the sweep marked and repaired.
fn count_heals(m: &Series, found: &Census, healed: &Healings) {
    for (key, done) in healed {
        let Some(kind) = found.counters.iter().find(|c| &c.key == key) else {
            continue;
        };
        for (node, healed) in done {
            let action = match healed {
                Healed::Marked => "marked",
                Healed::Repaired(_) => "repaired",
                Healed::Quarantined(_) => continue,
            };
            let labels = [
                ("node", value(node)),
                ("kind", value(Kind::label(kind.kind))),
                ("action", value(action)),
            ];
            m.heals.get_or_create(&labels).inc();
        }
    }
}

/// `counter` as the sweep left it: a node it marked is quarantined since
/// now, one it repaired holds the counter.
fn after(counter: &census::Counter, labels: &[String], healed: &Healings) -> census::Counter {
    let mut counter = counter.clone();
    let done = healed.iter().find(|(key, _)| *key == counter.key);
    for (node, healed) in done.map(|(_, d)| d.as_slice()).unwrap_or_default() {
        let Some(i) = labels.iter().position(|l| l == node) else {
            continue;
        };
        match healed {
            Healed::Marked => {
                counter.places[i] = Place::Quarantined {
                    left: QUARANTINE,
                    age: Duration::ZERO,
                }
            }
            Healed::Repaired(v) => counter.places[i] = Place::Holds(*v),
            Healed::Quarantined(_) => {}
        }
    }
    counter
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found() -> (Census, Healings) {
        let labels: Arc<[String]> = ["redis://a".into(), "redis://b".into(), "b\"\n".into()].into();
        let counter = |key: &str, places| census::Counter {
            kind: Kind::Sequence,
            key: key.into(),
            places,
        };
        let quarantined = Place::Quarantined {
            left: Duration::ZERO,
            age: Duration::from_secs(25),
        };
        (
            Census {
                labels,
                majority: 2,
                counters: vec![
                    counter(
                        "ns:seq:a",
                        vec![Place::Holds(1), Place::Holds(1), quarantined],
                    ),
                    counter(
                        "ns:seq:b",
                        vec![Place::Holds(2), Place::Holds(2), Place::Missing],
                    ),
                    counter(
                        "ns:seq:c",
                        vec![Place::Holds(3), Place::Missing, Place::Missing],
                    ),
                ],
                unlisted: Vec::new(),
            },
            vec![("ns:seq:b".into(), vec![("b\"\n".into(), Healed::Marked)])],
        )
    }

    #[test]
    fn a_sweep_counts_each_node_s_states_as_it_left_them() {
        let metrics = Metrics::new(crate::metrics::Kind::SeqServe);
        let sweeps = SweepMetrics::register(&metrics);
        let (census, healed) = found();
        sweeps.record(&[Kind::Sequence], &census, &healed);
        sweeps.failed();
        let text = metrics.render();
        let node = "node=\"b\\\"\\n\"";
        for line in [
            format!("yaraus_majority_counters{{{node},kind=\"sequence\",state=\"quarantined\"}} 2"),
            format!("yaraus_majority_counters{{{node},kind=\"sequence\",state=\"missing\"}} 1"),
            "yaraus_majority_counters{node=\"redis://b\",kind=\"sequence\",state=\"missing\"} 1"
                .into(),
            "yaraus_majority_counters{node=\"redis://a\",kind=\"sequence\",state=\"holding\"} 3"
                .into(),
            format!("yaraus_oldest_quarantine_seconds{{{node}}} 25.0"),
            "yaraus_oldest_quarantine_seconds{node=\"redis://a\"} 0.0".into(),
            "yaraus_majority_counters_standing{kind=\"sequence\",standing=\"degraded\"} 2".into(),
            "yaraus_majority_counters_standing{kind=\"sequence\",standing=\"lost\"} 1".into(),
            "yaraus_majority_counters_standing{kind=\"sequence\",standing=\"held\"} 0".into(),
            format!("yaraus_sweep_heals_total{{{node},kind=\"sequence\",action=\"marked\"}} 1"),
            "yaraus_sweeps_total 1".into(),
            "yaraus_failed_sweeps_total 1".into(),
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
        assert!(!text.contains("kind=\"fencing\""), "{text}");
        crate::metrics::format::assert_described(&text);
        SweepMetrics::register(&Metrics::off()).record(&[Kind::Fencing], &census, &healed);
    }
}
