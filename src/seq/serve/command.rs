//! The commands `seq serve` understands, as Redis answers them where Redis
//! has them, so that `redis-cli`, `redis-benchmark` and client libraries
//! work unchanged:
//!
//! * `INCR name`, `INCRBY name k` (k ≥ 1: the last id of a fresh block of
//!   k), queued for the name's sequencer (`batch.rs`); `GET name`, the
//!   majority's current value, read-only (nil when no node holds it);
//! * the connection's own: `PING`, `ECHO`, `QUIT`, `SELECT 0`, `AUTH`,
//!   `HELLO 2` (3 is `-NOPROTO`: replies are RESP2 only), `CLIENT
//!   SETNAME/GETNAME/SETINFO/ID`;
//! * what tools ask on connecting: `COMMAND` (`COUNT`, `INFO`; `DOCS` is
//!   an error, on which `redis-cli` falls back on its built-in help for
//!   its hints), `CONFIG GET` of `save`, `appendonly` and `appendfsync`
//!   (what `redis-benchmark` prints; the nodes' persistence, as required
//!   at start), and `INFO` (`info.rs`);
//! * anything else: `-ERR unknown command`, as Redis words it.
//!
//! Ids above 2^63 − 1 are bulk strings: a RESP integer is signed.

use super::batch::Ask;
use super::resp::{self, Request};
use super::{Client, Server};
use crate::seq::MajoritySequence;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use tokio::sync::oneshot;
use tokio::time::Instant;

/// Longest sequence name (the key is `NAMESPACE:seq:NAME` on every node).
pub const MAX_NAME: usize = 512;

/// What a request gives the connection.
pub enum Outcome {
    /// The reply, encoded.
    Now(Vec<u8>),
    /// The reply, when its round (or read) is done.
    Later(oneshot::Receiver<Vec<u8>>),
    /// The reply, after which the connection closes.
    Close(Vec<u8>),
}

fn ok() -> Outcome {
    reply(|out| resp::simple(out, "OK"))
}

fn reply(encode: impl FnOnce(&mut Vec<u8>)) -> Outcome {
    let mut out = Vec::new();
    encode(&mut out);
    Outcome::Now(out)
}

fn err(text: &str) -> Outcome {
    reply(|out| resp::error_reply(out, text))
}

fn arity(name: &str) -> Outcome {
    err(&format!(
        "ERR wrong number of arguments for '{}' command",
        name.to_ascii_lowercase()
    ))
}

