//! What wake.lua takes from the scripts it is put in front of, built in one
//! place: an attempt's place in the queue ([`Queued`]) and a release's
//! wake-up ([`Waking`]). wake.lua's header is the contract; each script
//! that carries these says where (the last of its KEYS and of its ARGV).
//!
//! Public so that the conformance tests (`tests/conformance/`) replay the
//! model checkers' steps through the very invocations the code makes.

use super::Channel;
use std::time::Duration;

/// A waiting attempt's place in its claim's queue: the queue's key, last of
/// the attempt script's KEYS, and the place, last of its ARGV, packed
/// `ARRIVAL:KEEP:MEMBER` ([`super::Wakeups::queued`] makes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued<'a> {
    pub queue: &'a str,
    /// The waiter's wall clock when it started waiting (Unix µs): its
    /// score, the same on every master.
    pub arrival_us: u64,
    /// How long the queue outlives this attempt.
    pub keep: Duration,
    /// Random: the waiter listens on `CHANNEL:MEMBER`.
    pub member: &'a str,
}

impl Queued<'_> {
    /// The place as wake.lua unpacks it: `ARRIVAL:KEEP:MEMBER`, KEEP in ms.
    pub fn place(&self) -> String {
        format!(
            "{}:{}:{}",
            self.arrival_us,
            self.keep.as_millis().max(1),
            self.member
        )
    }

    /// Puts the queue after `invocation`'s keys and the place after its
    /// arguments: call it once the script's own are in.
    pub fn add_to(&self, invocation: &mut redis::ScriptInvocation<'_>) {
        invocation.key(self.queue).arg(self.place());
    }
}

/// A freeing script's wake-up (wake.lua's `wake(channel, mode, queue,
/// waker)`): the queue of waiters, last of its KEYS when named, then the
/// channel, how to publish on it, and the releaser's own place (`''` for
/// none), last of its ARGV.
#[derive(Clone, Copy, Debug)]
pub struct Waking<'a> {
    pub channel: &'a Channel,
    pub queue: Option<&'a str>,
    pub waker: &'a str,
}

impl Waking<'_> {
    /// Puts the queue (if named) after `invocation`'s keys and the rest
    /// after its arguments: call it once the script's own are in.
    pub fn add_to(&self, invocation: &mut redis::ScriptInvocation<'_>) {
        if let Some(queue) = self.queue {
            invocation.key(queue);
        }
        invocation
            .arg(self.channel.name())
            .arg(self.channel.command())
            .arg(self.waker);
    }
}
