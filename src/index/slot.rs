//! A running command's pair, as a [`Claim`]: the keeper renews it by ticking
//! on the index's schedule, and it is lost the moment a tick brings another
//! pair (or none). Release confirms the transition: by then the command's
//! whole tree is gone ([`crate::supervise::hold`] releases last).

use super::replica::History;
use super::{Index, Pair, TickOutcome};
use crate::claim::{Claim, RenewError};
use crate::error::{Error, Result};
use crate::supervise::BootInstant;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The pair a command runs with.
pub struct Slot {
    index: Index,
    pair: Pair,
    history: Arc<Mutex<History>>,
}

impl Slot {
    pub(super) fn new(index: Index, pair: Pair, history: Arc<Mutex<History>>) -> Slot {
        Slot {
            index,
            pair,
            history,
        }
    }

    fn history(&self) -> MutexGuard<'_, History> {
        self.history.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn next_number(&self) -> u64 {
        let timing = self.index.timing();
        match self.history().latest_number() {
            Some(n) => (n + 1).max(timing.number_now()),
            None => timing.number_now(),
        }
    }
}

impl Claim for Slot {
    async fn renew(&mut self) -> Result<Duration, RenewError> {
        let number = self.next_number();
        let outcome = self.index.tick(number, Some(self.pair)).await;
        self.history().record(number, &outcome);
        match outcome {
            Ok(TickOutcome::Counted(t)) if t.settled && t.pair == Some(self.pair) => {
                Ok(self.index.timing().validity())
            }
            Ok(TickOutcome::Counted(t)) => Err(RenewError::Lost(match t.pair {
                Some(pair) => format!("interval {number} brought {pair}"),
                None => format!(
                    "interval {number} brought no pair: this replica was not counted in the \
                     interval before"
                ),
            })),
            Ok(TickOutcome::Late { last, .. }) => {
                Err(RenewError::Failed(Error::Unavailable(format!(
                    "interval {number} was sealed: interval {last} had begun; this host's \
                     clock is behind the other replicas'"
                ))))
            }
            Err(e) => Err(RenewError::Failed(e)),
        }
    }

    async fn release(&mut self) -> Result<()> {
        let latest = self.history().latest_number();
        if let Some(number) = latest {
            if let Some(n) = self.index.confirm(number).await? {
                self.history().confirmed(number, n);
            }
        }
        Ok(())
    }

    fn describe(&self) -> String {
        self.pair.to_string()
    }

    fn next_renewal(&self) -> Option<BootInstant> {
        Some(self.index.timing().tick_instant(self.next_number()))
    }
}
