//! `MULTI` / `EXEC` / `DISCARD`, as Redis runs them, for the commands
//! `seq serve` answers: redis-py's default `pipeline()`, ioredis's and
//! node-redis's `multi()` are transactions, and a server that refused
//! `MULTI` but ran what followed would consume ids for a caller that got
//! an exception instead of them.
//!
//! * After `MULTI`, each request is checked and queued (`+QUEUED`), not
//!   run. `EXEC` runs the queue as one block, in order, and replies with
//!   the array of the replies. Running it is dispatching every request at
//!   once, with no wait in between, so the `INCR`s on one name land in
//!   that name's queue back to back and share one group-commit round as
//!   far as `--max-batch` allows. A `GET` after a request still unanswered
//!   (in the transaction or before it on the connection) is the exception:
//!   it reads the nodes once the replies before it are in, so that it sees
//!   them, as in Redis (it may also see ids handed out since: a `GET`
//!   never promises more). That is the connection's own order rule
//!   (`handler.rs`), carried into the transaction. An error at `EXEC` time
//!   (no majority, a sequence at 2^64 − 1) is that element of the array,
//!   as in Redis.
//! * `EXEC`'s reply is one, made of up to 1,024; `INFO` alone is as long
//!   as the list of sequences. So the replies made without the nodes
//!   (`PING`, `ECHO`, `INFO`) are made first and counted, with what the
//!   connection holds already, against the bound on one connection's
//!   replies (`limits.rs`); past it the client gets one error in place of
//!   the array and the connection closes, before any request of the
//!   transaction reached a node (`dispatch.rs` runs `EXEC`). An `INFO` in
//!   a transaction reports the server as `EXEC` began.
//! * A request refused while queuing (unknown, wrong arity, a bad
//!   increment or sequence name, a command not allowed in a transaction)
//!   gets its error, and `EXEC` then answers `-EXECABORT` and runs
//!   nothing. Redis finds a bad increment only at `EXEC` and runs the
//!   rest; here every argument is checked while queuing, so that a
//!   transaction with a mistake consumes no id at all.
//! * `DISCARD` drops the queue. Nothing queued has touched a node, so a
//!   discarded or aborted transaction consumes no id.
//! * `WATCH` is refused (ids only grow: there is nothing to check and
//!   set), `UNWATCH` is `+OK`; `MULTI` inside `MULTI`, `EXEC` or `DISCARD`
//!   outside one are errors with Redis's words; `QUIT` and `RESET` act at
//!   once, as in Redis.
//!
//! A queue holds at most [`MAX_QUEUED`] requests and [`MAX_QUEUED_BYTES`]
//! of arguments: one more is refused (and aborts the transaction), so a
//! client that never sends `EXEC` costs bounded memory.
//!
//! What is queued is the parsed [`Command`] (`command.rs` checked every
//! argument, which is why a mistake is found while queuing); `EXEC` hands
//! the queue back to the dispatcher ([`take`]), which runs it
//! (`dispatch.rs`). This file keeps the queue and Redis's answers about
//! it, and imports neither the dispatcher nor the connection.

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
