//! The commands `seq serve` understands, as Redis answers them where Redis
//! has them, so that `redis-cli`, `redis-benchmark` and client libraries
//! work unchanged, in RESP2 or RESP3 (`resp.rs`):
//!
//! * `INCR name`, `INCRBY name k` (k ≥ 1: the last id of a fresh block of
//!   k), queued for the name's sequencer (`batch.rs`); `GET name`, the
//!   majority's current value, read-only (null when no node holds it),
//!   read once the connection's requests before it are answered
//!   (`handler.rs` has why); every name passes [`crate::seq::check_name`]
//!   first;
//! * `MULTI`/`EXEC`/`DISCARD` around them (`multi.rs`);
//! * the connection's own (`session.rs`): `PING`, `ECHO`, `QUIT`, `SELECT
//!   0`, `AUTH`, `HELLO [2|3]`, `CLIENT SETNAME/GETNAME/SETINFO/ID`,
//!   `RESET`;
//! * what tools ask on connecting: `COMMAND` (`COUNT`, `INFO`; `DOCS` is
//!   an error, on which `redis-cli` falls back on its built-in help for
//!   its hints), `CONFIG GET` of `save`, `appendonly` and `appendfsync`
//!   (what `redis-benchmark` prints; the nodes' persistence, as required
//!   at start), and `INFO` (`info.rs`, with the readiness of `health.rs`);
//! * anything else: `-ERR unknown command`, as Redis words it.
//!
//! `PING` answers `PONG` whatever the nodes do: it says the server is
//! alive. Whether it can hand out ids is `INFO health` (docs/seq.md,
//! "Health", has why).
//!
//! Ids above 2^63 − 1 are bulk strings: a RESP integer is signed.

use super::batch::{Answer, Ask};
use super::resp::{self, Proto, Request};
use super::{Client, Server, multi, session};
use crate::seq::MajoritySequence;
use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use tokio::sync::oneshot;
use tokio::time::Instant;

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
    /// A wrong password's reply, written after [`AUTH_PAUSE`]; the
    /// connection closes after it when `close`.
    ///
    /// [`AUTH_PAUSE`]: crate::timing::serve::AUTH_PAUSE
    Refused { reply: Vec<u8>, close: bool },
}

impl Outcome {
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
    reply(|out| resp::simple(out, "OK"))
}

pub fn reply(encode: impl FnOnce(&mut Vec<u8>)) -> Outcome {
    let mut out = Vec::new();
    encode(&mut out);
    Outcome::Now(out)
}

pub fn err(text: &str) -> Outcome {
    reply(|out| resp::error_reply(out, text))
}

/// An error reply, after which the connection closes.
pub fn closing_err(text: &str) -> Outcome {
    let mut out = Vec::new();
    resp::error_reply(&mut out, text);
    Outcome::Close(out)
}

pub fn arity(name: &str) -> Outcome {
    err(&format!(
        "ERR wrong number of arguments for '{}' command",
        name.to_ascii_lowercase()
    ))
}

fn bad_increment() -> Outcome {
    err("ERR the increment must be a whole number from 1 to 18446744073709551615 (ids only grow)")
}

/// Every command name known (what `COMMAND COUNT` counts).
const KNOWN: [&str; 19] = [
    "INCR", "INCRBY", "GET", "PING", "ECHO", "QUIT", "SELECT", "AUTH", "HELLO", "CLIENT",
    "COMMAND", "CONFIG", "INFO", "RESET", "MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH",
];

