//! Running a child while a claim holds: the shared middle of `run`, `lock`
//! and every later subcommand that wraps a command.
//!
//! ```text
//! claim (done by the caller) → grace delay → child runs → release
//! ```
//!
//! While the child runs, three things can happen, and [`hold`] waits for all
//! of them at once: the child ends (release, exit with its status), the
//! keeper reports the claim lost (kill the child's group, exit 124), or a
//! signal arrives (forward it to the child's group). The claim is released
//! on every path, and never before the child's whole group is gone.

use crate::error::{EXIT_LOST, Error, Result};
use crate::keeper::{Claim, LeaseKeeper};
use crate::signals::Signals;
use crate::supervise::{Child, ChildEvent, ChildSpec, exit_code};
use std::time::Duration;

/// How a held child is treated.
#[derive(Clone, Copy, Debug)]
pub struct HoldOptions {
    /// Wait this long after claiming before starting the child.
    pub delay: Duration,
    /// After SIGTERM on loss, wait this long before SIGKILL.
    pub kill_after: Duration,
    /// Bound on the final release request.
    pub release_timeout: Duration,
}

/// Runs `spec` while `keeper` keeps the claim; returns the exit status to
/// report. Consumes the keeper, releasing the claim at the end.
pub async fn hold<C: Claim>(
    mut keeper: LeaseKeeper<C>,
    spec: &ChildSpec,
    options: HoldOptions,
    signals: &mut Signals,
) -> Result<i32> {
    if !options.delay.is_zero() {
        crate::info!(
            "sleep {} for making sure that the previous holder has stopped",
            humantime::format_duration(options.delay)
        );
        tokio::select! {
            _ = tokio::time::sleep(options.delay) => {}
            loss = keeper.lost() => {
                let what = release(keeper, options).await;
                return Err(Error::Lost(format!("{what} lost before the command started: {loss}")));
            }
            sig = signals.recv() => {
                release(keeper, options).await;
                return Err(Error::Interrupted(sig as i32));
            }
        }
    }

    crate::info!("starting...");
    let mut child = match Child::spawn(spec).await {
        Ok(child) => child,
        Err(e) => {
            release(keeper, options).await;
            return Err(e);
        }
    };

    let status = loop {
        tokio::select! {
            event = child.event() => match event {
                ChildEvent::Exited(status) => break status,
                ChildEvent::Stopped(sig) => child.follow_stop(sig),
            },
            loss = keeper.lost() => {
                crate::warn!("killing the command (process group {}): {loss}", child.pid());
                // One --kill-after for the whole group, counted from the
                // SIGTERM: a leader that exits late must not buy the rest of
                // its group another one (the new holder's --delay allows one).
                let sigterm = tokio::time::Instant::now();
                child.terminate(options.kill_after).await;
                child
                    .kill_leftovers(options.kill_after.saturating_sub(sigterm.elapsed()))
                    .await;
                // What is left of the claim (a lock may still hold our
                // token on a minority of its masters) is given back, so that
                // the next holder need not wait for it to expire.
                let what = release(keeper, options).await;
                return Err(Error::Lost(format!(
                    "{what} lost while the command ran ({loss}); the command was killed (exit {EXIT_LOST})"
                )));
            }
            sig = signals.recv() => child.signal(sig),
        }
    };
    child.kill_leftovers(options.kill_after).await;
    release(keeper, options).await;
    Ok(exit_code(status))
}

/// Stops the keeper and gives back whatever is still ours of the claim
/// (release only touches what is ours), within the release timeout. Returns
/// the claim's description, for messages.
pub async fn release<C: Claim>(keeper: LeaseKeeper<C>, options: HoldOptions) -> String {
    let mut claim = keeper.stop().await;
    let what = claim.describe();
    crate::info!("releasing {what}...");
    match tokio::time::timeout(options.release_timeout, claim.release()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => crate::warn!("could not release {what}: {e}; it will expire by itself"),
        Err(_) => crate::warn!("could not release {what} in time; it will expire by itself"),
    }
    what
}
