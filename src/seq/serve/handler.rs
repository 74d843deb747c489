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
//! stay bounded whatever the client sends: about 200 KiB at worst, 512
//! bytes of buffer for an idle connection.
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
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;

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
    let mut handler = Handler {
        server,
        client,
        connection: Connection::new(stream),
        shutdown,
        last_request: Instant::now(),
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
            let turn = self.dispatch();
            let full = turn.full();
            let (closing, ended) = (turn.closing, turn.ended);
            if !self.reply(turn.pending).await {
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

    /// Dispatches every complete request there is, up to the limits.
    fn dispatch(&mut self) -> Turn {
        let mut turn = Turn::default();
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
        turn
    }

    /// Writes the replies of `pending` in request order, waiting for those
    /// of rounds; `false` when the write failed or timed out.
    async fn reply(&mut self, pending: Vec<Outcome>) -> bool {
        for outcome in pending {
            match outcome {
                Outcome::Exec(replies) => {
                    let mut header = Vec::new();
                    resp::array(&mut header, replies.len());
                    self.connection.queue(&header);
                    for outcome in replies {
                        let outcome = match outcome {
                            Outcome::Deferred(run) => run(),
                            outcome => outcome,
                        };
                        let reply = settle(outcome).await;
                        self.connection.queue(&reply);
                    }
                }
                outcome => {
                    let reply = settle(outcome).await;
                    self.connection.queue(&reply);
                }
            }
        }
        self.connection.flush(self.server.idle_timeout).await
    }

    /// Nothing complete is left: waits for more bytes. `false` when the
    /// connection is to close (end of stream, idle, the server stopping).
    async fn wait_for_more(&mut self) -> bool {
        let idle = self.server.idle_timeout.map(|t| self.last_request + t);
        tokio::select! {
            more = self.connection.read() => more,
            () = sleep_until(idle) => {
                self.server.stats.idle_closed.fetch_add(1, Relaxed);
                false
            }
            _ = self.shutdown.changed() => false,
        }
    }
}

/// An error reply, encoded.
fn error(text: &str) -> Vec<u8> {
    let mut reply = Vec::new();
    resp::error_reply(&mut reply, text);
    reply
}

/// The reply of one request, once it is there (`EXEC` inside `EXEC`
/// cannot be: it is never queued).
async fn settle(outcome: Outcome) -> Vec<u8> {
    match outcome {
        Outcome::Now(reply) | Outcome::Close(reply) => reply,
        Outcome::Later(rx) => rx
            .await
            .unwrap_or_else(|_| error("ERR the server is shutting down")),
        Outcome::Exec(_) | Outcome::Deferred(_) => error("ERR EXEC inside EXEC"),
    }
}

/// Sleeps until `at`, or forever without it.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