/// Runs one request of `client` (or queues it, inside `MULTI`), which
/// comes after `before` on its connection.
pub fn dispatch(
    server: &Arc<Server>,
    client: &mut Client,
    req: Request,
    before: InFlight,
) -> Outcome {
    server.stats.commands.fetch_add(1, Relaxed);
    let mut room = [0; NAME_ROOM];
    let name = capitals(&req[0], &mut room);
    let name = name.as_ref();
    if !client.authenticated && !matches!(name, "AUTH" | "HELLO" | "QUIT" | "RESET") {
        return err("NOAUTH Authentication required.");
    }
    if client.multi.is_some() && !multi::acts_at_once(name) {
        return multi::queue(client, name, req);
    }
    let args = &req[1..];
    match (name, args.len()) {
        ("INCR", 1) => incr(server, &args[0], 1, false),
        ("INCRBY", 2) => match positive(&args[1]) {
            Some(k) => incr(server, &args[0], k, true),
            None => bad_increment(),
        },
        ("GET", 1) => read(server, &args[0], client.proto, before.unanswered),
        ("PING", 0) => reply(|out| resp::simple(out, "PONG")),
        ("PING", 1) | ("ECHO", 1) => reply(|out| resp::bulk(out, &args[0])),
        ("QUIT", _) => Outcome::Close(b"+OK\r\n".to_vec()),
        ("SELECT", 1) => session::select(args),
        ("AUTH", 1 | 2) => session::auth(server, client, args),
        ("HELLO", _) => session::hello(server, client, args),
        ("CLIENT", 1..) => session::client_command(client, args),
        ("RESET", 0) => session::reset(server, client),
        ("MULTI", _) => multi::begin(client, args),
        ("EXEC", _) => multi::exec(server, client, args, before),
        ("DISCARD", _) => multi::discard(client, args),
        ("WATCH", 1..) => multi::watch(client),
        ("UNWATCH", 0) => ok(),
        ("COMMAND", _) => command(args, client.proto),
        ("CONFIG", 2..) if args[0].eq_ignore_ascii_case(b"GET") => {
            config_get(server, &args[1..], client.proto)
        }
        ("INFO", 0 | 1) => info(server, args.first(), client.proto),
        (known, _) if KNOWN.contains(&known) => arity(name),
        _ => unknown(&req),
    }
}

/// Room for a command name in capitals: every name known fits.
const NAME_ROOM: usize = 16;

/// The command name in capitals, as `dispatch` matches it: made in `room`
/// when short and ASCII (every name known is), so that no request costs an
/// allocation for its name; allocated otherwise (an unknown command, whose
/// error quotes it).
fn capitals<'a>(raw: &[u8], room: &'a mut [u8; NAME_ROOM]) -> Cow<'a, str> {
    if raw.len() <= NAME_ROOM && raw.is_ascii() {
        let room = &mut room[..raw.len()];
        room.copy_from_slice(raw);
        room.make_ascii_uppercase();
        if let Ok(name) = std::str::from_utf8(room) {
            return Cow::Borrowed(name);
        }
    }
    Cow::Owned(String::from_utf8_lossy(raw).to_ascii_uppercase())
}

/// Whether a request may be queued inside `MULTI`; its error otherwise.
/// Every argument is checked here, so that `EXEC` runs only requests that
/// are well formed (see `multi.rs`).
pub fn check_queueable(name: &str, args: &[Vec<u8>]) -> Result<(), Outcome> {
    match (name, args.len()) {
        ("INCR" | "GET", 1) => sequence_name(&args[0]).map(drop),
        ("INCRBY", 2) => {
            sequence_name(&args[0])?;
            positive(&args[1]).map(drop).ok_or_else(bad_increment)
        }
        ("PING", 0 | 1) | ("ECHO", 1) | ("INFO", 0 | 1) | ("UNWATCH", 0) => Ok(()),
        ("INCR" | "GET" | "INCRBY" | "PING" | "ECHO" | "INFO" | "UNWATCH", _) => Err(arity(name)),
        (known, _) if KNOWN.contains(&known) => Err(err(&format!(
            "ERR Command not allowed inside a transaction (seq serve queues INCR, INCRBY, GET, \
             PING, ECHO and INFO): {}",
            known.to_ascii_lowercase()
        ))),
        _ => {
            let mut req = vec![name.as_bytes().to_vec()];
            req.extend(args.iter().cloned());
            Err(unknown(&req))
        }
    }
}

/// `-ERR unknown command`, in Redis's words.
fn unknown(req: &Request) -> Outcome {
    let shown: Vec<String> = req[1..]
        .iter()
        .take(8)
        .map(|a| format!("'{}'", String::from_utf8_lossy(&a[..a.len().min(128)])))
        .collect();
    err(&format!(
        "ERR unknown command '{}', with args beginning with: {}",
        String::from_utf8_lossy(&req[0][..req[0].len().min(128)]),
        shown.join(" ")
    ))
}

fn info(server: &Server, section: Option<&Vec<u8>>, proto: Proto) -> Outcome {
    let section = section
        .map(|s| String::from_utf8_lossy(s))
        .unwrap_or_default();
    let text = super::info::render(
        &section,
        &server.stats,
        &server.listen,
        &server.nodes,
        &server.registry.stats(),
        &server.health,
    );
    reply(|out| resp::text(out, text.as_bytes(), proto))
}

/// A positive decimal `u64`, nothing else.
fn positive(text: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(text).ok()?;
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok().filter(|&k| k > 0)
}

