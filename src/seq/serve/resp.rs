//! RESP in: an incremental request parser with hard limits. Replies go
//! out through `reply.rs`.
//!
//! Requests are the same in RESP2 and RESP3 (arrays of bulk strings, or
//! inline lines), so the parser does not know which one a connection
//! speaks.
//!
//! Why a parser of our own: the requests `seq serve` understands are short
//! arrays of short strings, and what matters is what a *bad* client costs.
//! A codec that buffers until a frame is complete would let a client that
//! announces a 1 GB bulk string make us hold (or allocate) that much; this
//! one refuses such a header as soon as it is read, before a byte of the
//! body is buffered. It is incremental: a complete element is taken out of
//! the buffer as soon as it is there, and the scan for the end of a line
//! resumes where it stopped, so a client that drips a request byte by byte
//! costs each byte once, not the whole buffer again on every read.
//!
//! The limits ([`MAX_ARGS`], [`MAX_BULK`], [`MAX_REQUEST`]) bound the
//! memory of one connection at about [`MAX_REQUEST`] plus one read, whatever
//! it sends. A request that breaks one is a [`ProtocolError`]: the
//! connection gets `-ERR Protocol error: …` and is closed, as Redis does.
//!
//! Like Redis, a request that does not start with `*` is an *inline*
//! command, one line split at spaces (what `telnet` and `redis-cli`'s
//! `PING\r\n` form send); an empty line is skipped.

use bytes::{Buf, BytesMut};

/// Most elements in one request (Redis allows far more; no command of ours
/// takes more than a handful).
pub const MAX_ARGS: usize = 1024;
/// Longest bulk string in a request.
pub const MAX_BULK: usize = 64 * 1024;
/// Most bytes of arguments in one request, and longest inline line.
pub const MAX_REQUEST: usize = 64 * 1024;
/// Longest `*N` / `$N` header line: a 20-digit number and its sign.
const MAX_HEADER: usize = 32;

/// A request that breaks the protocol or a limit; the text follows
/// `Protocol error: ` in the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

/// One request: the command name and its arguments, as sent.
pub type Request = Vec<Vec<u8>>;

/// The state of a request that is being read.
#[derive(Default)]
pub struct Parser {
    /// An array whose header was read: the elements still to come.
    array: Option<Array>,
    /// How far the current line has been scanned for its `\n`.
    scanned: usize,
}

struct Array {
    remaining: usize,
    args: Request,
    /// The length of the bulk string whose header was read, if any.
    bulk: Option<usize>,
    /// Bytes of arguments so far.
    size: usize,
}

/// What one step of the parser came to.
enum Step {
    /// A complete request.
    Request(Request),
    /// More bytes are needed.
    More,
    /// Something was taken out of the buffer (a header, an element, a blank
    /// line): step again.
    Again,
}

impl Parser {
    /// The next complete request in `buf`, taking its bytes out; `None`
    /// when more bytes are needed (what is there is kept, or taken into
    /// the parser's state).
    pub fn next(&mut self, buf: &mut BytesMut) -> Result<Option<Request>, ProtocolError> {
        loop {
            let step = match &mut self.array {
                None => self.start(buf)?,
                Some(array) => {
                    let step = array.element(buf, &mut self.scanned)?;
                    if matches!(step, Step::Request(_)) {
                        self.array = None;
                    }
                    step
                }
            };
            match step {
                Step::Request(request) => return Ok(Some(request)),
                Step::More => return Ok(None),
                Step::Again => {}
            }
        }
    }

