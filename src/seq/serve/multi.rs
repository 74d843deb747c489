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
//!   transaction reached a node. An `INFO` in a transaction reports the
//!   server as `EXEC` began.
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

use super::command::{self, InFlight, Outcome, arity, err, ok, reply};
use super::limits::{self, MAX_REPLY_BYTES};
use super::resp::{self, Request};
use super::{Client, Server};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

/// Most requests in one transaction.
pub const MAX_QUEUED: usize = 1024;
/// Most bytes of arguments in one transaction.
pub const MAX_QUEUED_BYTES: usize = 256 * 1024;

/// The queue of a connection inside `MULTI`.
#[derive(Default)]
pub struct Transaction {
    queued: Vec<Request>,
    bytes: usize,
    /// A request was refused while queuing: `EXEC` aborts.
    failed: bool,
}

/// The commands that act at once inside `MULTI` instead of being queued.
pub fn acts_at_once(name: &str) -> bool {
    matches!(
        name,
        "EXEC" | "DISCARD" | "MULTI" | "WATCH" | "QUIT" | "RESET"
    )
}

pub fn begin(client: &mut Client, args: &[Vec<u8>]) -> Outcome {
    if !args.is_empty() {
        return arity("multi");
    }
    if client.multi.is_some() {
        return err("ERR MULTI calls can not be nested");
    }
    client.multi = Some(Transaction::default());
    ok()
}

pub fn discard(client: &mut Client, args: &[Vec<u8>]) -> Outcome {
    if !args.is_empty() {
        return arity("discard");
    }
    match client.multi.take() {
        Some(_) => ok(),
        None => err("ERR DISCARD without MULTI"),
    }
}

pub fn watch(client: &Client) -> Outcome {
    if client.multi.is_some() {
        return err("ERR WATCH inside MULTI is not allowed");
    }
    err(
        "ERR WATCH is not supported by seq serve: its sequences only grow, so INCR needs no \
         check-and-set; send MULTI ... EXEC without WATCH",
    )
}

/// A request inside `MULTI`: checked, then queued, or refused (and the
/// transaction marked to abort).
pub fn queue(client: &mut Client, name: &str, req: Request) -> Outcome {
    let Some(tx) = client.multi.as_mut() else {
        return err("ERR not inside MULTI");
    };
    let refusal = match command::check_queueable(name, &req[1..]) {
        Err(refusal) => Some(refusal),
        Ok(()) if tx.queued.len() >= MAX_QUEUED => Some(err(&format!(
            "ERR a transaction holds at most {MAX_QUEUED} commands; this one is discarded at EXEC"
        ))),
        Ok(()) => {
            let size: usize = req.iter().map(Vec::len).sum();
            (tx.bytes + size > MAX_QUEUED_BYTES).then(|| {
                err(&format!(
                    "ERR a transaction holds at most {MAX_QUEUED_BYTES} bytes of arguments; this \
                     one is discarded at EXEC"
                ))
            })
        }
    };
    if let Some(refusal) = refusal {
        tx.failed = true;
        return refusal;
    }
    tx.bytes += req.iter().map(Vec::len).sum::<usize>();
    tx.queued.push(req);
    reply(|out| resp::simple(out, "QUEUED"))
}

/// `EXEC`: the queued requests, run in order; their replies come as one
/// array ([`Outcome::Exec`]). `before` is what the connection has in
/// flight before it.
///
/// The replies made without the nodes (`PING`, `ECHO`, `INFO`) are made
/// first, each counted against [`MAX_REPLY_BYTES`] with what the
/// connection holds already and an id's room for each request to the
/// nodes: a transaction over the bound stops there, before any of its
/// requests reached a node, so it consumes no id. Then the requests to the
/// nodes are dispatched in order, as the connection's own would be (a
/// `GET` after an unanswered request waits for it: `command::read`).
pub fn exec(
    server: &Arc<Server>,
    client: &mut Client,
    args: &[Vec<u8>],
    before: InFlight,
) -> Outcome {
    if !args.is_empty() {
        return arity("exec");
    }
    let Some(tx) = client.multi.take() else {
        return err("ERR EXEC without MULTI");
    };
    if tx.failed {
        return err("EXECABORT Transaction discarded because of previous errors.");
    }
    let mut held = before.bytes;
    let mut made = Vec::with_capacity(tx.queued.len());
    for req in tx.queued {
        let to_nodes = ["INCR", "INCRBY", "GET"]
            .iter()
            .any(|name| req[0].eq_ignore_ascii_case(name.as_bytes()));
        let slot = if to_nodes {
            held += ID_REPLY;
            Err(req)
        } else {
            let outcome = command::dispatch(server, client, req, before);
            held += outcome.held();
            Ok(outcome)
        };
        if held > MAX_REPLY_BYTES {
            return too_large(server, client);
        }
        made.push(slot);
    }
    let mut flight = before;
    let replies = made
        .into_iter()
        .map(|slot| {
            let outcome = slot.unwrap_or_else(|req| command::dispatch(server, client, req, flight));
            flight.add(&outcome);
            outcome
        })
        .collect();
    Outcome::Exec(replies)
}

/// The room of the longest id reply: `$20`, its 20 digits, two CRLFs.
const ID_REPLY: usize = 27;

/// A transaction whose replies would pass the bound: counted, logged, an
/// error in place of its array, and the connection closes.
fn too_large(server: &Server, client: &Client) -> Outcome {
    server.stats.too_large.fetch_add(1, Relaxed);
    if let Some(left_out) = server.guard.too_large.admit() {
        log::warn!(
            "seq serve: closed the connection of {}: its transaction's replies would exceed {} \
             bytes, the bound on one connection's replies{}",
            client.peer,
            MAX_REPLY_BYTES,
            limits::left_out(left_out)
        );
    }
    command::closing_err(&format!(
        "ERR the transaction's replies would exceed {MAX_REPLY_BYTES} bytes, the bound on one \
         connection's replies; the connection is closed"
    ))
}
