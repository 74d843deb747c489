//! Healing that does not wait for traffic: a pass over every counter of a
//! namespace that some node lacks.
//!
//! A heal pass ([`super::heal`]) runs when a call of a sequence or a lock
//! sees a node without the counter; a counter nobody uses is then never
//! healed, and a second loss on another node leaves it lost on a majority.
//! A sweep finds such counters itself ([`Census`]) and makes one heal pass
//! on each: it marks the nodes found empty, so that their quarantine starts
//! now, and sets again those whose quarantine is over. It is the same pass,
//! with the same rules, so nothing is added to the safety argument. The
//! long-running subcommands sweep on their own every [`SWEEP_EVERY`]
//! ([`sweep_forever`]: `seq serve` every sequence of its namespace, `hilo
//! agent --every` its lock's fencing counter), and `yaraus health --wait`
//! sweeps until everything is held.
//!
//! A wiped node is so marked within one sweep of its restart and voting
//! again within one sweep of its quarantine's end: Q plus two sweeps at
//! most, with no request. What each sweep found goes to the metrics
//! ([`SweepMetrics`]), so that a node left out longer shows from outside.

use super::census::{Census, Kind};
use super::heal::{self, Healings};
use super::sweep_metrics::SweepMetrics;
use crate::error::Result;
use crate::store::Quorum;
use crate::timing::sequence::SWEEP_EVERY;
use tokio::sync::watch;

/// What a sweep found and did.
pub struct Swept {
    /// The census it took before healing.
    pub census: Census,
    /// Per counter healed: its key, and what each node went through.
    pub healed: Healings,
}

/// Takes a census of `kinds` in `namespace` and makes one heal pass on each
/// counter that a majority holds and some node that answered lacks; logs
/// what it marked and repaired. A pass that fails (a node that stopped
/// answering) is left for the next sweep.
pub async fn sweep(quorum: &mut Quorum, namespace: &str, kinds: &[Kind]) -> Result<Swept> {
    let census = Census::take(quorum, namespace, kinds).await?;
    Ok(heal_found(quorum, census).await)
}

/// [`sweep`] of the counters `keys` only, found by name rather than by
/// `SCAN`: for a caller that knows the counters it uses.
pub async fn heal_keys(quorum: &mut Quorum, keys: &[(Kind, String)]) -> Result<Swept> {
    let census = Census::of_keys(quorum, keys).await?;
    Ok(heal_found(quorum, census).await)
}

/// One heal pass on each counter of `census` that a majority holds and
/// some node that answered lacks; logs what they did, a line per node and
/// step when a node lacked many.
pub async fn heal_found(quorum: &mut Quorum, census: Census) -> Swept {
    let mut healed = Vec::new();
    for counter in &census.counters {
        if !counter.wants_healing(census.majority) {
            continue;
        }
        if let Ok(done) = heal::heal(quorum, &counter.key).await
            && !done.is_empty()
        {
            healed.push((counter.key.clone(), done));
        }
    }
    heal::report_all(&healed);
    Swept { census, healed }
}

/// What a long-running subcommand sweeps.
#[derive(Clone, Debug)]
pub enum Scope {
    /// Every counter of these kinds in the namespace ([`sweep`]).
    Namespace { namespace: String, kinds: Vec<Kind> },
    /// These counters ([`heal_keys`]).
    Keys(Vec<(Kind, String)>),
}

impl Scope {
    /// The kinds of counters it covers.
    pub fn kinds(&self) -> Vec<Kind> {
        match self {
            Scope::Namespace { kinds, .. } => kinds.clone(),
            Scope::Keys(keys) => {
                let mut kinds: Vec<Kind> = keys.iter().map(|(kind, _)| *kind).collect();
                kinds.sort();
                kinds.dedup();
                kinds
            }
        }
    }

    async fn sweep(&self, quorum: &mut Quorum) -> Result<Swept> {
        match self {
            Scope::Namespace { namespace, kinds } => sweep(quorum, namespace, kinds).await,
            Scope::Keys(keys) => heal_keys(quorum, keys).await,
        }
    }
}

/// Sweeps `scope` every [`SWEEP_EVERY`] until `stop` changes, each sweep's
/// findings recorded in `metrics`. `quorum` is the caller's own clone, in
/// service: a node's fault costs its answer, not the sweep. A sweep that
/// fails (a key of another type, every node away) is logged when the
/// failure changes, and tried again at the next.
pub async fn sweep_forever(
    mut quorum: Quorum,
    scope: Scope,
    metrics: SweepMetrics,
    mut stop: watch::Receiver<bool>,
) {
    let kinds = scope.kinds();
    let mut failing: Option<String> = None;
    loop {
        let swept = tokio::select! {
            swept = scope.sweep(&mut quorum) => swept,
            _ = stop.changed() => return,
        };
        match swept {
            Ok(swept) => {
                metrics.record(&kinds, &swept.census, &swept.healed);
                if failing.take().is_some() {
                    log::info!("sweep: the counters are read again");
                }
            }
            Err(e) => {
                metrics.failed();
                let why = e.to_string();
                if failing.as_deref() != Some(why.as_str()) {
                    log::warn!(
                        "sweep: cannot read the counters, nothing healed without a request until \
                         it can: {why}"
                    );
                }
                failing = Some(why);
            }
        }
        tokio::select! {
            () = tokio::time::sleep(SWEEP_EVERY) => {}
            _ = stop.changed() => return,
        }
    }
}
