//! What one client may take from `seq serve`, whatever it sends: the
//! bounds that keep a hostile or broken client from costing the others
//! their memory, their slots or the password (docs/security.md, "seq
//! serve and its clients", has the reasons in full).
//!
//! * **Replies.** Outside a transaction a connection holds at most
//!   `handler.rs`'s 64 KiB of replies plus the one being made, because
//!   its socket is not read meanwhile. `EXEC` is one reply made of up to
//!   1,024, and `INFO` is as long as the list of sequences, so a
//!   transaction could ask for a gigabyte with a few kilobytes.
//!   [`MAX_REPLY_BYTES`] bounds what a connection holds when a
//!   transaction's replies are added to it, counted as `EXEC` makes them,
//!   before any of its requests reaches a node; over it the client gets an
//!   error in place of the array and the connection closes, as Redis closes
//!   a client over its `client-output-buffer-limit`.
//! * **Slots.** A connection that never authenticated holds a slot of
//!   `--max-clients` only until a new connection needs it: when every slot
//!   is taken, the oldest unauthenticated connection is closed to admit
//!   the new one ([`Guard::evict_oldest`]), so strangers cannot lock the
//!   password holder out; connections that authenticated are never made
//!   to leave. Each unauthenticated connection also has
//!   [`AUTH_TIME`](crate::timing::serve::AUTH_TIME) (or `--idle-timeout`,
//!   when shorter) to authenticate, busy or not.
//! * **Guesses.** Each wrong password is answered after
//!   [`AUTH_PAUSE`](crate::timing::serve::AUTH_PAUSE),
//!   and the [`MAX_AUTH_FAILURES`]th closes the connection, so one
//!   connection tries a few passwords a second instead of tens of
//!   thousands; every failure is counted (`INFO stats`, the metrics).
//!
//! Each of these is logged, at most once per [`LIMIT_LOG_EVERY`] for each kind
//! ([`Throttle`]): a flood of them is one line with a count, not a flood of
//! lines. No line holds a password.

use crate::base::{Suppressed, Throttle};
use crate::timing::serve::LIMIT_LOG_EVERY;
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;
use tokio::sync::oneshot;

/// Most bytes of replies one connection holds with a transaction's:
/// four times the largest reply a transaction of anything but `INFO` can
/// have (1,024 ids and 256 KiB of `ECHO`), so that every such transaction
/// passes; a few `INFO`s of a server with thousands of sequences still fit.
/// `--max-clients` connections at this bound are about 1 GiB at most.
pub const MAX_REPLY_BYTES: usize = 1024 * 1024;

/// Wrong passwords after which a connection is closed: a client that has
/// the password sends it right the first time; a person may mistype twice.
pub const MAX_AUTH_FAILURES: u32 = 3;

/// The server's side of the limits: the unauthenticated connections, and
/// the log lines about clients over a limit.
#[derive(Default)]
pub struct Guard {
    /// Connections that never authenticated, by id (ids grow in accept
    /// order, so the first is the oldest), with what closes each.
    strangers: Mutex<BTreeMap<u64, oneshot::Sender<()>>>,
    /// A transaction's replies over [`MAX_REPLY_BYTES`].
    pub too_large: LimitLog,
    /// Wrong passwords.
    pub wrong_password: LimitLog,
    /// Unauthenticated connections closed (evicted, or out of time).
    pub unauthenticated: LimitLog,
}

impl Guard {
    fn strangers(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, oneshot::Sender<()>>> {
        self.strangers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Connection `id` is accepted unauthenticated; what resolves when it
    /// is to give its slot.
    pub fn stranger(&self, id: u64) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        self.strangers().insert(id, tx);
        rx
    }

    /// Connection `id` authenticated or closed: it is not evicted.
    pub fn forget(&self, id: u64) {
        self.strangers().remove(&id);
    }

    /// Tells the oldest unauthenticated connection to close; false when
    /// there is none.
    pub fn evict_oldest(&self) -> bool {
        let mut strangers = self.strangers();
        while let Some((_, tx)) = strangers.pop_first() {
            // A send fails only to a connection closing already.
            if tx.send(()).is_ok() {
                return true;
            }
        }
        false
    }
}

/// Log lines of one kind, at most one per [`LIMIT_LOG_EVERY`]: one
/// [`Throttle`] that every connection shares.
pub struct LimitLog(Mutex<Throttle>);

impl Default for LimitLog {
    fn default() -> LimitLog {
        LimitLog(Mutex::new(Throttle::new(LIMIT_LOG_EVERY)))
    }
}

impl LimitLog {
    /// Whether to write a line now: with the lines of this kind left out
    /// since the last one written, or `None` to leave it out.
    pub fn admit(&self) -> Option<Suppressed> {
        let mut throttle = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        throttle.admit(Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_log_writes_one_line_then_leaves_the_rest_out() {
        let log = LimitLog::default();
        assert_eq!(log.admit().map(|s| s.to_string()), Some(String::new()));
        assert_eq!(log.admit(), None);
        assert_eq!(log.admit(), None);
    }

    #[test]
    fn the_oldest_stranger_goes_first_and_the_known_never() {
        let guard = Guard::default();
        let mut first = guard.stranger(1);
        let mut second = guard.stranger(2);
        let mut third = guard.stranger(3);
        guard.forget(1);
        assert!(guard.evict_oldest());
        assert!(second.try_recv().is_ok());
        assert!(first.try_recv().is_err() && third.try_recv().is_err());
        drop(third);
        assert!(!guard.evict_oldest(), "a closing connection is not evicted");
    }
}
