//! One client connection: read, parse, run, reply in request order, as
//! mini-redis's `Handler` does over its `Connection` (`conn.rs`); each
//! request goes to the dispatcher (`dispatch.rs`), and its [`Outcome`]
//! comes back here to be written.
//!
//! Every complete request in the buffer, and in the socket already, is
//! dispatched before any reply is awaited, so a client that pipelines
//! `INCR`s has them all queued at once and they share a round; the replies
//! are then written in request order. That is a [`Turn`].
//!
//! **Order.** Redis answers a connection's requests in order *with their
//! effects in order*, and clients count on it: a `GET` pipelined after an
//! `INCR` must see it. Dispatching both at once would let the `GET`'s read
//! of the nodes overtake the `INCR`'s round. So each request is dispatched
//! knowing what the turn has in flight before it ([`InFlight`]): a `GET`
//! after a request still unanswered is [`Outcome::Deferred`], and runs
//! when [`Handler::reply`] reaches it, that is once every reply before it
//! is in. The same rule, with the same flag carried on, orders the
//! requests of a transaction (`dispatch.rs`): one mechanism for pipelines and
//! `EXEC`. Only reads wait: `INCR`s are never held back, so a pipeline's
//! still share a round (group commit).
//!
//! **Bounds.** At most [`MAX_PENDING`] requests (and about [`MAX_QUEUED`]
//! bytes of replies) are outstanding per connection, and the socket is not
//! read while they are, so the sequencers' queues and this connection's
//! buffers stay bounded whatever the client sends (docs/seq.md, "Bad
//! clients", has the figures). The per-request work stays off the allocator
//! and the timer wheel: replies are encoded straight into the connection's
//! buffer, the turn's list is reused, and `--idle-timeout` is one timer per
//! connection, re-armed only when it fires, not one armed and cancelled
//! around every wait.
//!
//! A connection is closed on a protocol error (after `-ERR Protocol
//! error: …`, as Redis does), `QUIT`, end of stream or a failed write;
//! after `--idle-timeout` without a complete request (a half frame does not
//! renew it); on a bound of `limits.rs` (an error line says which); and
//! when the server stops, once its replies in flight are written.

use super::conn::{Connection, ReadNow};
use super::dispatch::dispatch;
use super::reply::{self, InFlight, Outcome, SHUTTING_DOWN, closing_err};
use super::resp::ProtocolError;
use super::state::{Client, Server};
use crate::timing::serve::{AUTH_PAUSE, AUTH_TIME, TELL_TIME};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::{oneshot, watch};
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
        auth_due: None,
        turn: Turn::default(),
    };
    handler.arm_auth();
    handler.run().await;
    server.guard.forget(handler.client.id);
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
    /// While the connection is not authenticated: the end of its time to.
    auth_due: Option<Pin<Box<Sleep>>>,
    /// The current turn (its list is kept from one turn to the next).
    turn: Turn,
}

/// The requests dispatched at once, whose replies are written together.
#[derive(Default)]
struct Turn {
    pending: Vec<Outcome>,
    /// What the requests so far leave in flight for the next one.
    flight: InFlight,
    /// The last request closes the connection (`QUIT`, a protocol error).
    closing: bool,
    /// The client closed its end.
    ended: bool,
}

impl Turn {
    /// Ready for the next turn, keeping the list's allocation.
    fn clear(&mut self) {
        self.pending.clear();
        self.flight = InFlight::default();
        self.closing = false;
        self.ended = false;
    }

    fn push(&mut self, outcome: Outcome) {
        self.closing = outcome.closes();
        self.flight.add(&outcome);
        self.pending.push(outcome);
    }

    /// Whether the connection's limit of outstanding requests is reached.
    fn full(&self) -> bool {
        self.pending.len() >= MAX_PENDING || self.flight.bytes >= MAX_QUEUED
    }
}

