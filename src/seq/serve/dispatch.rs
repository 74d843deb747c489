//! The dispatcher: one request of a connection, from its bytes' parse to
//! its [`Outcome`].
//!
//! A request is looked up in the command table and parsed once
//! (`command.rs`); then, in this order:
//!
//! * a connection that must authenticate and has not gets `-NOAUTH` for
//!   anything but the few commands allowed before (`AUTH`, `HELLO`,
//!   `QUIT`, `RESET`), the unknown ones included;
//! * inside `MULTI`, a command that is queued goes to the transaction
//!   (`multi.rs`), refused if the table does not queue it or its
//!   arguments are wrong; the commands that act at once run;
//! * otherwise it runs: `INCR`/`INCRBY` go to the name's sequencer
//!   (`batch.rs`), `GET` reads the nodes on a task of its own, the
//!   connection's own commands are `session.rs`'s, the rest is answered
//!   here (`COMMAND`, `CONFIG GET`, `INFO`).
//!
//! A `GET` after a request still unanswered on its connection waits for
//! it ([`Outcome::Deferred`]), so that it sees that request's effect: the
//! caller says what is in flight before each request ([`InFlight`]).
//! `handler.rs` has why; only reads wait, so a pipeline's `INCR`s still
//! share a round.
//!
//! **`EXEC`.** The queue comes back from the transaction and runs here, as
//! the connection's own requests would, in order. Its reply is one, made
//! of up to 1,024; `INFO` alone is as long as the list of sequences. So
//! the replies made without the nodes (`PING`, `ECHO`, `INFO`) are made
//! first, each counted against the bound on one connection's replies
//! (`limits.rs`) with what the connection holds already and an id's room
//! for each request to the nodes: a transaction over the bound stops
//! there, before any of its requests reached a node, so it consumes no
//! id. Then the requests to the nodes are dispatched in order.
//!
//! `PING` answers `PONG` whatever the nodes do: it says the server is
//! alive. Whether it can hand out ids is `INFO health` (docs/seq.md,
//! "Health", has why). Ids above 2^63 − 1 are bulk strings: a RESP
//! integer is signed (`reply.rs`).

use super::batch::Ask;
use super::command::{self, Command, InMulti, TABLE};
use super::limits::MAX_REPLY_BYTES;
use super::multi;
use super::reply::{self, InFlight, Outcome, Proto, closing_err, err, ok};
use super::resp::Request;
use super::session;
use super::state::{Client, Server};
use crate::seq::MajoritySequence;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use tokio::sync::oneshot;
use tokio::time::Instant;

/// Runs one request of `client` (or queues it, inside `MULTI`), which
/// comes after `before` on its connection.
pub fn dispatch(
    server: &Arc<Server>,
    client: &mut Client,
    request: Request,
    before: InFlight,
) -> Outcome {
    server.stats.commands.fetch_add(1, Relaxed);
    let spec = command::find(&request[0]);
    if !client.authenticated && !spec.is_some_and(|s| s.before_auth) {
        return err("NOAUTH Authentication required.");
    }
    if let Some(tx) = client.multi.as_mut()
        && spec.is_none_or(|s| s.in_multi != InMulti::AtOnce)
    {
        let size = request.iter().map(Vec::len).sum();
        let parsed = match spec {
            // Named in capitals, as it is looked up.
            None => Err(command::unknown(
                String::from_utf8_lossy(&request[0])
                    .to_ascii_uppercase()
                    .as_bytes(),
                &request[1..],
            )),
            Some(spec) if spec.in_multi == InMulti::Refused => Err(command::not_queueable(spec)),
            Some(spec) => spec.parse(request),
        };
        return tx.queue(parsed, size);
    }
    let Some(spec) = spec else {
        return command::unknown(&request[0], &request[1..]);
    };
    match spec.parse(request) {
        Ok(command) => run(server, client, command, before),
        Err(refusal) => refusal,
    }
}

