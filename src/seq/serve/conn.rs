//! One client connection: read, parse, run, reply in request order.
//!
//! Every complete request in the buffer, and in the socket already, is
//! dispatched before any reply is awaited, so a client that pipelines
//! `INCR`s has them all queued at once and they share a round; the replies
//! are then written in request order.
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
use super::resp::{self, Parser};
use super::{Client, Server};
use bytes::BytesMut;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;

/// Most requests of one connection in flight at once.
pub const MAX_PENDING: usize = 256;
/// Most bytes of replies one connection holds before it writes them (the
/// socket is not read meanwhile): a client that pipelines large `ECHO`s
/// and reads nothing stalls itself, not the server's memory.
const MAX_QUEUED: usize = 64 * 1024;
/// Room made in an empty buffer before a read: most connections send one
/// short request at a time, and an idle one holds this much while it
/// waits (10,000 idle connections: about 25 MB in all).
const FIRST_READ: usize = 512;
/// Room made in a buffer that holds part of a request (or more of a
/// pipeline) before the next read.
const READ_SIZE: usize = 4096;

pub async fn serve(
    server: &Arc<Server>,
    stream: TcpStream,
    mut client: Client,
    mut shutdown: watch::Receiver<bool>,
) {
    let (mut rd, mut wr) = stream.into_split();
    let mut buf = BytesMut::new();
    let mut parser = Parser::default();
    let mut last_request = Instant::now();
    let mut out = Vec::new();
    loop {
        let mut pending = Vec::new();
        let mut closing = false;
        let mut ended = false;
        // Bytes of replies already made (an ECHO of 64 KiB, say).
        let mut queued = 0;
        while pending.len() < MAX_PENDING && queued < MAX_QUEUED && !closing {
            match parser.next(&mut buf) {
                Ok(Some(req)) => {
                    last_request = Instant::now();
                    let outcome = command::dispatch(server, &mut client, req);
                    closing = matches!(outcome, Outcome::Close(_));
                    if let Outcome::Now(reply) | Outcome::Close(reply) = &outcome {
                        queued += reply.len();
                    }
                    pending.push(outcome);
                }
                // Requests of a pipeline may be in the socket already: take
                // them now, so that they share the round of those before.
                Ok(None) if !pending.is_empty() => {
                    buf.reserve(READ_SIZE);
                    match rd.try_read_buf(&mut buf) {
                        Ok(0) => {
                            ended = true;
                            break;
                        }
                        Ok(_) => {}
                        Err(_) => break,
                    }
                }
                Ok(None) => break,
                Err(resp::ProtocolError(what)) => {
                    server.stats.protocol_errors.fetch_add(1, Relaxed);
                    let mut reply = Vec::new();
                    resp::error_reply(&mut reply, &format!("ERR Protocol error: {what}"));
                    pending.push(Outcome::Close(reply));
                    closing = true;
                }
            }
        }
        let full = pending.len() >= MAX_PENDING || queued >= MAX_QUEUED;
        for outcome in pending {
            match outcome {
                Outcome::Now(reply) | Outcome::Close(reply) => out.extend(reply),
                Outcome::Later(rx) => match rx.await {
                    Ok(reply) => out.extend(reply),
                    Err(_) => resp::error_reply(&mut out, "ERR the server is shutting down"),
                },
            }
        }
        if !out.is_empty() {
            // A client that reads nothing for --idle-timeout is idle too.
            let write = wr.write_all(&out);
            let written = match server.idle_timeout {
                Some(limit) => tokio::time::timeout(limit, write).await.ok(),
                None => Some(write.await),
            };
            if !matches!(written, Some(Ok(()))) {
                return;
            }
            out.clear();
        }
        if closing {
            let _ = wr.shutdown().await;
            return;
        }
        if ended {
            return;
        }
        if full {
            continue;
        }
        if *shutdown.borrow() {
            return;
        }
        // Nothing complete is left: read more.
        let idle = server.idle_timeout.map(|t| last_request + t);
        if buf.is_empty() {
            if buf.capacity() > FIRST_READ {
                buf = BytesMut::new();
            }
            buf.reserve(FIRST_READ);
        } else {
            buf.reserve(READ_SIZE);
        }
        tokio::select! {
            read = rd.read_buf(&mut buf) => match read {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            },
            () = sleep_until(idle) => {
                server.stats.idle_closed.fetch_add(1, Relaxed);
                return;
            }
            _ = shutdown.changed() => return,
        }
    }
}

/// Sleeps until `at`, or forever without it.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