/// What ended a wait for more requests.
enum Wait {
    /// More bytes came.
    More,
    /// The connection is to close (end of stream, idle, the server stopping).
    Close,
    /// The connection is to close, after this error line to the client.
    Tell(&'static str),
}

/// What an unauthenticated connection is told when it runs out of time.
const AUTH_TIMED_OUT: &str = "ERR closed: not authenticated in time";
/// What an unauthenticated connection is told when it gives its slot.
const EVICTED: &str =
    "ERR closed: not authenticated, and a new connection needed the slot (--max-clients)";

impl Handler<'_> {
    async fn run(&mut self) {
        loop {
            if self.out_of_time() {
                return self.close_with(AUTH_TIMED_OUT).await;
            }
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
            self.arm_auth();
            // The socket is not read while the limit is reached.
            if full {
                continue;
            }
            if *self.shutdown.borrow() {
                return;
            }
            match self.wait_for_more().await {
                Wait::More => {}
                Wait::Close => return,
                Wait::Tell(why) => return self.close_with(why).await,
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
                    let before = turn.flight;
                    turn.push(dispatch(self.server, &mut self.client, req, before));
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
                    turn.push(closing_err(&format!("ERR Protocol error: {what}")));
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
                    reply::array(out, replies.len());
                    for outcome in replies {
                        settle(outcome, out).await;
                    }
                }
                outcome => settle(outcome, out).await,
            }
        }
        self.turn.pending = pending;
        self.connection.flush(self.server.idle_timeout).await
    }

    /// Nothing complete is left: waits for more bytes.
    async fn wait_for_more(&mut self) -> Wait {
        loop {
            tokio::select! {
                more = self.connection.read() => return if more { Wait::More } else { Wait::Close },
                () = fired(&mut self.idle) => {
                    let due = self.server.idle_timeout.map(|t| self.last_request + t);
                    // Requests came since it was armed: due later.
                    if let (Some(due), Some(idle)) = (due, &mut self.idle)
                        && due > Instant::now()
                    {
                        idle.as_mut().reset(due);
                        continue;
                    }
                    // Both timers due: the time to authenticate is the
                    // reason (it is never longer than the idle one).
                    if self.out_of_time() {
                        return Wait::Tell(AUTH_TIMED_OUT);
                    }
                    self.server.stats.idle_closed.fetch_add(1, Relaxed);
                    return Wait::Close;
                }
                () = fired(&mut self.auth_due) => {
                    self.timed_out();
                    return Wait::Tell(AUTH_TIMED_OUT);
                }
                () = evicted(&mut self.client.stranger) => {
                    self.log_evicted();
                    return Wait::Tell(EVICTED);
                }
                _ = self.shutdown.changed() => return Wait::Close,
            }
        }
    }

    /// The time to authenticate starts when the connection is (again, after
    /// `RESET`) unauthenticated, and ends when it authenticates.
    fn arm_auth(&mut self) {
        if self.client.authenticated {
            self.auth_due = None;
        } else if self.auth_due.is_none() {
            let time = self.auth_time();
            self.auth_due = Some(Box::pin(tokio::time::sleep(time)));
        }
    }

    /// How long a connection may stay unauthenticated: an unauthenticated
    /// connection is no more welcome than an idle one.
    fn auth_time(&self) -> Duration {
        self.server
            .idle_timeout
            .map_or(AUTH_TIME, |t| t.min(AUTH_TIME))
    }

    /// Whether the connection is still unauthenticated past its time to
    /// authenticate: checked before each turn, since a busy connection
    /// does not wait for more, where the timer is.
    fn out_of_time(&self) -> bool {
        let late = self
            .auth_due
            .as_ref()
            .is_some_and(|due| due.deadline() <= Instant::now());
        if late {
            self.timed_out();
        }
        late
    }

    /// Counts and logs a connection that did not authenticate in time.
    fn timed_out(&self) {
        self.server.stats.auth_timeouts.fetch_add(1, Relaxed);
        if let Some(left_out) = self.server.guard.unauthenticated.admit() {
            log::warn!(
                "seq serve: closed the connection of {}: not authenticated within {}{}",
                self.client.peer,
                crate::base::duration::shown(self.auth_time()),
                left_out
            );
        }
    }

    /// Logs that this unauthenticated connection gave its slot.
    fn log_evicted(&self) {
        if let Some(left_out) = self.server.guard.unauthenticated.admit() {
            log::warn!(
                "seq serve: closed the connection of {}: not authenticated, and every slot of \
                 --max-clients was taken when a new connection came{}",
                self.client.peer,
                left_out
            );
        }
    }

    /// Tells the client why, briefly, and closes.
    async fn close_with(&mut self, why: &str) {
        reply::error_reply(self.connection.out(), why);
        if self.connection.flush(Some(TELL_TIME)).await {
            self.connection.shutdown().await;
        }
    }
}

/// Adds the reply of one request to `out`, once it is there (`EXEC`
/// inside `EXEC` cannot be: it is never queued).
async fn settle(outcome: Outcome, out: &mut Vec<u8>) {
    let outcome = match outcome {
        // The replies before it are in: it may run now.
        Outcome::Deferred(run) => run(),
        outcome => outcome,
    };
    match outcome {
        Outcome::Now(reply) | Outcome::Close(reply) => out.extend_from_slice(&reply),
        Outcome::Ids(rx) => match rx.await {
            Ok(Ok(id)) => reply::id(out, id),
            Ok(Err(text)) => reply::error_reply(out, &text),
            Err(_) => reply::error_reply(out, SHUTTING_DOWN),
        },
        Outcome::Later(rx) => match rx.await {
            Ok(reply) => out.extend_from_slice(&reply),
            Err(_) => reply::error_reply(out, SHUTTING_DOWN),
        },
        Outcome::Refused { reply, .. } => {
            tokio::time::sleep(AUTH_PAUSE).await;
            out.extend_from_slice(&reply);
        }
        Outcome::Exec(_) | Outcome::Deferred(_) => reply::error_reply(out, "ERR EXEC inside EXEC"),
    }
}

/// Resolves when the timer is due; never without one.
async fn fired(timer: &mut Option<Pin<Box<Sleep>>>) {
    match timer {
        Some(sleep) => sleep.as_mut().await,
        None => std::future::pending().await,
    }
}

/// Resolves when this never-authenticated connection is to give its slot;
/// never otherwise.
async fn evicted(stranger: &mut Option<oneshot::Receiver<()>>) {
    if let Some(rx) = stranger.as_mut()
        && rx.await.is_ok()
    {
        return;
    }
    // Forgotten (authenticated): nothing will come.
    *stranger = None;
    std::future::pending().await
}
