//! `yaraus run` waiting for a free id: the [`Claimant`] of a [`Leaser`],
//! which the one wait loop of [`crate::claim::wait`] drives. Its attempts
//! are [`Leaser::try_lease`]; between two it pauses from half of
//! `--interval` to all of it, and that pause is only the fallback poll:
//! the pool's release script publishes on the pool's wake channel, which a
//! waiter subscribes to after its first refusal (claim/wake.rs), so a run
//! that gives its id back wakes a waiter at once. An id freed otherwise (a
//! lease that expired, an id freed by hand, a pool grown by `init`)
//! publishes nothing and is found by the poll.

use super::clock_guard;
use super::held::Lease;
use super::leaser::{Acquired, Leaser, pause};
use crate::claim::{Attempt, Claimant, Refusal};
use crate::error::Result;
use std::time::Duration;

impl Claimant for Leaser {
    type Claim = Lease;

    fn wanted(&self) -> String {
        format!("a free id in {}", self.pool_name())
    }

    async fn attempt(&mut self) -> Result<Attempt<Lease>> {
        let attempt = self.try_lease().await;
        // Said once the pool has answered, so that a pool that is not there
        // (bad input) gets one line on stderr: the error.
        // (A server out of reach is said by the wait loop, once.)
        if !self.announced && attempt.is_ok() {
            log::info!("getting new id...");
            self.announced = true;
        }
        match attempt {
            Ok(Acquired::Leased(lease)) => Ok(Attempt::Acquired(lease)),
            // The earliest expiry is no forecast: a waiter cannot tell a
            // holder that renews from one that died, so it says when the
            // lease runs out unless renewed.
            Ok(Acquired::Exhausted {
                next_free,
                expires_at,
            }) => Ok(Attempt::Refused(Refusal::busy(format!(
                "no id is free: every id of the pool {} is held until its lease expires, unless \
                 its holder renews it (the earliest expires in {}, at {} on the server's clock)",
                self.pool_name(),
                crate::base::duration::shown(Duration::from_secs(next_free.as_secs())),
                clock_guard::show_wall(expires_at)
            )))),
            Ok(Acquired::NotReplicated { why }) => Ok(Attempt::Refused(Refusal::unreachable(why))),
            Err(e) if e.is_unavailable() => {
                Ok(Attempt::Refused(Refusal::unreachable(e.to_string())))
            }
            Err(e) => Err(e),
        }
    }

    /// An attempt is one script and perhaps a `WAIT`, each bounded by the
    /// store's response timeout: let it finish, and release what it got.
    fn settle_within(&self) -> Duration {
        self.store.timeouts().settle()
    }

    /// Reached only if the store's own timeouts failed to end the attempt:
    /// an id it may have leased stays leased until `--expire`, as after a
    /// SIGKILL, and is never handed out twice.
    async fn undo_interrupted(&mut self) {}

    /// Every `--interval` (from half of it, so that waiters spread out):
    /// with wake-ups only the fallback poll, which a release ends.
    fn pause(&self) -> (Duration, Duration) {
        pause(self.interval, &self.wait)
    }

    /// Subscribes to the pool's wake channel (claim/wake.rs).
    async fn arm_wakeups(&mut self) -> bool {
        self.wakeups.arm([&self.store]).await
    }

    fn woken(&mut self) -> impl std::future::Future<Output = ()> {
        self.wakeups.woken()
    }

    fn disarm_wakeups(&mut self) {
        self.wakeups.disarm();
    }
}