/// The name as a sequence name, or the reply that refuses it: checked
/// here, before anything is queued or sent, by the library's rule
/// ([`crate::seq::check_name`]) that the command line follows too.
fn sequence_name(raw: &[u8]) -> Result<&str, Outcome> {
    let Ok(name) = std::str::from_utf8(raw) else {
        return Err(err("ERR the sequence name must be UTF-8 text"));
    };
    match crate::seq::check_name(name) {
        Ok(()) => Ok(name),
        Err(e) => Err(err(&format!("ERR {e}"))),
    }
}

fn incr(server: &Arc<Server>, raw: &[u8], count: u64, last: bool) -> Outcome {
    let name = match sequence_name(raw) {
        Ok(name) => name,
        Err(refusal) => return refusal,
    };
    let (tx, rx) = oneshot::channel();
    let ask = Ask {
        count,
        last,
        reply: tx,
        arrived: Instant::now(),
    };
    match server
        .registry
        .submit(name, || server.keys.counter(name), ask)
    {
        Ok(()) => Outcome::Ids(rx),
        Err(text) => err(&text),
    }
}

/// `GET`: read now, or, when a request before it on the connection is
/// still unanswered, once it is (so that the `GET` sees what the requests
/// before it did, as Redis answers a connection's requests in order). Only
/// reads wait: `INCR`s are dispatched at once, so that a pipeline's share
/// a round.
fn read(server: &Arc<Server>, raw: &[u8], proto: Proto, after_unanswered: bool) -> Outcome {
    let name = match sequence_name(raw) {
        Ok(name) => name,
        Err(refusal) => return refusal,
    };
    if !after_unanswered {
        return get(server, name, proto);
    }
    let (server, name) = (Arc::clone(server), name.to_string());
    Outcome::Deferred(Box::new(move || get(&server, &name, proto)))
}

/// Reads the majority's current value of a valid name, on a task of its own.
fn get(server: &Arc<Server>, name: &str, proto: Proto) -> Outcome {
    let key = match server.keys.counter(name) {
        Ok(key) => key,
        Err(e) => return err(&format!("ERR {e}")),
    };
    let seq = MajoritySequence::named(name, key);
    let mut quorum = server.quorum.clone();
    let (tx, rx) = oneshot::channel();
    let limit = server.timeout;
    tokio::spawn(async move {
        let mut out = Vec::new();
        match tokio::time::timeout(limit, seq.current(&mut quorum)).await {
            Ok(Ok(Some(v))) => resp::bulk(&mut out, v.to_string().as_bytes()),
            Ok(Ok(None)) => resp::nil(&mut out, proto),
            Ok(Err(e)) => resp::error_reply(&mut out, &format!("ERR {e}")),
            Err(_) => resp::error_reply(
                &mut out,
                &format!(
                    "ERR no majority of the nodes answered within {}",
                    crate::base::duration::shown(limit)
                ),
            ),
        }
        let _ = tx.send(out);
    });
    Outcome::Later(rx)
}

/// `CONFIG GET`: the persistence that the nodes were required to have
/// (`--allow-volatile` lifts it), under Redis's names; nothing else.
fn config_get(server: &Server, params: &[Vec<u8>], proto: Proto) -> Outcome {
    let (aof, fsync) = if server.durable {
        ("yes", "always")
    } else {
        ("unknown", "unknown")
    };
    let known = [("save", ""), ("appendonly", aof), ("appendfsync", fsync)];
    let found: Vec<_> = known
        .iter()
        .filter(|(k, _)| params.iter().any(|p| p.eq_ignore_ascii_case(k.as_bytes())))
        .collect();
    reply(|out| {
        resp::map(out, found.len(), proto);
        for (k, v) in found {
            resp::bulk(out, k.as_bytes());
            resp::bulk(out, v.as_bytes());
        }
    })
}

fn command(args: &[Vec<u8>], proto: Proto) -> Outcome {
    let Some(sub) = args.first() else {
        return reply(|out| resp::array(out, 0));
    };
    let sub = String::from_utf8_lossy(sub).to_ascii_uppercase();
    match sub.as_str() {
        "COUNT" => reply(|out| resp::integer(out, KNOWN.len() as i64)),
        // redis-cli then uses the help it was built with, which knows
        // INCR, INCRBY, GET and the rest as Redis documents them.
        "DOCS" => err("ERR COMMAND DOCS is not available: seq serve keeps no documentation"),
        "INFO" => reply(|out| {
            resp::array(out, args.len() - 1);
            for _ in 1..args.len() {
                resp::nil(out, proto);
            }
        }),
        _ => err(&format!(
            "ERR unknown subcommand '{}'. seq serve knows COMMAND, COMMAND COUNT, DOCS and INFO.",
            sub
        )),
    }
}
