//! The commands about the connection itself, answered as Redis 7 answers
//! them, because client libraries send them on connecting and stop when
//! the answer is not what Redis gives:
//!
//! * `AUTH [user] pass` (with `--requirepass`: user `default` only);
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
use super::resp::{self, Proto};
use super::{Client, Server};

pub fn auth(server: &Server, client: &mut Client, args: &[Vec<u8>]) -> Outcome {
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
        && let Outcome::Now(refusal) = auth(server, client, &[user.clone(), pass.clone()])
        && refusal.first() == Some(&b'-')
    {
        return Outcome::Now(refusal);
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

/// `RESET`: the connection as it was when accepted (its id stays).
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
