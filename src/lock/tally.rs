//! The count of one Redlock round: what every master said, and what that
//! adds up to.
//!
//! An attempt may take the lock on some masters and still not keep it: a
//! key of another type on a majority, too few masters, no fencing token in
//! time, too little validity left. Every such way out must undo the
//! attempt, exactly once. So the replies go into a [`Tally`] first, and
//! [`Tally::verdict`] (the votes) and [`Tally::too_slow`] (the clock) name
//! each way out as an [`Unkept`] value: the attempt in `acquire.rs` then has
//! one place that undoes it, whatever the reason, instead of one per exit.
//!
//! The clock is the tally's too: validity = ttl − elapsed − drift, elapsed
//! measured from *before* the first request (the Redlock rule), on the
//! monotonic clock, with the same instant on the boot clock for the
//! deadline the keeper and the watchdog enforce.

use super::held::Attempt;
use super::kind::Busy;
use super::locker::Locker;
use super::script::FenceMode;
use crate::base::BootInstant;
use crate::base::setting::Setting;
use crate::claim::{Refusal, RefusalKind};
use crate::error::{Error, Result};
use crate::store::Replies;
use crate::timing::drift::validity;
use crate::timing::sequence::ROUND_LIFETIME;
use std::time::Duration;
use tokio::time::Instant;

/// One node's reply to the acquire script.
#[derive(Debug)]
pub(super) enum NodeAcquire {
    Taken {
        voted: bool,
        counter: u64,
        /// For an accepted proposal: the counter it replaced.
        before: Option<u64>,
    },
    Held {
        holder: Vec<u8>,
        ttl_ms: i64,
        counter: u64,
        holders: Option<i64>,
    },
    WrongType(String),
}

/// Why an attempt that may have taken something does not keep it.
pub(super) enum Unkept {
    /// Worth trying again (busy, unreachable, too slow).
    Refused(Refusal),
    /// A fault that trying again cannot cure.
    Fatal(Error),
}

impl Unkept {
    pub(super) fn into_attempt(self) -> Result<Attempt> {
        match self {
            Unkept::Refused(refusal) => Ok(Attempt::Refused(refusal)),
            Unkept::Fatal(e) => Err(e),
        }
    }
}

/// The replies of one acquire round, counted, and the clock of the round.
pub(super) struct Tally {
    start: Instant,
    boot_start: BootInstant,
    ttl: Duration,
    /// Masters where the lock is ours.
    pub(super) taken: usize,
    /// Masters that accepted our fencing proposal.
    voted: usize,
    /// Masters where the lock is ours but the fencing counter is missing
    /// (a master restarted empty): the sequence's heal pass is due.
    pub(super) without_counter: usize,
    /// With one master, the token its INCR gave.
    incremented: Option<u64>,
    /// The highest fencing counter any node showed.
    pub(super) seen: Option<u64>,
    busy: Vec<Busy>,
    /// Masters where the key is of another type: each one's label and the
    /// message (the label is the `node` of the log line).
    pub(super) wrong: Vec<(String, String)>,
    failed: Vec<String>,
    fatal: Option<Error>,
    /// Per node, the counter our accepted proposal replaced: a failed
    /// attempt puts it back (see undo.lua).
    replaced: Vec<Option<u64>>,
}

impl Tally {
    /// Starts the clock: call just before the round is sent.
    pub(super) fn start(ttl: Duration, masters: usize) -> Tally {
        Tally {
            start: Instant::now(),
            boot_start: BootInstant::now(),
            ttl,
            taken: 0,
            voted: 0,
            without_counter: 0,
            incremented: None,
            seen: None,
            busy: Vec::new(),
            wrong: Vec::new(),
            failed: Vec::new(),
            fatal: None,
            replaced: vec![None; masters],
        }
    }

    /// Counts the round's replies (`labels`: the nodes, in the same order).
    pub(super) fn count(
        &mut self,
        labels: &[String],
        replies: Replies<NodeAcquire>,
        mode: FenceMode,
        key: &str,
    ) {
        for (i, (label, reply)) in labels.iter().zip(replies).enumerate() {
            match reply {
                // Not waited for: the round was settled without it.
                None => {}
                Some(Ok(reply)) => self.record(i, label, reply, mode, key),
                Some(Err(e)) if e.is_fatal() => self.fatal = Some(e),
                Some(Err(e)) => self.failed.push(e.to_string()),
            }
        }
    }

    fn record(&mut self, i: usize, label: &str, reply: NodeAcquire, mode: FenceMode, key: &str) {
        match reply {
            NodeAcquire::Taken {
                voted,
                counter,
                before,
            } => {
                self.taken += 1;
                if matches!(mode, FenceMode::Propose(_)) && voted {
                    self.replaced[i] = before;
                }
                self.voted += usize::from(voted);
                // acquire.lua reports 0 for a missing counter; a real one
                // starts from the clock, never at 0.
                self.without_counter += usize::from(!voted && counter == 0);
                self.observe(counter);
                if matches!(mode, FenceMode::Increment) {
                    self.incremented = Some(counter);
                }
            }
            NodeAcquire::Held {
                holder,
                ttl_ms,
                counter,
                holders,
            } => {
                self.observe(counter);
                self.busy.push(Busy {
                    node: label.to_string(),
                    holder,
                    ttl_ms,
                    holders,
                });
            }
            NodeAcquire::WrongType(kind) => {
                let said = format!("{label} holds a {kind} at {key}");
                self.wrong.push((label.to_string(), said))
            }
        }
    }

