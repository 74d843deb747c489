//! What a request gets back: its [`Outcome`] (a reply now, or one still to
//! come from a round or a read), and the RESP encoders that write every
//! reply, in RESP2 or RESP3 ([`Proto`]).
//!
//! This is the bottom of `seq serve`: it imports nothing of the server, and
//! every other part (the dispatcher, the sessions, the transactions, the
//! sequencers, the connection loop) makes or writes its replies through it,
//! so that an error reply is written one way, and a reply that a round
//! never gave ([`SHUTTING_DOWN`]) is worded once.
//!
//! Replies differ between the versions only where a RESP3 type exists for
//! what is said: the null (`_` for `$-1`), maps (`%` for a flat array of
//! pairs: `HELLO`, `CONFIG GET`) and verbatim text (`=` for `INFO`'s bulk
//! string), exactly where Redis 7 uses them, so a RESP3 client sees what it
//! would see from Redis. Integers, errors, bulk strings and arrays are the
//! same bytes. Ids above 2^63 − 1 stay bulk strings of their digits in
//! RESP3 too, not RESP3 big numbers (`(`): every client tested reads the
//! bulk string as an exact number (redis-rs into a `u64`, redis-py and
//! hiredis, redis-cli), while redis-rs cannot turn a big number into a
//! `u64` without its `num-bigint` feature, and hiredis gives the digits as
//! bytes either way (docs/seq.md, "Clients").
//!
//! An id is a `u64` until the connection writes it ([`id`]): a reply is
//! encoded straight into the connection's buffer, with no allocation per
//! id.

use std::sync::Arc;
use tokio::sync::oneshot;

/// What a request for ids gets: its id, or the error reply's text of its
/// round, made once and shared by every request of the round.
pub type Answer = std::result::Result<u64, Arc<str>>;

/// The reply to a request that the server stopped before answering: its
/// round or read was dropped, or the sequencers no longer take requests.
pub const SHUTTING_DOWN: &str = "ERR the server is shutting down";

/// What a request gives the connection.
pub enum Outcome {
    /// The reply, encoded.
    Now(Vec<u8>),
    /// The reply, when its read of the nodes (`GET`) is done.
    Later(oneshot::Receiver<Vec<u8>>),
    /// The id (or the error) of an `INCR`/`INCRBY`, when its round is done.
    Ids(oneshot::Receiver<Answer>),
    /// The reply, after which the connection closes.
    Close(Vec<u8>),
    /// `EXEC`'s reply: an array of these, each when it is there.
    Exec(Vec<Outcome>),
    /// A request to run once the replies before it on the connection are
    /// in: a `GET` after a request still unanswered must see its effect.
    Deferred(Box<dyn FnOnce() -> Outcome + Send>),
    /// A wrong password's reply, written after the pause of `limits.rs`;
    /// the connection closes after it when `close`.
    Refused { reply: Vec<u8>, close: bool },
}

impl Outcome {
    /// The reply that `encode` writes, now.
    pub fn now(encode: impl FnOnce(&mut Vec<u8>)) -> Outcome {
        let mut out = Vec::new();
        encode(&mut out);
        Outcome::Now(out)
    }

    /// Whether its reply is still to come (a round, a read, a request
    /// waiting for those before it).
    pub fn unanswered(&self) -> bool {
        match self {
            Outcome::Later(_) | Outcome::Ids(_) | Outcome::Deferred(_) => true,
            Outcome::Exec(replies) => replies.iter().any(Outcome::unanswered),
            Outcome::Now(_) | Outcome::Close(_) | Outcome::Refused { .. } => false,
        }
    }

    /// The bytes of reply it holds already.
    pub fn held(&self) -> usize {
        match self {
            Outcome::Now(reply) | Outcome::Close(reply) | Outcome::Refused { reply, .. } => {
                reply.len()
            }
            Outcome::Exec(replies) => replies.iter().map(Outcome::held).sum(),
            _ => 0,
        }
    }

    /// Whether the connection closes after its reply.
    pub fn closes(&self) -> bool {
        matches!(
            self,
            Outcome::Close(_) | Outcome::Refused { close: true, .. }
        )
    }
}

/// What a connection has in flight when a request of it is dispatched:
/// the order of its replies and their bound depend on it.
#[derive(Clone, Copy, Default)]
pub struct InFlight {
    /// A reply before this request is still to come.
    pub unanswered: bool,
    /// Bytes of replies made and not yet written.
    pub bytes: usize,
}

impl InFlight {
    /// With `outcome`, the next request's.
    pub fn add(&mut self, outcome: &Outcome) {
        self.unanswered |= outcome.unanswered();
        self.bytes += outcome.held();
    }
}

pub fn ok() -> Outcome {
    Outcome::now(|out| simple(out, "OK"))
}

/// An error reply: `text` starts with its code (`ERR`, `NOAUTH`…).
pub fn err(text: &str) -> Outcome {
    Outcome::now(|out| error_reply(out, text))
}

/// An error reply, after which the connection closes.
pub fn closing_err(text: &str) -> Outcome {
    let mut out = Vec::new();
    error_reply(&mut out, text);
    Outcome::Close(out)
}

/// A command given too many or too few arguments, in Redis's words.
pub fn arity(name: &str) -> Outcome {
    err(&format!(
        "ERR wrong number of arguments for '{}' command",
        name.to_ascii_lowercase()
    ))
}

