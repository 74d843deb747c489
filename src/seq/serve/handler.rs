//! One client connection: read, parse, run, reply in request order, as
//! mini-redis's `Handler` does over its `Connection` (`conn.rs`); the
//! commands themselves are `command.rs`.
//!
//! Every complete request in the buffer, and in the socket already, is
//! dispatched before any reply is awaited, so a client that pipelines
//! `INCR`s has them all queued at once and they share a round; the replies
//! are then written in request order. That is a [`Turn`].
//! At most [`MAX_PENDING`] requests (and about [`MAX_QUEUED`] bytes of
//! replies) are outstanding per connection, and the socket is not read
//! while they are, so the sequencers' queues and this connection's buffers
//! stay bounded whatever the client sends: about 200 KiB at worst; an idle
//! connection holds the room of its last read (512 bytes, up to 16 KiB for
//! one whose last reads were a long pipeline: `conn.rs`).
//!
//! The per-request work is kept off the allocator and the timer wheel:
//! the replies of a turn are encoded straight into the connection's
//! buffer (an id is a `u64` until then), the turn's list is reused, and
//! `--idle-timeout` is one timer per connection that is re-armed only when
//! it fires (it then checks the time of the last request), not a timer
//! armed and cancelled around every wait.
//!
//! A connection is closed on:
//! * a protocol error (`-ERR Protocol error: …` first, as Redis does);
//! * `QUIT`, end of stream, or a failed write;
//! * `--idle-timeout` without a complete request: a client that sent half
//!   a frame and went silent counts as idle, the half frame does not renew
//!   the timer; so is one that reads none of its replies for that long;
//! * the server stopping, once the replies of its requests in flight are
//!   written (an idle connection closes at once).

use super::command::{self, Outcome};
use super::conn::{Connection, ReadNow};
use super::resp::{self, ProtocolError};
use super::{Client, Server};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::{Instant, Sleep};

/// Most requests of one connection in flight at once.
pub const MAX_PENDING: usize = 256;
/// Most bytes of replies one connection holds before it writes them (the
/// socket is not read meanwhile): a client that pipelines large `ECHO`s
/// and reads nothing stalls itself, not the server's memory.
const MAX_QUEUED: usize = 64 * 1024;

/// Serves one client until its connection closes.
pub async fn serve(
    server: &Arc<Server>,
    stream: TcpStream,
    client: Client,
    shutdown: watch::Receiver<bool>,
) {
    let now = Instant::now();
    let mut handler = Handler {
        server,
        client,
        connection: Connection::new(stream),
        shutdown,
        last_request: now,
        idle: server
            .idle_timeout
            .map(|t| Box::pin(tokio::time::sleep_until(now + t))),
        turn: Turn::default(),
    };
    handler.run().await;
}

/// One connection's loop and state.
struct Handler<'a> {
    server: &'a Arc<Server>,
    client: Client,
    connection: Connection,
    shutdown: watch::Receiver<bool>,
    /// When the last complete request came, for `--idle-timeout`.
    last_request: Instant,
    /// With `--idle-timeout`: due at or before `last_request` + the timeout.
    idle: Option<Pin<Box<Sleep>>>,
    /// The current turn (its list is kept from one turn to the next).
    turn: Turn,
}

/// The requests dispatched at once, whose replies are written together.
#[derive(Default)]
struct Turn {
    pending: Vec<Outcome>,
    /// Bytes of replies already made (an ECHO of 64 KiB, say).
    queued: usize,
    /// The last request closes the connection (`QUIT`, a protocol error).
    closing: bool,
    /// The client closed its end.
    ended: bool,
}

impl Turn {
    /// Ready for the next turn, keeping the list's allocation.
    fn clear(&mut self) {
        self.pending.clear();
        self.queued = 0;
        self.closing = false;
        self.ended = false;
    }

    fn push(&mut self, outcome: Outcome) {
        self.closing = matches!(outcome, Outcome::Close(_));
        if let Outcome::Now(reply) | Outcome::Close(reply) = &outcome {
            self.queued += reply.len();
        }
        self.pending.push(outcome);
    }

    /// Whether the connection's limit of outstanding requests is reached.
    fn full(&self) -> bool {
        self.pending.len() >= MAX_PENDING || self.queued >= MAX_QUEUED
    }
}

