//! `MULTI` / `EXEC` / `DISCARD`, as Redis runs them, for the commands
//! `seq serve` answers: redis-py's default `pipeline()`, ioredis's and
//! node-redis's `multi()` are transactions, and a server that refused
//! `MULTI` but ran what followed would consume ids for a caller that got
//! an exception instead of them.
//!
//! What is queued is the parsed [`Command`]: `command.rs` checked every
//! argument, so a mistake (a bad increment or name, a command not allowed
//! in a transaction) is refused while queuing and `EXEC` answers
//! `-EXECABORT` and runs nothing. Redis would run the rest; here a
//! transaction with a mistake consumes no id at all, and neither does a
//! discarded one, since nothing queued has touched a node.
//!
//! `EXEC` hands the queue back to the dispatcher ([`take`]), which
//! dispatches every request at once, so that the `INCR`s on one name share
//! one group-commit round; a `GET` still waits for the replies before it
//! (the connection's order rule, `handler.rs`). The replies made without
//! the nodes (`PING`, `ECHO`, `INFO`) are made first and counted against
//! the bound on one connection's replies (`limits.rs`), so a transaction
//! past it is refused before any of it reached a node.
//!
//! A queue holds at most [`MAX_QUEUED`] requests and [`MAX_QUEUED_BYTES`]
//! of arguments, so a client that never sends `EXEC` costs bounded memory.
//! This file keeps the queue and Redis's answers about it, and imports
//! neither the dispatcher nor the connection. What a client sees:
//! docs/seq.md, "Transactions".

use super::command::Command;
use super::reply::{Outcome, err, ok, simple};

/// Most requests in one transaction.
pub const MAX_QUEUED: usize = 1024;
/// Most bytes of arguments in one transaction.
pub const MAX_QUEUED_BYTES: usize = 256 * 1024;

/// The queue of a connection inside `MULTI`.
#[derive(Default)]
pub struct Transaction {
    queued: Vec<Command>,
    bytes: usize,
    /// A request was refused while queuing: `EXEC` aborts.
    failed: bool,
}

/// `MULTI`, for a connection whose transaction (if any) is `multi`.
pub fn begin(multi: &mut Option<Transaction>) -> Outcome {
    if multi.is_some() {
        return err("ERR MULTI calls can not be nested");
    }
    *multi = Some(Transaction::default());
    ok()
}

pub fn discard(multi: &mut Option<Transaction>) -> Outcome {
    match multi.take() {
        Some(_) => ok(),
        None => err("ERR DISCARD without MULTI"),
    }
}

pub fn watch(multi: &Option<Transaction>) -> Outcome {
    if multi.is_some() {
        return err("ERR WATCH inside MULTI is not allowed");
    }
    err(
        "ERR WATCH is not supported by seq serve: its sequences only grow, so INCR needs no \
         check-and-set; send MULTI ... EXEC without WATCH",
    )
}

impl Transaction {
    /// A request inside `MULTI` (of `size` bytes as sent), as parsed:
    /// queued, or refused (and the transaction marked to abort).
    pub fn queue(&mut self, parsed: Result<Command, Outcome>, size: usize) -> Outcome {
        let refusal = match parsed {
            Err(refusal) => refusal,
            Ok(_) if self.queued.len() >= MAX_QUEUED => err(&format!(
                "ERR a transaction holds at most {MAX_QUEUED} commands; this one is discarded at \
                 EXEC"
            )),
            Ok(_) if self.bytes + size > MAX_QUEUED_BYTES => err(&format!(
                "ERR a transaction holds at most {MAX_QUEUED_BYTES} bytes of arguments; this one \
                 is discarded at EXEC"
            )),
            Ok(command) => {
                self.bytes += size;
                self.queued.push(command);
                return Outcome::now(|out| simple(out, "QUEUED"));
            }
        };
        self.failed = true;
        refusal
    }
}

/// `EXEC`: the queued commands, for the dispatcher to run in order; or
/// the reply when there is nothing to run.
pub fn take(multi: &mut Option<Transaction>) -> Result<Vec<Command>, Outcome> {
    let Some(tx) = multi.take() else {
        return Err(err("ERR EXEC without MULTI"));
    };
    if tx.failed {
        return Err(err(
            "EXECABORT Transaction discarded because of previous errors.",
        ));
    }
    Ok(tx.queued)
}
