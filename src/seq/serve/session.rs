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
//!   transaction, not authenticated when a password is set), `+RESET`;
//! * `SELECT 0` (there is only database 0).
//!
//! Nothing here touches the nodes.

use super::command::{Outcome, arity, err, ok, reply};
use super::limits::{self, MAX_AUTH_FAILURES};
use super::resp::{self, Proto};
use super::{Client, Server};
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
    server.metrics.seq_auth_failure();
    if let Some(left_out) = server.guard.wrong_password.admit() {
        log::warn!(
            "seq serve: wrong password from {} ({} of the {} a connection is allowed; each is \
             answered after {}){}",
            client.peer,
            client.auth_failures,
            MAX_AUTH_FAILURES,
            crate::base::duration::shown(AUTH_PAUSE),
            limits::left_out(left_out)
        );
    }
    let mut reply = Vec::new();
    resp::error_reply(
        &mut reply,
        "WRONGPASS invalid username-password pair or user is disabled.",
    );
    Outcome::Refused {
        reply,
        close: client.auth_failures >= MAX_AUTH_FAILURES,
    }
}

pub fn auth(server: &Server, client: &mut Client, args: &[Vec<u8>]) -> Outcome {
    let (user, given) = match args {
        [pass] => (b"default".as_slice(), pass),
        [user, pass] => (user.as_slice(), pass),
        _ => return arity("auth"),
    };
    match authenticate(server, client, user, given) {
        Ok(()) => ok(),
        Err(refusal) => refusal,
    }
}

/// Compares without stopping at the first difference (no timing hint).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `HELLO`'s options, read before anything changes: a syntax error or a
/// wrong password leaves the connection as it was, as in Redis.
#[derive(Default)]
struct HelloOptions {
    proto: Option<Proto>,
    auth: Option<[Vec<u8>; 2]>,
    name: Option<Vec<u8>>,
}

fn hello_options(args: &[Vec<u8>]) -> Result<HelloOptions, Outcome> {
    let mut options = HelloOptions::default();
    let Some(version) = args.first() else {
        return Ok(options);
    };
    options.proto = match std::str::from_utf8(version).ok().map(str::parse::<i64>) {
        Some(Ok(2)) => Some(Proto::Resp2),
        Some(Ok(3)) => Some(Proto::Resp3),
        Some(Ok(_)) => {
            return Err(err(
                "NOPROTO unsupported protocol version (seq serve speaks RESP2 and RESP3)",
            ));
        }
        _ => {
            return Err(err(
                "ERR Protocol version is not an integer or out of range",
            ));
        }
    };
    let mut rest = args.iter().skip(1);
    while let Some(option) = rest.next() {
        if option.eq_ignore_ascii_case(b"AUTH") {
            let (Some(user), Some(pass)) = (rest.next(), rest.next()) else {
                return Err(err("ERR Syntax error in HELLO option 'auth'"));
            };
            options.auth = Some([user.clone(), pass.clone()]);
        } else if option.eq_ignore_ascii_case(b"SETNAME") {
            let Some(name) = rest.next() else {
                return Err(err("ERR Syntax error in HELLO option 'setname'"));
            };
            if !valid_name(name) {
                return Err(bad_name());
            }
            options.name = Some(name.clone());
        } else {
            return Err(err(&format!(
                "ERR Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(option)
            )));
        }
    }
    Ok(options)
}

pub fn hello(server: &Server, client: &mut Client, args: &[Vec<u8>]) -> Outcome {
    let options = match hello_options(args) {
        Ok(options) => options,
        Err(refusal) => return refusal,
    };
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
    reply(|out| {
        resp::map(out, 7, proto);
        for (k, v) in [("server", "yaraus"), ("version", env!("CARGO_PKG_VERSION"))] {
            resp::bulk(out, k.as_bytes());
            resp::bulk(out, v.as_bytes());
        }
        resp::bulk(out, b"proto");
        resp::integer(out, proto.version());
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

/// Redis's rule for client names: printable ASCII without spaces.
fn valid_name(name: &[u8]) -> bool {
    !name.iter().any(|b| *b <= b' ' || *b > b'~')
}

fn bad_name() -> Outcome {
    err("ERR Client names cannot contain spaces, newlines or special characters.")
}

pub fn client_command(client: &mut Client, args: &[Vec<u8>]) -> Outcome {
    let sub = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
    match (sub.as_str(), args.len()) {
        ("SETNAME", 2) => {
            if !valid_name(&args[1]) {
                return bad_name();
            }
            client.name = (!args[1].is_empty()).then(|| args[1].clone());
            ok()
        }
        ("GETNAME", 1) => match &client.name {
            Some(name) => reply(|out| resp::bulk(out, name)),
            None => reply(|out| resp::nil(out, client.proto)),
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

/// `RESET`: the connection as it was when accepted (its id stays; its
/// wrong passwords still count; unauthenticated again, it has the time to
/// authenticate of `limits.rs` again).
pub fn reset(server: &Server, client: &mut Client) -> Outcome {
    client.proto = Proto::Resp2;
    client.name = None;
    client.multi = None;
    client.authenticated = server.password.is_none();
    reply(|out| resp::simple(out, "RESET"))
}

pub fn select(args: &[Vec<u8>]) -> Outcome {
    match std::str::from_utf8(&args[0]).ok().map(str::parse::<i64>) {
        Some(Ok(0)) => ok(),
        Some(Ok(_)) => err("ERR DB index is out of range (seq serve has database 0 only)"),
        _ => err("ERR value is not an integer or out of range"),
    }
}