impl Handler<'_> {
    async fn run(&mut self) {
        loop {
            self.dispatch();
            let full = self.turn.full();
            let (closing, ended) = (self.turn.closing, self.turn.ended);
            if !self.reply().await {
                return;
            }
            if closing {
                self.connection.shutdown().await;
                return;
            }
            if ended {
                return;
            }
            // The socket is not read while the limit is reached.
            if full {
                continue;
            }
            if *self.shutdown.borrow() || !self.wait_for_more().await {
                return;
            }
        }
    }

    /// Dispatches every complete request there is, up to the limits, into
    /// the turn.
    fn dispatch(&mut self) {
        let turn = &mut self.turn;
        turn.clear();
        while !turn.full() && !turn.closing {
            match self.connection.request() {
                Ok(Some(req)) => {
                    self.last_request = Instant::now();
                    turn.push(command::dispatch(self.server, &mut self.client, req));
                }
                // Requests of a pipeline may be in the socket already: take
                // them now, so that they share the round of those before.
                Ok(None) if !turn.pending.is_empty() => match self.connection.read_now() {
                    ReadNow::Some => {}
                    ReadNow::Ended => {
                        turn.ended = true;
                        break;
                    }
                    ReadNow::Nothing => break,
                },
                Ok(None) => break,
                Err(ProtocolError(what)) => {
                    self.server.stats.protocol_errors.fetch_add(1, Relaxed);
                    turn.push(Outcome::Close(error(&format!(
                        "ERR Protocol error: {what}"
                    ))));
                }
            }
        }
    }

    /// Writes the replies of the turn in request order, waiting for those
    /// of rounds, with one write; `false` when the write failed or timed
    /// out.
    async fn reply(&mut self) -> bool {
        let mut pending = std::mem::take(&mut self.turn.pending);
        for outcome in pending.drain(..) {
            let out = self.connection.out();
            match outcome {
                Outcome::Exec(replies) => {
                    resp::array(out, replies.len());
                    for outcome in replies {
                        let outcome = match outcome {
                            Outcome::Deferred(run) => run(),
                            outcome => outcome,
                        };
                        settle(outcome, out).await;
                    }
                }
                outcome => settle(outcome, out).await,
            }
        }
        self.turn.pending = pending;
        self.connection.flush(self.server.idle_timeout).await
    }

    /// Nothing complete is left: waits for more bytes. `false` when the
    /// connection is to close (end of stream, idle, the server stopping).
    async fn wait_for_more(&mut self) -> bool {
        loop {
            tokio::select! {
                more = self.connection.read() => return more,
                () = fired(&mut self.idle) => {
                    let due = self.server.idle_timeout.map(|t| self.last_request + t);
                    match (due, &mut self.idle) {
                        // Requests came since it was armed: due later.
                        (Some(due), Some(idle)) if due > Instant::now() => idle.as_mut().reset(due),
                        _ => {
                            self.server.stats.idle_closed.fetch_add(1, Relaxed);
                            return false;
                        }
                    }
                }
                _ = self.shutdown.changed() => return false,
            }
        }
    }
}

/// An error reply, encoded.
fn error(text: &str) -> Vec<u8> {
    let mut reply = Vec::new();
    resp::error_reply(&mut reply, text);
    reply
}

/// Adds the reply of one request to `out`, once it is there (`EXEC`
/// inside `EXEC` cannot be: it is never queued).
async fn settle(outcome: Outcome, out: &mut Vec<u8>) {
    match outcome {
        Outcome::Now(reply) | Outcome::Close(reply) => out.extend_from_slice(&reply),
        Outcome::Ids(rx) => match rx.await {
            Ok(Ok(id)) => resp::id(out, id),
            Ok(Err(refusal)) => out.extend_from_slice(&refusal),
            Err(_) => resp::error_reply(out, SHUTTING_DOWN),
        },
        Outcome::Later(rx) => match rx.await {
            Ok(reply) => out.extend_from_slice(&reply),
            Err(_) => resp::error_reply(out, SHUTTING_DOWN),
        },
        Outcome::Exec(_) | Outcome::Deferred(_) => resp::error_reply(out, "ERR EXEC inside EXEC"),
    }
}

/// The reply to a request whose round or read was dropped unanswered.
const SHUTTING_DOWN: &str = "ERR the server is shutting down";

/// Resolves when the idle timer is due; never without one.
async fn fired(idle: &mut Option<Pin<Box<Sleep>>>) {
    match idle {
        Some(sleep) => sleep.as_mut().await,
        None => std::future::pending().await,
    }
}