/// The protocol a connection speaks: RESP2 until `HELLO 3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Proto {
    #[default]
    Resp2,
    Resp3,
}

impl Proto {
    /// The number `HELLO` reports.
    pub fn version(self) -> i64 {
        match self {
            Proto::Resp2 => 2,
            Proto::Resp3 => 3,
        }
    }
}

/// `+OK`-style status.
pub fn simple(out: &mut Vec<u8>, text: &str) {
    out.push(b'+');
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// An error reply: `text` starts with its code (`ERR`, `NOAUTH`…); line
/// breaks would end the reply early, so they become spaces.
pub fn error_reply(out: &mut Vec<u8>, text: &str) {
    out.push(b'-');
    out.extend(
        text.bytes()
            .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
    out.extend_from_slice(b"\r\n");
}

pub fn integer(out: &mut Vec<u8>, n: i64) {
    out.push(b':');
    if n < 0 {
        out.push(b'-');
    }
    digits(out, n.unsigned_abs());
    out.extend_from_slice(b"\r\n");
}

/// The decimal digits of `n`, written straight into `out`: every id goes
/// out through here, and `to_string` would allocate a `String` for each.
fn digits(out: &mut Vec<u8>, n: u64) {
    let (room, at) = decimal(n);
    out.extend_from_slice(&room[at..]);
}

/// `n` in decimal: the digits are `room[at..]`.
fn decimal(mut n: u64) -> ([u8; 20], usize) {
    let mut room = [0u8; 20];
    let mut at = room.len();
    loop {
        at -= 1;
        room[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return (room, at);
        }
    }
}

/// A sequence value: an integer reply while it fits RESP's signed 64 bits,
/// above that the same digits as a bulk string (an integer reply would
/// read as negative, or not at all, in every client).
pub fn id(out: &mut Vec<u8>, value: u64) {
    match i64::try_from(value) {
        Ok(n) => integer(out, n),
        Err(_) => {
            let (room, at) = decimal(value);
            bulk(out, &room[at..]);
        }
    }
}

pub fn bulk(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'$');
    digits(out, bytes.len() as u64);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

/// The null reply: `$-1` in RESP2, `_` in RESP3.
pub fn nil(out: &mut Vec<u8>, proto: Proto) {
    out.extend_from_slice(match proto {
        Proto::Resp2 => b"$-1\r\n",
        Proto::Resp3 => b"_\r\n",
    });
}

/// The header of `pairs` key-value pairs: a map in RESP3, an array of
/// twice as many elements in RESP2 (what Redis sends each version).
pub fn map(out: &mut Vec<u8>, pairs: usize, proto: Proto) {
    match proto {
        Proto::Resp2 => array(out, pairs * 2),
        Proto::Resp3 => {
            out.push(b'%');
            out.extend_from_slice(pairs.to_string().as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// Text for a person (`INFO`): a bulk string in RESP2, a verbatim string
/// of format `txt` in RESP3, as Redis sends it.
pub fn text(out: &mut Vec<u8>, text: &[u8], proto: Proto) {
    match proto {
        Proto::Resp2 => bulk(out, text),
        Proto::Resp3 => {
            out.push(b'=');
            out.extend_from_slice((text.len() + 4).to_string().as_bytes());
            out.extend_from_slice(b"\r\ntxt:");
            out.extend_from_slice(text);
            out.extend_from_slice(b"\r\n");
        }
    }
}

pub fn array(out: &mut Vec<u8>, len: usize) {
    out.push(b'*');
    digits(out, len as u64);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_above_i64_are_bulk_and_an_error_stays_one_line() {
        let mut out = Vec::new();
        id(&mut out, i64::MAX as u64);
        id(&mut out, 1 << 63);
        id(&mut out, u64::MAX);
        assert_eq!(
            out,
            b":9223372036854775807\r\n$19\r\n9223372036854775808\r\n\
              $20\r\n18446744073709551615\r\n"
        );
        let mut out = Vec::new();
        for n in [0, 7, 10, -1, -42, i64::MIN] {
            integer(&mut out, n);
        }
        assert_eq!(
            out,
            b":0\r\n:7\r\n:10\r\n:-1\r\n:-42\r\n:-9223372036854775808\r\n"
        );
        let mut out = Vec::new();
        error_reply(&mut out, "ERR two\r\nlines");
        assert_eq!(out, b"-ERR two  lines\r\n");
    }

    #[test]
    fn resp3_changes_only_the_null_maps_and_text() {
        let encode = |proto: Proto| {
            let mut out = Vec::new();
            nil(&mut out, proto);
            map(&mut out, 1, proto);
            bulk(&mut out, b"k");
            integer(&mut out, 3);
            text(&mut out, b"# Health\r\nready:1\r\n", proto);
            id(&mut out, u64::MAX);
            out
        };
        assert_eq!(
            encode(Proto::Resp2),
            b"$-1\r\n*2\r\n$1\r\nk\r\n:3\r\n$19\r\n# Health\r\nready:1\r\n\r\n\
              $20\r\n18446744073709551615\r\n"
        );
        assert_eq!(
            encode(Proto::Resp3),
            b"_\r\n%1\r\n$1\r\nk\r\n:3\r\n=23\r\ntxt:# Health\r\nready:1\r\n\r\n\
              $20\r\n18446744073709551615\r\n"
        );
        assert_eq!((Proto::Resp2.version(), Proto::Resp3.version()), (2, 3));
    }
}
