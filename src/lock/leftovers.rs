//! The tokens of a locker's failed attempts that may still hold the lock
//! somewhere, each until it has surely expired there.
//!
//! A failed attempt's token may sit where its undo did not reach. With a
//! replica promoted between the two (Sentinel), the write reached the
//! replica and the delete went to the old master only; with a reply lost,
//! the delete may not have been sent at all. The new master then holds a
//! token that no command holds, "held by" this very process until its ttl,
//! while the process waits for the lock, for seconds during a failover. So
//! a failed attempt whose token was written somewhere, or whose fate a
//! node did not tell, is kept among the [`Leftovers`], and every later
//! undo (`release.rs`) deletes those tokens again, wherever they still
//! are. Deleting them is always safe: a failed attempt never ran a
//! command, and a token is this process's alone.

use super::token::Token;
use std::time::Duration;
use tokio::time::Instant;

/// How many tokens of failed attempts are released again, the newest.
const LEFTOVERS_KEPT: usize = 16;

/// Tokens of this locker's failed attempts that may still hold the lock
/// somewhere, each until it has surely expired there.
#[derive(Clone, Debug, Default)]
pub(super) struct Leftovers(Vec<(Token, Instant)>);

impl Leftovers {
    /// The tokens that may still be alive.
    pub(super) fn live(&mut self) -> Vec<Token> {
        let now = Instant::now();
        self.0.retain(|(_, until)| *until > now);
        self.0.iter().map(|(token, _)| token.clone()).collect()
    }

    /// Keeps `token`, written with `ttl`, for twice that: a promoted
    /// replica expires the key by its own clock.
    pub(super) fn keep(&mut self, token: &Token, ttl: Duration) {
        if self.0.len() >= LEFTOVERS_KEPT {
            self.0.remove(0);
        }
        self.0.push((token.clone(), Instant::now() + ttl * 2));
    }
}