/// Runs one request of `client`.
pub fn dispatch(server: &Arc<Server>, client: &mut Client, req: Request) -> Outcome {
    server.stats.commands.fetch_add(1, Relaxed);
    let name = String::from_utf8_lossy(&req[0]).to_ascii_uppercase();
    let args = &req[1..];
    if !client.authenticated && !matches!(name.as_str(), "AUTH" | "HELLO" | "QUIT") {
        return err("NOAUTH Authentication required.");
    }
    match (name.as_str(), args.len()) {
        ("INCR", 1) => incr(server, &args[0], 1, false),
        ("INCRBY", 2) => match positive(&args[1]) {
            Some(k) => incr(server, &args[0], k, true),
            None => err(
                "ERR the increment must be a whole number from 1 to 18446744073709551615 \
                 (ids only grow)",
            ),
        },
        ("GET", 1) => get(server, &args[0]),
        ("PING", 0) => reply(|out| resp::simple(out, "PONG")),
        ("PING", 1) | ("ECHO", 1) => reply(|out| resp::bulk(out, &args[0])),
        ("QUIT", _) => Outcome::Close(b"+OK\r\n".to_vec()),
        ("SELECT", 1) => match std::str::from_utf8(&args[0]).ok().map(str::parse::<i64>) {
            Some(Ok(0)) => ok(),
            Some(Ok(_)) => err("ERR DB index is out of range (seq serve has database 0 only)"),
            _ => err("ERR value is not an integer or out of range"),
        },
        ("AUTH", 1 | 2) => auth(server, client, args),
        ("HELLO", _) => hello(server, client, args),
        ("CLIENT", 1..) => client_command(client, args),
        ("COMMAND", _) => command(args),
        ("CONFIG", 2..) if args[0].eq_ignore_ascii_case(b"GET") => config_get(server, &args[1..]),
        ("INFO", 0 | 1) => {
            let section = args
                .first()
                .map(|s| String::from_utf8_lossy(s))
                .unwrap_or_default();
            let text = super::info::render(
                &section,
                &server.stats,
                &server.listen,
                &server.nodes,
                &server.registry.stats(),
            );
            reply(|out| resp::bulk(out, text.as_bytes()))
        }
        (
            "INCR" | "INCRBY" | "GET" | "PING" | "ECHO" | "SELECT" | "AUTH" | "CLIENT" | "CONFIG"
            | "INFO",
            _,
        ) => arity(&name),
        _ => {
            let shown: Vec<String> = args
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
    }
}

/// A positive decimal `u64`, nothing else.
fn positive(text: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(text).ok()?;
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok().filter(|&k| k > 0)
}

/// The name as a sequence name, or the reply that refuses it.
fn sequence_name(raw: &[u8]) -> Result<&str, Outcome> {
    match std::str::from_utf8(raw) {
        Ok("") => Err(err("ERR the sequence name must not be empty")),
        Ok(name) if name.len() <= MAX_NAME => Ok(name),
        Ok(_) => Err(err(&format!(
            "ERR the sequence name is longer than {MAX_NAME} bytes"
        ))),
        Err(_) => Err(err("ERR the sequence name must be UTF-8 text")),
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
        Ok(()) => Outcome::Later(rx),
        Err(text) => err(&text),
    }
}

fn get(server: &Arc<Server>, raw: &[u8]) -> Outcome {
    let name = match sequence_name(raw) {
        Ok(name) => name,
        Err(refusal) => return refusal,
    };
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
            Ok(Ok(None)) => resp::nil(&mut out),
            Ok(Err(e)) => resp::error_reply(&mut out, &format!("ERR {e}")),
            Err(_) => resp::error_reply(
                &mut out,
                &format!(
                    "ERR no majority of the nodes answered within {}",
                    humantime::format_duration(limit)
                ),
            ),
        }
        let _ = tx.send(out);
    });
    Outcome::Later(rx)
}

fn auth(server: &Server, client: &mut Client, args: &[Vec<u8>]) -> Outcome {
    let Some(password) = &server.password else {
        return err(
            "ERR AUTH <password> called without any password configured for the default \
             user. Are you sure your configuration is correct?",
        );
    };
    let (user, given) = match args {
        [pass] => (b"default".as_slice(), pass),
        [user, pass] => (user.as_slice(), pass),
        _ => return arity("auth"),
    };
    if user == b"default" && same(given, password.as_bytes()) {
        client.authenticated = true;
        ok()
    } else {
        err("WRONGPASS invalid username-password pair or user is disabled.")
    }
}

