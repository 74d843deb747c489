//! Keeping a claim alive in the background, and noticing when it is gone.
//!
//! Every long-lived claim of yaraus (a worker id, a lock, an index slot) has
//! the same life: renew every `interval`; stop at once when Redis says the
//! claim belongs to someone else; and when Redis cannot be reached, give up
//! at a *local* deadline that is guaranteed to come before the server's.
//!
//! The deadline is computed from the monotonic clock: the instant *before* the
//! last successful renewal was sent, plus the validity the claim reported for
//! it (its ttl minus a clock-drift margin). The server set its expiry at some
//! moment after that send, so our deadline is earlier than the server's as long
//! as the two clocks do not drift apart by more than the margin.
//!
//! The keeper is a task that owns the claim. The owner talks to it through two
//! channels, in the style of mini-redis: a `stop` channel to end it (after
//! which the claim comes back for release), and a `lost` channel on which the
//! keeper says why the claim ended, when it ends by itself.

use crate::error::Error;
use std::future::Future;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Something held in Redis that must be renewed to be kept.
pub trait Claim: Send + 'static {
    /// Renews the claim. On success, returns how long it stays valid counted
    /// from the instant *before* the request was sent (ttl minus drift).
    fn renew(&mut self) -> impl Future<Output = Result<Duration, RenewError>> + Send;

    /// Gives the claim back; a claim that is no longer ours is left alone.
    fn release(&mut self) -> impl Future<Output = Result<(), Error>> + Send;

    /// What is held, for log lines ("id 7", "lock backup").
    fn describe(&self) -> String;
}

/// Why a renewal did not succeed.
#[derive(Debug)]
pub enum RenewError {
    /// Redis says the claim is not ours any more: stop using it now.
    Lost(String),
    /// The renewal did not happen (unreachable, timeout, replicas short); the
    /// claim may still be ours until the deadline.
    Failed(Error),
}

/// Why the keeper stopped by itself.
#[derive(Debug, Clone)]
pub enum Loss {
    /// Redis said the claim belongs to someone else or is gone.
    Taken(String),
    /// No renewal succeeded before the local deadline.
    DeadlinePassed,
}

impl std::fmt::Display for Loss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Loss::Taken(why) => f.write_str(why),
            Loss::DeadlinePassed => f.write_str("no renewal succeeded before the lease ran out"),
        }
    }
}

/// Renews a claim every `interval` until stopped or lost.
pub struct LeaseKeeper<C: Claim> {
    stop: Option<oneshot::Sender<()>>,
    lost: mpsc::Receiver<Loss>,
    task: JoinHandle<C>,
}

impl<C: Claim> LeaseKeeper<C> {
    /// Starts keeping `claim`, which is valid until `deadline` as things stand.
    pub fn start(claim: C, interval: Duration, deadline: Instant) -> LeaseKeeper<C> {
        let (stop_tx, stop_rx) = oneshot::channel();
        let (lost_tx, lost_rx) = mpsc::channel(1);
        let task = tokio::spawn(keep(claim, interval, deadline, stop_rx, lost_tx));
        LeaseKeeper {
            stop: Some(stop_tx),
            lost: lost_rx,
            task,
        }
    }

    /// Resolves when the claim is lost. Cancel-safe: use it in `select!`.
    /// Never resolves once the keeper has been told to stop.
    pub async fn lost(&mut self) -> Loss {
        match self.lost.recv().await {
            Some(loss) => loss,
            None => std::future::pending().await,
        }
    }

    /// Stops renewing and hands the claim back, for release.
    pub async fn stop(mut self) -> C {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.task.await {
            Ok(claim) => claim,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
}

async fn keep<C: Claim>(
    mut claim: C,
    interval: Duration,
    mut deadline: Instant,
    mut stop: oneshot::Receiver<()>,
    lost: mpsc::Sender<Loss>,
) -> C {
    let mut next = Instant::now() + interval;
    loop {
        tokio::select! {
            _ = &mut stop => return claim,
            _ = tokio::time::sleep_until(deadline) => {
                crate::warn!("{}: {}", claim.describe(), Loss::DeadlinePassed);
                let _ = lost.send(Loss::DeadlinePassed).await;
                return claim;
            }
            _ = tokio::time::sleep_until(next) => {}
        }
        next += interval;
        let sent = Instant::now();
        let outcome = tokio::select! {
            _ = &mut stop => return claim,
            _ = tokio::time::sleep_until(deadline) => Err(RenewError::Failed(Error::Unavailable(
                "renewal still pending at the deadline".into(),
            ))),
            r = claim.renew() => r,
        };
        match outcome {
            Ok(validity) => {
                deadline = sent + validity;
            }
            Err(RenewError::Lost(why)) => {
                crate::warn!("{}: lost: {why}", claim.describe());
                let _ = lost.send(Loss::Taken(why)).await;
                return claim;
            }
            Err(RenewError::Failed(e)) => {
                let left = deadline.saturating_duration_since(Instant::now());
                crate::warn!(
                    "{}: renewal failed: {e}; will give up in {}",
                    claim.describe(),
                    humantime::format_duration(Duration::from_millis(left.as_millis() as u64))
                );
            }
        }
        // A renewal that took longer than the interval is not followed by a
        // burst of catch-up renewals.
        let now = Instant::now();
        if next < now {
            next = now;
        }
    }
}
