//! The commands about the connection itself, answered as Redis 7 answers
//! them, because client libraries send them on connecting and stop when
//! the answer is not what Redis gives:
//!
//! * `AUTH [user] pass` (with `--requirepass`: user `default` only), and
//!   `HELLO … AUTH user pass` through the same check ([`check_auth`]): a
//!   wrong password is counted (`INFO stats`, the metrics), logged with
//!   the client's address (never the password), answered after a pause,
//!   and the last one allowed closes the connection (`limits.rs` has the
//!   figures and why);
//! * `HELLO [protover [AUTH user pass] [SETNAME name]]`: `HELLO 3` switches
//!   the connection to RESP3 (redis-py 8 and `redis-cli -3` send it first
//!   and refuse a server that answers an error), `HELLO 2` back; without a
//!   version it only reports, in the protocol in use; any other version is
//!   `-NOPROTO` and changes nothing. The reply is a map (an array of pairs
//!   in RESP2) of server, version, proto, id, mode, role, modules, with
//!   `proto` the version now in use: redis-py checks it;
//! * `CLIENT SETNAME/GETNAME/SETINFO/ID` (`SETINFO` is what redis-py and
//!   go-redis send after `HELLO`; the library's name is accepted and not
//!   kept); any other subcommand (redis-py 8 also asks `CLIENT
//!   MAINT_NOTIFICATIONS` and carries on when refused) is one error;
//! * `RESET`: back to a new connection's state (RESP2, no name, out of any
//!   transaction, not authenticated when a password is set), `+RESET`.
//!
//! (`PING`, `ECHO`, `QUIT` and `SELECT 0` change nothing of the connection:
//! the table of `command.rs` and the dispatcher answer them.)
//!
//! Nothing here touches the nodes. The arguments come checked
//! (`command.rs` parses them): what is here is what each command does to
//! the connection.

use super::command::{self, Hello};
use super::limits::MAX_AUTH_FAILURES;
use super::reply::{self, Outcome, Proto, err, ok};
use super::state::{Client, Server};
use crate::timing::serve::AUTH_PAUSE;
use std::sync::atomic::Ordering::Relaxed;

/// What a password check found.
pub enum AuthCheck {
    Passed,
    /// No `--requirepass`: nothing to check against.
    NotConfigured,
    Wrong,
}

/// The one check of a user and password, for `AUTH` and `HELLO … AUTH`.
pub fn check_auth(server: &Server, user: &[u8], given: &[u8]) -> AuthCheck {
    match &server.password {
        None => AuthCheck::NotConfigured,
        Some(password) if user == b"default" && same(given, password.as_bytes()) => {
            AuthCheck::Passed
        }
        Some(_) => AuthCheck::Wrong,
    }
}

/// Checks `user`/`given` for `client`: `Ok` once authenticated, or the
/// reply that refuses it (a wrong password counted, logged, paused).
fn authenticate(
    server: &Server,
    client: &mut Client,
    user: &[u8],
    given: &[u8],
) -> Result<(), Outcome> {
    match check_auth(server, user, given) {
        AuthCheck::Passed => {
            client.authenticated = true;
            client.stranger = None;
            server.guard.forget(client.id);
            Ok(())
        }
        AuthCheck::NotConfigured => Err(err(
            "ERR AUTH <password> called without any password configured for the default \
             user. Are you sure your configuration is correct?",
        )),
        AuthCheck::Wrong => Err(wrong_password(server, client)),
    }
}

/// A wrong password: counted, logged (the address, never the password),
/// answered after a pause, and the connection closed at the last one
/// allowed (`limits.rs`).
fn wrong_password(server: &Server, client: &mut Client) -> Outcome {
    client.auth_failures += 1;
    server.stats.auth_failures.fetch_add(1, Relaxed);
    server.metrics.auth_failure();
    if let Some(left_out) = server.guard.wrong_password.admit() {
        log::warn!(
            "seq serve: wrong password from {} ({} of the {} a connection is allowed; each is \
             answered after {}){}",
            client.peer,
            client.auth_failures,
            MAX_AUTH_FAILURES,
            crate::base::duration::shown(AUTH_PAUSE),
            left_out
        );
    }
    let mut wrong = Vec::new();
    reply::error_reply(
        &mut wrong,
        "WRONGPASS invalid username-password pair or user is disabled.",
    );
    Outcome::Refused {
        reply: wrong,
        close: client.auth_failures >= MAX_AUTH_FAILURES,
    }
}

pub fn auth(server: &Server, client: &mut Client, user: &[u8], pass: &[u8]) -> Outcome {
    match authenticate(server, client, user, pass) {
        Ok(()) => ok(),
        Err(refusal) => refusal,
    }
}

/// Compares without stopping at the first difference (no timing hint).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `HELLO`: a wrong password leaves the connection as it was, as in Redis.
pub fn hello(server: &Server, client: &mut Client, options: Hello) -> Outcome {
    if let Some([user, pass]) = &options.auth
        && let Err(refusal) = authenticate(server, client, user, pass)
    {
        return refusal;
    }
    if !client.authenticated {
        return err(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the \
             HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and \
             select the RESP protocol version at the same time",
        );
    }
    if let Some(name) = options.name {
        client.name = (!name.is_empty()).then_some(name);
    }
    if let Some(proto) = options.proto {
        client.proto = proto;
    }
    let proto = client.proto;
    Outcome::now(|out| {
        reply::map(out, 7, proto);
        for (k, v) in [("server", "yaraus"), ("version", env!("CARGO_PKG_VERSION"))] {
            reply::bulk(out, k.as_bytes());
            reply::bulk(out, v.as_bytes());
        }
        reply::bulk(out, b"proto");
        reply::integer(out, proto.version());
        reply::bulk(out, b"id");
        reply::integer(out, client.id as i64);
        for (k, v) in [("mode", "standalone"), ("role", "master")] {
            reply::bulk(out, k.as_bytes());
            reply::bulk(out, v.as_bytes());
        }
        reply::bulk(out, b"modules");
        reply::array(out, 0);
    })
}

pub fn client_command(client: &mut Client, sub: command::Client) -> Outcome {
    match sub {
        command::Client::SetName(name) => {
            client.name = name;
            ok()
        }
        command::Client::GetName => match &client.name {
            Some(name) => Outcome::now(|out| reply::bulk(out, name)),
            None => Outcome::now(|out| reply::nil(out, client.proto)),
        },
        command::Client::SetInfo => ok(),
        command::Client::Id => Outcome::now(|out| reply::integer(out, client.id as i64)),
    }
}

/// `RESET`: the connection as it was when accepted (its id stays; its
/// wrong passwords still count; unauthenticated again, it has the time to
/// authenticate of `limits.rs` again).
pub fn reset(server: &Server, client: &mut Client) -> Outcome {
    client.proto = Proto::Resp2;
    client.name = None;
    client.multi = None;
    client.authenticated = server.password.is_none();
    Outcome::now(|out| reply::simple(out, "RESET"))
}
