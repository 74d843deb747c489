//! Keeping a claim alive in the background, and noticing when it is gone.
//!
//! Every long-lived claim of yaraus (a worker id, a lock, an index slot) has
//! the same life: renew every `interval`; stop at once when Redis says the
//! claim belongs to someone else; and when Redis cannot be reached, give up
//! at a *local* deadline that is guaranteed to come before the server's.
//!
//! The deadline is on the boot clock ([`crate::base::boot_clock`]): the instant *before*
//! the last successful renewal was sent, plus the validity the claim reported
//! for it (its ttl minus a clock-drift margin). The server set its expiry at
//! some moment after that send, so our deadline is earlier than the server's
//! as long as the two clocks do not drift apart by more than the margin. The
//! keeper gives up `margin` before it (the time the command is given to stop,
//! `--kill-after`), so that the command is gone by the deadline.
//!
//! The keeper is a task that owns the claim. The owner talks to it through
//! channels, in the style of mini-redis: a `stop` channel to end it (after
//! which the claim comes back for release), a `lost` channel on which the
//! keeper says why the claim ended, when it ends by itself, and a `watch` of
//! the current deadline, which the watchdog is told after every renewal.
//!
//! A log line never holds the keeper up with the binary's logger, which only
//! queues (`src/bin/yaraus/logger/`), and neither does a metric: recording one is an atomic add
//! ([`crate::metrics`]), read by the `--metrics-listen` task on its own.
//! The keeper records what every claim has (held, lost, renewals); what a
//! subcommand measures of its own kind of claim (run: a worker id's clock
//! offset) it records itself, in the `measure` it gives the keeper, which
//! is told the claim at the start and after each renewal.

use crate::base::BootInstant;
use crate::error::Error;
use crate::metrics::Metrics;
use std::future::Future;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

/// Something held in Redis that must be renewed to be kept.
pub trait Claim: Send + 'static {
    /// Renews the claim. On success, returns how long it stays valid counted
    /// from the instant *before* the request was sent (ttl minus drift).
    fn renew(&mut self) -> impl Future<Output = Result<Duration, RenewError>> + Send;

    /// Gives the claim back; a claim that is no longer ours is left alone.
    fn release(&mut self) -> impl Future<Output = Result<(), Error>> + Send;

    /// What is held, for log lines ("id 7", "lock backup").
    fn describe(&self) -> String;

    /// Told before [`release`](Self::release) that the command's whole tree
    /// is gone (`ran`), or that it never started: a claim that records the
    /// last instant its command could run (a worker id's clock horizon) may
    /// record it now instead of its deadline. Never told when that is not
    /// known for sure.
    fn command_gone(&mut self, _ran: bool) {}

    /// When to renew next, for a claim whose renewals keep a schedule of
    /// their own (an index slot renews at fixed instants of each interval);
    /// `None`: every `interval` after the last one.
    fn next_renewal(&self) -> Option<BootInstant> {
        None
    }
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
pub struct Keeper<C: Claim> {
    stop: Option<oneshot::Sender<()>>,
    lost: mpsc::Receiver<Loss>,
    deadline: watch::Receiver<BootInstant>,
    margin: Duration,
    task: JoinHandle<C>,
    /// Where the claim's renewals are recorded; the holder records the
    /// command's life there too (`supervise::hold`).
    metrics: Metrics,
}

impl<C: Claim> Keeper<C> {
    /// Starts keeping `claim`, which is valid until `deadline` as things
    /// stand; the keeper gives up `margin` before the deadline.
    pub fn start(
        claim: C,
        interval: Duration,
        deadline: BootInstant,
        margin: Duration,
    ) -> Keeper<C> {
        Keeper::observed(claim, interval, deadline, margin, Metrics::off(), |_| {})
    }

    /// [`start`](Self::start), recording the claim's renewals, latency and
    /// loss in `metrics`, and telling `measure` the claim at the start and
    /// after each renewal (for what the subcommand measures of it).
    pub fn observed(
        claim: C,
        interval: Duration,
        deadline: BootInstant,
        margin: Duration,
        metrics: Metrics,
        measure: impl FnMut(&C) + Send + 'static,
    ) -> Keeper<C> {
        let (stop_tx, stop_rx) = oneshot::channel();
        let (lost_tx, lost_rx) = mpsc::channel(1);
        let (deadline_tx, deadline_rx) = watch::channel(deadline);
        let task = tokio::spawn(keep(
            claim,
            Timing { interval, margin },
            deadline_tx,
            stop_rx,
            lost_tx,
            metrics.clone(),
            Box::new(measure),
        ));
        Keeper {
            stop: Some(stop_tx),
            lost: lost_rx,
            deadline: deadline_rx,
            margin,
            task,
            metrics,
        }
    }

