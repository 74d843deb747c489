//! [`Connection`]: one client's socket and its buffers, as mini-redis has it:
//! bytes in, requests out (through the incremental parser of `resp.rs`);
//! replies in, bytes out. What to do with a request is the handler's
//! (`handler.rs`); this file only decides how much memory a connection
//! holds and how it reads and writes.
//!
//! Buffers stay small because most connections are idle or send one short
//! request at a time: a read buffer that grew (a pipeline, a large `ECHO`)
//! is given back once it is empty, so an idle connection holds
//! [`FIRST_READ`] bytes whatever it sent before.

use super::resp::{Parser, ProtocolError, Request};
use bytes::BytesMut;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// Room made in an empty buffer before a read: most connections send one
/// short request at a time, and an idle one holds this much while it
/// waits (10,000 idle connections: about 25 MB in all).
const FIRST_READ: usize = 512;
/// Room made in a buffer that holds part of a request (or more of a
/// pipeline) before the next read.
const READ_SIZE: usize = 4096;

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
        self.buf.reserve(READ_SIZE);
        match self.rd.try_read_buf(&mut self.buf) {
            Ok(0) => ReadNow::Ended,
            Ok(_) => ReadNow::Some,
            Err(_) => ReadNow::Nothing,
        }
    }

    /// Waits for more bytes; `false` at the end of the stream or on an
    /// error. Cancel-safe.
    pub async fn read(&mut self) -> bool {
        if self.buf.is_empty() {
            if self.buf.capacity() > FIRST_READ {
                self.buf = BytesMut::new();
            }
            self.buf.reserve(FIRST_READ);
        } else {
            self.buf.reserve(READ_SIZE);
        }
        matches!(self.rd.read_buf(&mut self.buf).await, Ok(n) if n > 0)
    }

    /// Adds a reply, written at the next [`flush`](Self::flush).
    pub fn queue(&mut self, reply: &[u8]) {
        self.out.extend_from_slice(reply);
    }

    /// Writes the queued replies; `false` when that failed or took longer
    /// than `limit` (a client that reads nothing is idle too).
    pub async fn flush(&mut self, limit: Option<Duration>) -> bool {
        if self.out.is_empty() {
            return true;
        }
        let write = self.wr.write_all(&self.out);
        let written = match limit {
            Some(limit) => tokio::time::timeout(limit, write).await.ok(),
            None => Some(write.await),
        };
        if !matches!(written, Some(Ok(()))) {
            return false;
        }
        self.out.clear();
        true
    }

    /// Closes our end of the stream.
    pub async fn shutdown(&mut self) {
        let _ = self.wr.shutdown().await;
    }
}
