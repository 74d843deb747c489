//! An end for the waits of a whole attempt: a claim's attempt (a lease, a
//! lock) waits for replicas (`WAIT`) after it wrote, and must release
//! what it wrote if they do not confirm it. Cut off at the bound of the
//! command's wait in the middle of that `WAIT`, it could release nothing
//! (a release sent behind a `WAIT` waits for it, and is lost when the
//! command exits). So the retry policy runs each attempt within
//! [`waits_end_by`], which ends every `WAIT` the attempt sends by a
//! deadline early enough for the undo ([`crate::timing::retry`]).

use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

tokio::task_local! {
    static DEADLINE: Instant;
}

/// Runs `fut` with every `WAIT` for replicas it sends ([`super::Store::confirm`])
/// ending by `deadline` at the latest (`None`: by their own bound only).
pub async fn waits_end_by<F: Future>(deadline: Option<Instant>, fut: F) -> F::Output {
    match deadline {
        Some(deadline) => DEADLINE.scope(deadline, fut).await,
        None => fut.await,
    }
}

/// The bound of a `WAIT` whose own is `bound`: no later than the deadline
/// of [`waits_end_by`], if there is one.
pub(super) fn wait_bound(bound: Duration) -> Duration {
    DEADLINE
        .try_with(|deadline| deadline.saturating_duration_since(Instant::now()))
        .map_or(bound, |left| left.min(bound))
}