    fn observe(&mut self, counter: u64) {
        self.seen = Some(self.seen.map_or(counter, |s| s.max(counter)));
    }

    /// What the votes say: `Ok` when the lock is ours on a majority.
    pub(super) fn verdict(&mut self, locker: &Locker) -> Result<(), Unkept> {
        let (n, m) = (locker.quorum.len(), locker.quorum.majority());
        if let Some(e) = self.fatal.take() {
            return Err(Unkept::Fatal(e));
        }
        if self.wrong.len() > n - m {
            let expected = locker.kind.expected();
            return Err(Unkept::Fatal(Error::State(format!(
                "cannot take the {}: {}, where {expected} was expected; another program uses \
                 that key (pick another name, or {}), or the holders disagree on {}",
                locker.what(),
                self.wrong
                    .iter()
                    .map(|(_, said)| said.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                Setting::Prefix,
                Setting::Limit
            ))));
        }
        if self.taken < m {
            return Err(Unkept::Refused(self.refusal(locker, n, m)));
        }
        Ok(())
    }

    /// The fencing token the round itself settled, if it did: the INCR of
    /// one master, or our proposal when a majority accepted it.
    pub(super) fn fence(&self, mode: FenceMode, majority: usize) -> Option<u64> {
        match mode {
            FenceMode::Increment => self.incremented,
            // Votes counted after the round's lifetime could include a
            // master's last vote before it lost its data (seq/heal.rs).
            FenceMode::Propose(guess)
                if self.voted >= majority && self.boot_start.elapsed() <= ROUND_LIFETIME =>
            {
                Some(guess)
            }
            _ => None,
        }
    }

    /// Where the validity ends, on the monotonic clock.
    fn validity_end(&self) -> Instant {
        self.start + validity(self.ttl)
    }

    /// Until when a separate fencing round may run: it must leave half the
    /// ttl.
    pub(super) fn fence_deadline(&self) -> Instant {
        self.validity_end()
            .checked_sub(self.ttl / 2)
            .unwrap_or(self.start)
            .max(Instant::now())
    }

    /// `Err` when less than half the ttl is left now.
    pub(super) fn too_slow(&self, what: &str, masters: usize) -> Result<(), Unkept> {
        let now = Instant::now();
        if self.validity_end().saturating_duration_since(now) >= self.ttl / 2 {
            return Ok(());
        }
        Err(Unkept::Refused(Refusal {
            kind: RefusalKind::TooSlow,
            message: format!(
                "took the {what} on {} of {masters} masters, but that took {} of its {} ttl, \
                 leaving too little to be safe",
                self.taken,
                crate::base::duration::shown(now - self.start),
                crate::base::duration::shown(self.ttl)
            ),
        }))
    }

    /// When the lock stops being ours unless extended, on the boot clock.
    pub(super) fn deadline(&self) -> BootInstant {
        self.boot_start + validity(self.ttl)
    }

    /// Per node, the counter our accepted proposal replaced.
    pub(super) fn replaced(&self) -> &[Option<u64>] {
        &self.replaced
    }

    /// Sorts a failed attempt into busy / unreachable, with a message that
    /// says who holds the lock or which masters could not be reached.
    fn refusal(&self, locker: &Locker, n: usize, m: usize) -> Refusal {
        let (busy, failed) = (&self.busy, &self.failed);
        let held_by = busy.first().map(|b| locker.kind.held_by(&locker.what(), b));
        if busy.len() > n - m || (!busy.is_empty() && failed.len() <= n - m) {
            let mut message = held_by.unwrap_or_default();
            if n > 1 {
                message = format!(
                    "{message}; busy on {} of {n} masters{}{}",
                    busy.len(),
                    if failed.is_empty() {
                        String::new()
                    } else {
                        format!(", {} unreachable", failed.len())
                    },
                    if busy.len() <= n - m {
                        "; contenders split the votes"
                    } else {
                        ""
                    }
                );
            }
            return Refusal {
                kind: RefusalKind::Busy,
                message,
            };
        }
        let mut why: Vec<String> = failed.to_vec();
        why.extend(self.wrong.iter().map(|(_, said)| said.clone()));
        if !busy.is_empty() {
            why.push(format!(
                "{} held it elsewhere",
                busy.iter()
                    .map(|b| b.node.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Refusal {
            kind: RefusalKind::Unreachable,
            message: if n == 1 {
                why.join("; ")
            } else {
                format!(
                    "cannot take the {}: {} of the {n} masters failed, and a majority ({m}) is needed: {}",
                    locker.what(),
                    failed.len(),
                    why.join("; ")
                )
            },
        }
    }
}