/// Compares without stopping at the first difference (no timing hint).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn hello(server: &Server, client: &mut Client, args: &[Vec<u8>]) -> Outcome {
    if let Some(version) = args.first() {
        match std::str::from_utf8(version).ok().map(str::parse::<i64>) {
            Some(Ok(2)) => {}
            Some(Ok(_)) => {
                return err("NOPROTO unsupported protocol version (seq serve speaks RESP2 only)");
            }
            _ => return err("ERR Protocol version is not an integer or out of range"),
        }
    }
    let mut rest = args.iter().skip(1);
    let mut name = None;
    while let Some(option) = rest.next() {
        if option.eq_ignore_ascii_case(b"AUTH") {
            let (Some(user), Some(pass)) = (rest.next(), rest.next()) else {
                return err("ERR Syntax error in HELLO option 'auth'");
            };
            if let Outcome::Now(refusal) = auth(server, client, &[user.clone(), pass.clone()])
                && refusal.first() == Some(&b'-')
            {
                return Outcome::Now(refusal);
            }
        } else if option.eq_ignore_ascii_case(b"SETNAME") {
            let Some(n) = rest.next() else {
                return err("ERR Syntax error in HELLO option 'setname'");
            };
            name = Some(n.clone());
        } else {
            return err(&format!(
                "ERR Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(option)
            ));
        }
    }
    if !client.authenticated {
        return err(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time",
        );
    }
    if name.is_some() {
        client.name = name;
    }
    reply(|out| {
        resp::array(out, 14);
        for (k, v) in [("server", "yaraus"), ("version", env!("CARGO_PKG_VERSION"))] {
            resp::bulk(out, k.as_bytes());
            resp::bulk(out, v.as_bytes());
        }
        resp::bulk(out, b"proto");
        resp::integer(out, 2);
        resp::bulk(out, b"id");
        resp::integer(out, client.id as i64);
        for (k, v) in [("mode", "standalone"), ("role", "master")] {
            resp::bulk(out, k.as_bytes());
            resp::bulk(out, v.as_bytes());
        }
        resp::bulk(out, b"modules");
        resp::array(out, 0);
    })
}

fn client_command(client: &mut Client, args: &[Vec<u8>]) -> Outcome {
    let sub = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
    match (sub.as_str(), args.len()) {
        ("SETNAME", 2) => {
            if args[1].iter().any(|b| *b <= b' ' || *b > b'~') {
                return err(
                    "ERR Client names cannot contain spaces, newlines or special characters.",
                );
            }
            client.name = (!args[1].is_empty()).then(|| args[1].clone());
            ok()
        }
        ("GETNAME", 1) => match &client.name {
            Some(name) => reply(|out| resp::bulk(out, name)),
            None => reply(resp::nil),
        },
        ("SETINFO", 3) => ok(),
        ("ID", 1) => reply(|out| resp::integer(out, client.id as i64)),
        ("SETNAME" | "GETNAME" | "SETINFO" | "ID", _) => err(&format!(
            "ERR wrong number of arguments for 'client|{}' command",
            sub.to_ascii_lowercase()
        )),
        _ => err(&format!(
            "ERR unknown subcommand '{}'. seq serve knows CLIENT SETNAME, GETNAME, SETINFO and ID.",
            String::from_utf8_lossy(&args[0])
        )),
    }
}

/// `CONFIG GET`: the persistence that the nodes were required to have
/// (`--allow-volatile` lifts it), under Redis's names; nothing else.
fn config_get(server: &Server, params: &[Vec<u8>]) -> Outcome {
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
        resp::array(out, found.len() * 2);
        for (k, v) in found {
            resp::bulk(out, k.as_bytes());
            resp::bulk(out, v.as_bytes());
        }
    })
}

/// The commands `COMMAND COUNT` counts: INCR, INCRBY, GET, PING, ECHO, QUIT,
/// SELECT, AUTH, HELLO, CLIENT, COMMAND, CONFIG, INFO.
const COMMANDS: usize = 13;

fn command(args: &[Vec<u8>]) -> Outcome {
    let Some(sub) = args.first() else {
        return reply(|out| resp::array(out, 0));
    };
    let sub = String::from_utf8_lossy(sub).to_ascii_uppercase();
    match sub.as_str() {
        "COUNT" => reply(|out| resp::integer(out, COMMANDS as i64)),
        // redis-cli then uses the help it was built with, which knows
        // INCR, INCRBY, GET and the rest as Redis documents them.
        "DOCS" => err("ERR COMMAND DOCS is not available: seq serve keeps no documentation"),
        "INFO" => reply(|out| {
            resp::array(out, args.len() - 1);
            for _ in 1..args.len() {
                resp::nil(out);
            }
        }),
        _ => err(&format!(
            "ERR unknown subcommand '{}'. seq serve knows COMMAND, COMMAND COUNT, DOCS and INFO.",
            sub
        )),
    }
}
