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
//! long-running subcommands sweep on their own every
//! [`SWEEP_EVERY`](crate::timing::sequence::SWEEP_EVERY), and
//! `yaraus health --wait` sweeps until everything is held.

use super::census::{Census, Kind};
use super::heal::{self, Healed};
use crate::error::Result;
use crate::store::Quorum;

/// What a sweep found and did.
pub struct Swept {
    /// The census it took before healing.
    pub census: Census,
    /// Per counter healed: its key, and what each node went through.
    pub healed: Vec<(String, Vec<(String, Healed)>)>,
}

/// Takes a census of `kinds` in `namespace` and makes one heal pass on each
/// counter that a majority holds and some node that answered lacks; logs
/// what it marked and repaired. A pass that fails (a node that stopped
/// answering) is left for the next sweep.
pub async fn sweep(quorum: &mut Quorum, namespace: &str, kinds: &[Kind]) -> Result<Swept> {
    let census = Census::take(quorum, namespace, kinds).await?;
    let mut healed = Vec::new();
    for counter in &census.counters {
        if !counter.wants_healing(census.majority) {
            continue;
        }
        if let Ok(done) = heal::heal(quorum, &counter.key).await {
            heal::report(&counter.key, &done);
            if !done.is_empty() {
                healed.push((counter.key.clone(), done));
            }
        }
    }
    Ok(Swept { census, healed })
}
