//! A lock this process holds, as the claim the keeper renews, and
//! [`Attempt`], what one attempt at the lock comes to.

use super::locker::Locker;
use super::token::Token;
use crate::base::BootInstant;
use crate::claim::{Attempt as ClaimAttempt, Claim, RenewError};
use crate::error::{Error, Result};
use std::time::Duration;

/// A lock this process holds: the [`Claim`] that `yaraus lock` keeps alive
/// while its command runs.
pub struct HeldLock {
    pub(super) locker: Locker,
    pub(super) token: Token,
    pub(super) fencing_token: u64,
    pub(super) deadline: BootInstant,
    pub(super) taken_on: usize,
}

impl HeldLock {
    pub fn token(&self) -> &Token {
        &self.token
    }

    /// The number for the resource the lock protects: greater than any
    /// handed out before for this name.
    pub fn fencing_token(&self) -> u64 {
        self.fencing_token
    }

    /// When the lock stops being ours unless extended (boot clock).
    pub fn deadline(&self) -> BootInstant {
        self.deadline
    }

    /// How much validity is left.
    pub fn remaining(&self) -> Duration {
        self.deadline.remaining()
    }

    /// On how many masters the acquisition succeeded.
    pub fn taken_on(&self) -> usize {
        self.taken_on
    }

    pub fn locker(&self) -> &Locker {
        &self.locker
    }

    /// True while at least half the ttl is left: the rule an acquisition is
    /// held to, checked again just before a command is started with it.
    pub fn fresh_enough(&self) -> bool {
        self.remaining() >= self.locker.ttl / 2
    }
}

impl Claim for HeldLock {
    async fn renew(&mut self) -> Result<Duration, RenewError> {
        self.locker.extend(&self.token).await
    }

    async fn release(&mut self) -> Result<()> {
        let released = self.locker.release(&self.token).await;
        if released.answered == 0 {
            return Err(Error::Unavailable(released.problems.join("; ")));
        }
        Ok(())
    }

    fn describe(&self) -> String {
        self.locker.what()
    }
}

/// The outcome of one attempt at a lock.
pub type Attempt = ClaimAttempt<HeldLock>;
