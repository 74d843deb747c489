//! A running command's pair, as a [`Claim`]: the keeper renews it by ticking
//! on the index's schedule, and it is lost the moment a tick brings another
//! pair (or none). Release confirms the transition: by then the command's
//! whole tree is gone ([`crate::supervise::hold()`] releases last).
//!
//! A tick vouches for the command only if the tick of the interval before
//! vouched for it (or started it): once one tick did not, whether it failed,
//! was lost, or ran with its reply lost (and so may have found no pair),
//! the command is stopped, however the next tick turns out. Without this
//! rule a tick whose reply was lost could hide a change, and the next one,
//! finding the pair back, would extend a command whose deadline others are
//! counting on (found by `tests/index_model/`).

use super::history::History;
use super::pair::Pair;
use super::tick::{Index, TickOutcome};
use crate::base::BootInstant;
use crate::claim::{Claim, RenewError};
use crate::error::{Error, Result};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The pair a command runs with.
pub struct Slot {
    index: Index,
    pair: Pair,
    /// The last tick that vouched for the command (or started it).
    vouched: u64,
    history: Arc<Mutex<History>>,
}

impl Slot {
    pub(super) fn new(
        index: Index,
        pair: Pair,
        started_under: u64,
        history: Arc<Mutex<History>>,
    ) -> Slot {
        Slot {
            index,
            pair,
            vouched: started_under,
            history,
        }
    }

    fn history(&self) -> MutexGuard<'_, History> {
        self.history.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn next_number(&self) -> u64 {
        self.history().next_number(self.index.timing())
    }
}

impl Claim for Slot {
    async fn renew(&mut self) -> Result<Duration, RenewError> {
        let number = self.next_number();
        if number != self.vouched + 1 {
            // Not ticked: a tick holding this pair would settle a command
            // that may already disagree with its interval.
            return Err(RenewError::Lost(format!(
                "interval {} did not vouch for the command (its tick failed or came too late)",
                self.vouched + 1
            )));
        }
        let outcome = self.index.tick(number, Some(self.pair)).await;
        self.history().record(number, &outcome);
        match outcome {
            Ok(TickOutcome::Counted(t)) if t.settled && t.pair == Some(self.pair) => {
                self.vouched = number;
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
