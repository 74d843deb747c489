//! What a replica remembers of its last few ticks, and the barrier read
//! from them: whether a command may start under the latest tick's pair
//! (the conditions of the module comment, [`super`]).
//!
//! One [`History`] is shared by the [`Replica`](super::replica::Replica)
//! that ticks between commands and the [`Slot`](super::slot::Slot) that
//! ticks while one runs, so that after a transition the replica goes on
//! from the tick that brought the new pair instead of waiting for the next.

use super::pair::Pair;
use super::tick::{Tick, TickOutcome};
use crate::base::BootInstant;
use crate::error::Result;
use crate::timing::index::Timing;
use std::collections::VecDeque;

/// Ticks remembered: the barrier looks one interval back.
const REMEMBERED: usize = 3;

/// The latest ticks of one replica.
#[derive(Default, Debug)]
pub struct History {
    ticks: VecDeque<Tick>,
    /// The number of the latest tick tried, and whether it counted.
    latest: Option<(u64, bool)>,
}

/// Where the barrier stands for the latest tick.
#[derive(Debug)]
pub enum Readiness {
    /// The latest tick brought no pair (or failed, or is too old to start
    /// under): wait for the next.
    NoPair,
    /// Replicas of the interval before have yet to confirm.
    Confirmations { number: u64, have: u64, need: u64 },
    /// Anything a silent replica may still run is gone at this instant.
    Until(BootInstant),
    /// The command may start; it must be gone by the deadline.
    Ready {
        number: u64,
        pair: Pair,
        deadline: BootInstant,
    },
}

impl History {
    /// Records the outcome of the tick of `number`.
    pub fn record(&mut self, number: u64, outcome: &Result<TickOutcome>) {
        match outcome {
            Ok(TickOutcome::Counted(tick)) => {
                self.ticks.retain(|t| t.number != number);
                self.ticks.push_back(*tick);
                while self.ticks.len() > REMEMBERED {
                    self.ticks.pop_front();
                }
                self.latest = Some((number, true));
            }
            _ => self.latest = Some((number, false)),
        }
    }

    /// The number of the latest tick tried.
    pub fn latest_number(&self) -> Option<u64> {
        self.latest.map(|(n, _)| n)
    }

    /// The number of the next tick: the one after the latest tried, or the
    /// one due now if that is later (ticks missed are not made up).
    pub fn next_number(&self, timing: &Timing) -> u64 {
        match self.latest_number() {
            Some(n) => (n + 1).max(timing.number_now()),
            None => timing.number_now() + 1,
        }
    }

    /// The latest tick, if it was the latest tried and it counted.
    pub fn latest(&self) -> Option<&Tick> {
        match self.latest {
            Some((n, true)) => self.get(n),
            _ => None,
        }
    }

    fn get(&self, number: u64) -> Option<&Tick> {
        self.ticks.iter().find(|t| t.number == number)
    }

    /// A newer count of confirmations for `number`.
    pub(super) fn confirmed(&mut self, number: u64, confirmations: u64) {
        if let Some(t) = self.ticks.iter_mut().find(|t| t.number == number) {
            t.confirmations = t.confirmations.max(confirmations);
        }
    }

    /// The barrier, as of `now`: (a), (b) and (c) of the module comment.
    pub fn readiness(&self, timing: &Timing, now: BootInstant) -> Readiness {
        let Some(tick) = self.latest() else {
            return Readiness::NoPair;
        };
        let Some(pair) = tick.pair else {
            return Readiness::NoPair;
        };
        if tick.confirmations < pair.replicas {
            return Readiness::Confirmations {
                number: tick.number,
                have: tick.confirmations,
                need: pair.replicas,
            };
        }
        let since = self
            .get(tick.number - 1)
            .map_or(tick.received, |t| t.received);
        let gone = since + timing.others_gone_after();
        if now < gone {
            return Readiness::Until(gone);
        }
        let deadline = tick.sent + timing.validity();
        if deadline.saturating_sub(timing.kill_after()) <= now {
            return Readiness::NoPair;
        }
        Readiness::Ready {
            number: tick.number,
            pair,
            deadline,
        }
    }
}