    /// Outside an array: an inline command, or the header of an array.
    fn start(&mut self, buf: &mut BytesMut) -> Result<Step, ProtocolError> {
        let Some(&first) = buf.first() else {
            return Ok(Step::More);
        };
        if first != b'*' {
            return self.inline(buf);
        }
        let Some((len, taken)) = line(
            buf,
            &mut self.scanned,
            MAX_HEADER,
            "too big multibulk count string",
        )?
        else {
            return Ok(Step::More);
        };
        let n = number(&buf[1..len]).ok_or_else(|| error("invalid multibulk length"))?;
        buf.advance(taken);
        if n > MAX_ARGS as i64 {
            return Err(error("invalid multibulk length"));
        }
        // `*0` and `*-1`: nothing to do, as in Redis.
        if n > 0 {
            self.array = Some(Array {
                remaining: n as usize,
                args: Vec::with_capacity((n as usize).min(8)),
                bulk: None,
                size: 0,
            });
        }
        Ok(Step::Again)
    }

    /// A line of words; an empty one is skipped.
    fn inline(&mut self, buf: &mut BytesMut) -> Result<Step, ProtocolError> {
        let Some((len, taken)) = line(
            buf,
            &mut self.scanned,
            MAX_REQUEST,
            "too big inline request",
        )?
        else {
            return Ok(Step::More);
        };
        let args: Request = buf[..len]
            .split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        buf.advance(taken);
        if args.is_empty() {
            return Ok(Step::Again);
        }
        Ok(Step::Request(args))
    }
}

impl Array {
    /// The next bulk string's header, or its body; the request once the
    /// last element is in.
    fn element(&mut self, buf: &mut BytesMut, scanned: &mut usize) -> Result<Step, ProtocolError> {
        match self.bulk {
            None => {
                let Some((end, taken)) =
                    line(buf, scanned, MAX_HEADER, "too big bulk count string")?
                else {
                    return Ok(Step::More);
                };
                let header = &buf[..end];
                if header.first() != Some(&b'$') {
                    let got = header.first().map_or(' ', |&b| b as char);
                    return Err(ProtocolError(format!(
                        "expected '$', got '{}'",
                        got.escape_default()
                    )));
                }
                let len = number(&header[1..])
                    .filter(|&n| (0..=MAX_BULK as i64).contains(&n))
                    .ok_or_else(|| error("invalid bulk length"))?
                    as usize;
                buf.advance(taken);
                if self.size + len > MAX_REQUEST {
                    return Err(error("request too big"));
                }
                self.bulk = Some(len);
            }
            Some(len) => {
                if buf.len() < len + 2 {
                    return Ok(Step::More);
                }
                if &buf[len..len + 2] != b"\r\n" {
                    return Err(error("expected CRLF after a bulk string"));
                }
                // Copied out and skipped, never split off: the buffer stays
                // one allocation, reused for the next read.
                self.args.push(buf[..len].to_vec());
                buf.advance(len + 2);
                self.size += len;
                self.remaining -= 1;
                self.bulk = None;
                if self.remaining == 0 {
                    return Ok(Step::Request(std::mem::take(&mut self.args)));
                }
            }
        }
        Ok(Step::Again)
    }
}

fn error(what: &str) -> ProtocolError {
    ProtocolError(what.to_string())
}

/// The line at the start of `buf`: its length without its `\r\n` (or
/// `\n`), and the bytes it takes with its end; the caller reads it in place
/// and then advances past it (no copy: a header is parsed where it lies).
/// `None` when its end is not there yet (`scanned`: how much of `buf` was
/// already searched). Longer than `max` without an end: `too_long`.
fn line(
    buf: &[u8],
    scanned: &mut usize,
    max: usize,
    too_long: &str,
) -> Result<Option<(usize, usize)>, ProtocolError> {
    match buf[*scanned..].iter().position(|&b| b == b'\n') {
        Some(i) => {
            let end = *scanned + i;
            *scanned = 0;
            if end > max {
                return Err(error(too_long));
            }
            let len = if end > 0 && buf[end - 1] == b'\r' {
                end - 1
            } else {
                end
            };
            Ok(Some((len, end + 1)))
        }
        None if buf.len() > max => Err(error(too_long)),
        None => {
            *scanned = buf.len();
            Ok(None)
        }
    }
}

/// A decimal `i64` with an optional `-`, nothing else.
fn number(text: &[u8]) -> Option<i64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

#[cfg(test)]
#[path = "resp_tests.rs"]
mod tests;
