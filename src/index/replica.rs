//! A replica between commands: it ticks on schedule, and waits for the
//! barrier of the module comment ([`super`]) before a command may start
//! under its pair.
//!
//! The [`History`] of the last few ticks is shared with the [`Slot`] that
//! keeps a running command's pair, so that after a transition the replica
//! goes on from the tick that brought the new pair instead of waiting for
//! the next one.

use super::history::{History, Readiness};
use super::pair::Pair;
use super::slot::Slot;
use super::tick::{Index, Tick, TickOutcome};
use crate::base::BootInstant;
use crate::error::{Error, Result};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

/// One replica of an index.
pub struct Replica {
    index: Index,
    history: Arc<Mutex<History>>,
    /// The last warning about ticks, not repeated every interval.
    warned: Option<String>,
}

impl Replica {
    pub fn new(index: Index) -> Replica {
        Replica {
            index,
            history: Arc::default(),
            warned: None,
        }
    }

    pub fn index(&self) -> &Index {
        &self.index
    }

    fn history(&self) -> MutexGuard<'_, History> {
        self.history.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The claim on `pair` for a command started under the tick of
    /// `number`.
    pub fn slot(&self, pair: Pair, number: u64) -> Slot {
        Slot::new(self.index.clone(), pair, number, self.history.clone())
    }

    /// The number of the next tick, and when it is due.
    fn next_tick(&self) -> (u64, BootInstant) {
        let timing = self.index.timing();
        let number = self.history().next_number(timing);
        (number, timing.tick_instant(number))
    }

    /// Ticks interval `number` with no command running, and records it.
    /// Returns the tick if it counted; unreachable Redis and late ticks are
    /// warned about (once, not every interval) and give `None`. Only errors
    /// no retry can cure are returned.
    pub async fn tick(&mut self, number: u64) -> Result<Option<Tick>> {
        let outcome = self.index.tick(number, None).await;
        let before = self.history().latest().and_then(|t| t.pair);
        self.history().record(number, &outcome);
        let warning = match &outcome {
            Ok(TickOutcome::Counted(t)) => {
                if self.warned.take().is_some() {
                    log::info!("interval {number}: counted again");
                }
                if let Some(pair) = t.pair.filter(|p| Some(*p) != before) {
                    log::info!("interval {number}: {pair} (rank {})", pair.index + 1);
                }
                None
            }
            Ok(TickOutcome::Late { number, last }) => Some(format!(
                "interval {number} was sealed: interval {last} had begun; this host's clock is \
                 behind the other replicas' by more than the skew allows"
            )),
            Err(e) if is_final(e) => None,
            Err(e) => Some(format!("interval {number}: not counted: {e}")),
        };
        if let Some(w) = warning {
            if self.warned.as_deref() != Some(w.as_str()) {
                log::warn!("{w}");
                self.warned = Some(w);
            }
        }
        match outcome {
            Ok(TickOutcome::Counted(t)) => Ok(Some(t)),
            Err(e) if is_final(&e) => Err(e),
            _ => Ok(None),
        }
    }

    /// Waits for the next tick and makes it: its number, and the tick if it
    /// counted.
    pub async fn tick_when_due(&mut self) -> Result<(u64, Option<Tick>)> {
        let (number, at) = self.next_tick();
        at.sleep_until().await;
        let number = number.max(self.index.timing().number_now());
        Ok((number, self.tick(number).await?))
    }

    /// Ticks with no command running until one may start: returns the pair,
    /// the number of the tick it came from, and the deadline the command
    /// must be gone by. `cancel` ends the wait with its error (a signal).
    pub async fn wait_for_start(
        &mut self,
        cancel: impl Future<Output = Error>,
    ) -> Result<(Pair, u64, BootInstant)> {
        tokio::pin!(cancel);
        let timing = *self.index.timing();
        let poll = timing.start_poll();
        let mut reported: Option<(u64, u64)> = None;
        loop {
            let readiness = self.history().readiness(&timing, BootInstant::now());
            let mut confirming = None;
            let wake = match readiness {
                Readiness::Ready {
                    number,
                    pair,
                    deadline,
                } => {
                    log::info!(
                        "interval {number}: every replica of the interval before is settled; \
                         starting with {pair}"
                    );
                    return Ok((pair, number, deadline));
                }
                Readiness::NoPair => None,
                Readiness::Until(at) => Some(at),
                Readiness::Confirmations { number, have, need } => {
                    if reported != Some((number, have)) {
                        log::info!(
                            "interval {number}: {have} of {need} replicas settled; waiting for \
                             the others' commands to stop"
                        );
                        reported = Some((number, have));
                    }
                    confirming = Some(number);
                    Some(BootInstant::now() + poll)
                }
            };
            let (number, due) = self.next_tick();
            let wake = wake.filter(|w| *w < due);
            tokio::select! {
                e = &mut cancel => return Err(e),
                _ = due.sleep_until() => {
                    let number = number.max(timing.number_now());
                    self.tick(number).await?;
                }
                _ = sleep_until(wake) => {
                    if let Some(number) = confirming {
                        if let Ok(n) = self.index.confirmations(number).await {
                            self.history().confirmed(number, n);
                        }
                    }
                }
            }
        }
    }
}

/// An error that ends the replica: retrying cannot cure it.
fn is_final(e: &Error) -> bool {
    e.is_fatal() || matches!(e, Error::Usage(_))
}

/// Sleeps until `at`, or forever.
async fn sleep_until(at: Option<BootInstant>) {
    match at {
        Some(at) => at.sleep_until().await,
        None => std::future::pending().await,
    }
}