    /// The metrics the keeper records in (off unless started [`observed`](Self::observed)).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The claim's deadline as of the last successful renewal.
    pub fn deadline(&self) -> BootInstant {
        *self.deadline.borrow()
    }

    /// Whether the time to stop the command (deadline − margin) has come.
    pub fn expired(&self) -> bool {
        self.deadline().saturating_sub(self.margin).has_passed()
    }

    /// Every new deadline, as renewals move it.
    pub fn deadlines(&self) -> watch::Receiver<BootInstant> {
        self.deadline.clone()
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

#[derive(Clone, Copy)]
struct Timing {
    interval: Duration,
    margin: Duration,
}

async fn keep<C: Claim>(
    claim: C,
    timing: Timing,
    deadline: watch::Sender<BootInstant>,
    mut stop: oneshot::Receiver<()>,
    lost: mpsc::Sender<Loss>,
    metrics: Metrics,
    mut measure: Box<dyn FnMut(&C) + Send>,
) -> C {
    metrics.claim_held(true);
    measure(&claim);
    let claim = renew_until_stopped(
        claim,
        timing,
        deadline,
        &mut stop,
        lost,
        &metrics,
        &mut *measure,
    )
    .await;
    metrics.claim_held(false);
    claim
}

async fn renew_until_stopped<C: Claim>(
    mut claim: C,
    timing: Timing,
    deadline: watch::Sender<BootInstant>,
    stop: &mut oneshot::Receiver<()>,
    lost: mpsc::Sender<Loss>,
    metrics: &Metrics,
    measure: &mut (dyn FnMut(&C) + Send),
) -> C {
    let give_up =
        |deadline: &watch::Sender<BootInstant>| deadline.borrow().saturating_sub(timing.margin);
    let interval = timing.interval;
    let mut next = claim
        .next_renewal()
        .unwrap_or_else(|| BootInstant::now() + interval);
    loop {
        tokio::select! {
            _ = &mut *stop => return claim,
            _ = give_up(&deadline).sleep_until() => {
                log::warn!("{}: {}", claim.describe(), Loss::DeadlinePassed);
                metrics.claim_lost();
                let _ = lost.send(Loss::DeadlinePassed).await;
                return claim;
            }
            _ = next.sleep_until() => {}
        }
        let sent = BootInstant::now();
        let outcome = tokio::select! {
            _ = &mut *stop => return claim,
            _ = give_up(&deadline).sleep_until() => Err(RenewError::Failed(Error::Unavailable(
                "renewal still pending at the deadline".into(),
            ))),
            r = claim.renew() => r,
        };
        match outcome {
            Ok(validity) => {
                deadline.send_replace(sent + validity);
                // Each renewal, for an operator looking into a problem: how
                // long it took and how long the claim now holds.
                log::debug!(
                    "{}: renewed in {}, valid for {}",
                    claim.describe(),
                    crate::base::duration::shown(sent.elapsed()),
                    crate::base::duration::shown(validity)
                );
                metrics.renewed(sent.elapsed());
            }
            Err(RenewError::Lost(why)) => {
                log::warn!("{}: lost: {why}", claim.describe());
                metrics.claim_lost();
                let _ = lost.send(Loss::Taken(why)).await;
                return claim;
            }
            Err(RenewError::Failed(e)) => {
                metrics.renewal_failed();
                let left = give_up(&deadline).remaining();
                log::warn!(
                    "{}: renewal failed: {e}; will give up in {}",
                    claim.describe(),
                    crate::base::duration::shown(left)
                );
            }
        }
        measure(&claim);
        next = claim.next_renewal().unwrap_or(next + interval);
        // A renewal that took longer than the interval is not followed by a
        // burst of catch-up renewals.
        let now = BootInstant::now();
        if next < now {
            next = now;
        }
    }
}