/// Runs a parsed command.
fn run(server: &Arc<Server>, client: &mut Client, command: Command, before: InFlight) -> Outcome {
    match command {
        Command::Incr { name, count, last } => incr(server, &name, count, last),
        Command::Get(name) => read(server, name, client.proto, before.unanswered),
        Command::Ping => Outcome::now(|out| reply::simple(out, "PONG")),
        Command::Echo(text) => Outcome::now(|out| reply::bulk(out, &text)),
        Command::Quit => Outcome::Close(b"+OK\r\n".to_vec()),
        Command::Select | Command::Unwatch => ok(),
        Command::Auth { user, pass } => session::auth(server, client, &user, &pass),
        Command::Hello(options) => session::hello(server, client, options),
        Command::Client(sub) => session::client_command(client, sub),
        Command::Reset => session::reset(server, client),
        Command::Multi => multi::begin(&mut client.multi),
        Command::Exec => exec(server, client, before),
        Command::Discard => multi::discard(&mut client.multi),
        Command::Watch => multi::watch(&client.multi),
        Command::List => Outcome::now(|out| reply::array(out, 0)),
        Command::Count => Outcome::now(|out| reply::integer(out, TABLE.len() as i64)),
        Command::Describe(names) => Outcome::now(|out| {
            reply::array(out, names);
            for _ in 0..names {
                reply::nil(out, client.proto);
            }
        }),
        Command::ConfigGet(params) => config_get(server, &params, client.proto),
        Command::Info(section) => info(server, &section, client.proto),
    }
}

/// `INCR`/`INCRBY`: a request for ids, queued for the name's sequencer.
fn incr(server: &Arc<Server>, name: &str, count: u64, last: bool) -> Outcome {
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
fn read(server: &Arc<Server>, name: String, proto: Proto, after_unanswered: bool) -> Outcome {
    if !after_unanswered {
        return get(server, &name, proto);
    }
    let server = Arc::clone(server);
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
            Ok(Ok(Some(v))) => reply::bulk(&mut out, v.to_string().as_bytes()),
            Ok(Ok(None)) => reply::nil(&mut out, proto),
            Ok(Err(e)) => reply::error_reply(&mut out, &format!("ERR {e}")),
            Err(_) => reply::error_reply(
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

fn info(server: &Server, section: &str, proto: Proto) -> Outcome {
    let text = super::info::render(
        section,
        &server.stats,
        &server.listen,
        &server.nodes,
        &server.registry.stats(),
        &server.health,
    );
    Outcome::now(|out| reply::text(out, text.as_bytes(), proto))
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
    Outcome::now(|out| {
        reply::map(out, found.len(), proto);
        for (k, v) in found {
            reply::bulk(out, k.as_bytes());
            reply::bulk(out, v.as_bytes());
        }
    })
}

/// `EXEC`: the queued commands, run in order; their replies come as one
/// array ([`Outcome::Exec`]). `before` is what the connection has in
/// flight before it. See the module doc for the bound.
fn exec(server: &Arc<Server>, client: &mut Client, before: InFlight) -> Outcome {
    let queued = match multi::take(&mut client.multi) {
        Ok(queued) => queued,
        Err(reply) => return reply,
    };
    let mut held = before.bytes;
    let mut made = Vec::with_capacity(queued.len());
    for command in queued {
        let slot = if command.reaches_nodes() {
            held += ID_REPLY;
            Err(command)
        } else {
            let outcome = run_queued(server, client, command, before);
            held += outcome.held();
            Ok(outcome)
        };
        if held > MAX_REPLY_BYTES {
            return too_large(server, client);
        }
        made.push(slot);
    }
    let mut flight = before;
    let replies = made
        .into_iter()
        .map(|slot| {
            let outcome =
                slot.unwrap_or_else(|command| run_queued(server, client, command, flight));
            flight.add(&outcome);
            outcome
        })
        .collect();
    Outcome::Exec(replies)
}

/// Runs a command of a transaction, which counts as processed again (it
/// did when it was queued).
fn run_queued(
    server: &Arc<Server>,
    client: &mut Client,
    command: Command,
    before: InFlight,
) -> Outcome {
    server.stats.commands.fetch_add(1, Relaxed);
    run(server, client, command, before)
}

/// The room of the longest id reply: `$20`, its 20 digits, two CRLFs.
const ID_REPLY: usize = 27;

/// A transaction whose replies would pass the bound: counted, logged, an
/// error in place of its array, and the connection closes.
fn too_large(server: &Server, client: &Client) -> Outcome {
    server.stats.too_large.fetch_add(1, Relaxed);
    if let Some(left_out) = server.guard.too_large.admit() {
        log::warn!(
            "seq serve: closed the connection of {}: its transaction's replies would exceed {} \
             bytes, the bound on one connection's replies{}",
            client.peer,
            MAX_REPLY_BYTES,
            left_out
        );
    }
    closing_err(&format!(
        "ERR the transaction's replies would exceed {MAX_REPLY_BYTES} bytes, the bound on one \
         connection's replies; the connection is closed"
    ))
}
