//! [`Connection`]: one client's socket and its buffers, as mini-redis has it:
//! bytes in, requests out (through the incremental parser of `resp.rs`);
//! replies in, bytes out. What to do with a request is the handler's
//! (`handler.rs`); this file only decides how much memory a connection
//! holds and how it reads and writes.
//!
//! System calls per request, which are most of what a request costs
//! (docs/benchmarks.md has the profile):
//!
//! * one `read` per readiness event: the read buffer is the connection's
//!   own and reused (the parser skips what it consumed, it never splits the
//!   buffer, so no allocation either); tokio forgets the readiness when a
//!   read comes back short, so the attempt to take more of a pipeline
//!   (`read_now`) costs no failed `read` after it. The room offered to a
//!   read follows what the client sends: it doubles when a read fills it
//!   (a pipeline: fewer, larger reads), up to [`MAX_READ`], and halves when
//!   reads use a quarter of it;
//! * one `write` per turn of the handler for all the replies of a client
//!   (a pipeline of 16 `INCR`s gets one `write` of 16 replies), tried at
//!   once without a timer; only a write the socket cannot take whole waits,
//!   and that wait is bounded (a client that reads nothing is idle too).
//!
//! Buffers stay small because most connections are idle or send one short
//! request at a time: a buffer that grew (a pipeline, a large `ECHO`) is
//! freed once it is empty and larger than the room reads need now, so
//! an idle connection holds at most one read's room (512 bytes for one
//! that sent one request at a time).

use super::resp::{Parser, ProtocolError, Request};
use bytes::BytesMut;
use std::io::ErrorKind::WouldBlock;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// The least room offered to a read: a connection that sends one short
/// request at a time holds this much while it waits, which is most of what
/// an idle connection costs (docs/seq.md, "Bad clients", has the figure).
const FIRST_READ: usize = 512;
/// The most room offered to one read (what Redis reads at a time).
const MAX_READ: usize = 16 * 1024;
/// A reply buffer that grew beyond this (a large `ECHO`, a long `EXEC`)
/// is freed once written.
const KEEP_OUT: usize = 16 * 1024;

/// What a read that does not wait found.
pub enum ReadNow {
    /// More bytes are in the buffer.
    Some,
    /// The client closed its end.
    Ended,
    /// Nothing yet (or an error, which the next waiting read meets again).
    Nothing,
}

/// A client's socket, with what was read of it and not yet parsed, and the
/// replies not yet written.
pub struct Connection {
    rd: OwnedReadHalf,
    wr: OwnedWriteHalf,
    buf: BytesMut,
    /// The room offered to the next read (see the module doc).
    room: usize,
    parser: Parser,
    out: Vec<u8>,
}

impl Connection {
    pub fn new(stream: TcpStream) -> Connection {
        let (rd, wr) = stream.into_split();
        Connection {
            rd,
            wr,
            buf: BytesMut::new(),
            room: FIRST_READ,
            parser: Parser::default(),
            out: Vec::new(),
        }
    }

    /// The next complete request among the bytes read; `None` when more
    /// bytes are needed.
    pub fn request(&mut self) -> Result<Option<Request>, ProtocolError> {
        self.parser.next(&mut self.buf)
    }

    /// Takes what the socket holds already, without waiting.
    pub fn read_now(&mut self) -> ReadNow {
        let offered = self.make_room();
        match self.rd.try_read_buf(&mut self.buf) {
            Ok(0) => ReadNow::Ended,
            Ok(n) => {
                self.fit(n, offered);
                ReadNow::Some
            }
            Err(_) => ReadNow::Nothing,
        }
    }

    /// Waits for more bytes; `false` at the end of the stream or on an
    /// error. Cancel-safe.
    pub async fn read(&mut self) -> bool {
        let offered = self.make_room();
        match self.rd.read_buf(&mut self.buf).await {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.fit(n, offered);
                true
            }
        }
    }

    /// Makes `room` bytes free after what the buffer holds (freeing a
    /// grown buffer that is empty); the room the read is offered.
    fn make_room(&mut self) -> usize {
        if self.buf.is_empty() && self.buf.capacity() > 2 * self.room {
            self.buf = BytesMut::new();
        }
        self.buf.reserve(self.room);
        self.buf.capacity() - self.buf.len()
    }

    /// Adjusts the room to a read of `n` bytes that was offered `offered`.
    fn fit(&mut self, n: usize, offered: usize) {
        if n >= offered {
            self.room = (self.room * 2).min(MAX_READ);
        } else if n <= self.room / 4 {
            self.room = (self.room / 2).max(FIRST_READ);
        }
    }

    /// Where replies are added, written at the next [`flush`](Self::flush).
    pub fn out(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// Writes the queued replies; `false` when that failed or took longer
    /// than `limit` (a client that reads nothing is idle too).
    pub async fn flush(&mut self, limit: Option<Duration>) -> bool {
        if self.out.is_empty() {
            return true;
        }
        // Almost always the socket takes it all: one write, no timer.
        let written = match self.wr.try_write(&self.out) {
            Ok(n) => n,
            Err(e) if e.kind() == WouldBlock => 0,
            Err(_) => return false,
        };
        if written < self.out.len() {
            let rest = &self.out[written..];
            let write = self.wr.write_all(rest);
            let done = match limit {
                Some(limit) => tokio::time::timeout(limit, write).await.ok(),
                None => Some(write.await),
            };
            if !matches!(done, Some(Ok(()))) {
                return false;
            }
        }
        if self.out.capacity() > KEEP_OUT {
            self.out = Vec::new();
        } else {
            self.out.clear();
        }
        true
    }

    /// Closes our end of the stream.
    pub async fn shutdown(&mut self) {
        let _ = self.wr.shutdown().await;
    }
}
