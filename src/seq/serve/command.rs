//! The commands `seq serve` understands, in one table ([`TABLE`]), and a
//! request parsed once into a [`Command`], as mini-redis's
//! `Command::from_frame` does.
//!
//! The table is the one place that knows a command: its name, how many
//! arguments it takes, whether it may come before `AUTH`, what it does
//! inside `MULTI` ([`InMulti`]) and how its arguments are read. Parsing
//! checks every argument (a sequence name by [`crate::seq::check_name`],
//! the rule the command line follows too; an increment as a whole number
//! from 1), so that what comes out is a command that can run: the
//! dispatcher (`dispatch.rs`) runs it, or a transaction (`multi.rs`)
//! queues it and hands it back at `EXEC`. A refusal is the error reply, in
//! Redis's words where Redis has the command. `COMMAND COUNT` counts the
//! table.
//!
//! What the commands are:
//!
//! * `INCR name`, `INCRBY name k` (k ≥ 1: the last id of a fresh block of
//!   k), for the name's sequencer (`batch.rs`); `GET name`, the majority's
//!   current value, read-only (null when no node holds it);
//! * `MULTI`/`EXEC`/`DISCARD` around them (`multi.rs`), `WATCH` (refused:
//!   ids only grow), `UNWATCH`;
//! * the connection's own (`session.rs`): `PING`, `ECHO`, `QUIT`, `SELECT
//!   0`, `AUTH`, `HELLO [2|3]`, `CLIENT SETNAME/GETNAME/SETINFO/ID`,
//!   `RESET`;
//! * what tools ask on connecting: `COMMAND` (`COUNT`, `INFO`; `DOCS` is
//!   an error, on which `redis-cli` falls back on its built-in help for
//!   its hints), `CONFIG GET` (the nodes' persistence) and `INFO`.
//!
//! Anything else is `-ERR unknown command`, as Redis words it.

use super::reply::{Outcome, Proto, arity, err};
use super::resp::Request;

/// What a command does inside `MULTI`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum InMulti {
    /// Queued, run at `EXEC`.
    Queued,
    /// Run at once, as in Redis (`EXEC`, `DISCARD`, `QUIT`…).
    AtOnce,
    /// Refused, and the transaction aborts.
    Refused,
}

/// One command of the table.
pub struct Spec {
    /// In capitals.
    pub name: &'static str,
    /// Fewest and most arguments after the name.
    args: (usize, usize),
    /// Whether it may come before the connection authenticated.
    pub before_auth: bool,
    pub in_multi: InMulti,
    /// Reads its arguments (`request[1..]`, their number already checked).
    parse: fn(Request) -> Result<Command, Outcome>,
}

const ANY: usize = usize::MAX;

const fn spec(
    name: &'static str,
    args: (usize, usize),
    in_multi: InMulti,
    parse: fn(Request) -> Result<Command, Outcome>,
) -> Spec {
    Spec {
        name,
        args,
        before_auth: false,
        in_multi,
        parse,
    }
}

/// Those that come first on a connection that must authenticate.
const fn before_auth(spec: Spec) -> Spec {
    Spec {
        before_auth: true,
        ..spec
    }
}

use InMulti::{AtOnce, Queued, Refused};

/// Every command `seq serve` knows.
pub static TABLE: [Spec; 19] = [
    spec("INCR", (1, 1), Queued, incr),
    spec("INCRBY", (2, 2), Queued, incrby),
    spec("GET", (1, 1), Queued, get),
    spec("PING", (0, 1), Queued, ping),
    spec("ECHO", (1, 1), Queued, echo),
    before_auth(spec("QUIT", (0, ANY), AtOnce, |_| Ok(Command::Quit))),
    spec("SELECT", (1, 1), Refused, select),
    before_auth(spec("AUTH", (1, 2), Refused, auth)),
    before_auth(spec("HELLO", (0, ANY), Refused, hello)),
    spec("CLIENT", (1, ANY), Refused, client),
    spec("COMMAND", (0, ANY), Refused, command),
    spec("CONFIG", (2, ANY), Refused, config),
    spec("INFO", (0, 1), Queued, info),
    before_auth(spec("RESET", (0, 0), AtOnce, |_| Ok(Command::Reset))),
    spec("MULTI", (0, 0), AtOnce, |_| Ok(Command::Multi)),
    spec("EXEC", (0, 0), AtOnce, |_| Ok(Command::Exec)),
    spec("DISCARD", (0, 0), AtOnce, |_| Ok(Command::Discard)),
    spec("WATCH", (1, ANY), AtOnce, |_| Ok(Command::Watch)),
    spec("UNWATCH", (0, 0), Queued, |_| Ok(Command::Unwatch)),
];

/// The command named `raw` (in any case), if known: found without making
/// the name's capitals, so that no request costs an allocation for it.
pub fn find(raw: &[u8]) -> Option<&'static Spec> {
    TABLE
        .iter()
        .find(|spec| raw.eq_ignore_ascii_case(spec.name.as_bytes()))
}

impl Spec {
    /// `request` (this command's) as a command that can run, or the reply
    /// that refuses it.
    pub fn parse(&self, request: Request) -> Result<Command, Outcome> {
        let (fewest, most) = self.args;
        if !(fewest..=most).contains(&(request.len() - 1)) {
            return Err(arity(self.name));
        }
        (self.parse)(request)
    }
}

/// A request, parsed and checked.
pub enum Command {
    /// `INCR` (one id), `INCRBY` (a block, answered with its last id).
    Incr {
        name: String,
        count: u64,
        last: bool,
    },
    Get(String),
    /// `PING` without an argument.
    Ping,
    /// `ECHO text`, and `PING text`.
    Echo(Vec<u8>),
    Quit,
    /// `SELECT 0`, the only database.
    Select,
    Auth {
        user: Vec<u8>,
        pass: Vec<u8>,
    },
    Hello(Hello),
    Client(Client),
    Reset,
    Multi,
    Exec,
    Discard,
    Watch,
    Unwatch,
    /// `COMMAND` alone: the list of commands (empty).
    List,
    /// `COMMAND COUNT`.
    Count,
    /// `COMMAND INFO` of so many names (none described).
    Describe(usize),
    /// `CONFIG GET` of these parameters.
    ConfigGet(Vec<Vec<u8>>),
    /// `INFO` of a section (empty: all).
    Info(String),
}

impl Command {
    /// Whether it is answered by the nodes (a round or a read).
    pub fn reaches_nodes(&self) -> bool {
        matches!(self, Command::Incr { .. } | Command::Get(_))
    }
}

/// `HELLO`'s options, read before anything changes: a syntax error leaves
/// the connection as it was, as in Redis.
#[derive(Default)]
pub struct Hello {
    pub proto: Option<Proto>,
    pub auth: Option<[Vec<u8>; 2]>,
    pub name: Option<Vec<u8>>,
}

/// The `CLIENT` subcommands.
pub enum Client {
    /// The name (`None`: the empty name, which removes it).
    SetName(Option<Vec<u8>>),
    GetName,
    /// What the client library says of itself: accepted, not kept.
    SetInfo,
    Id,
}

/// The request's arguments, `N` of them as checked by the table.
fn args<const N: usize>(mut request: Request) -> [Vec<u8>; N] {
    request.remove(0);
    request
        .try_into()
        .unwrap_or_else(|_| unreachable!("the table checked the number of arguments"))
}

fn incr(request: Request) -> Result<Command, Outcome> {
    let [name] = args(request);
    let name = sequence_name(name)?;
    Ok(Command::Incr {
        name,
        count: 1,
        last: false,
    })
}

fn incrby(request: Request) -> Result<Command, Outcome> {
    let [name, increment] = args(request);
    let count = positive(&increment).ok_or_else(|| {
        err(
            "ERR the increment must be a whole number from 1 to 18446744073709551615 (ids only \
             grow)",
        )
    })?;
    Ok(Command::Incr {
        name: sequence_name(name)?,
        count,
        last: true,
    })
}

fn get(request: Request) -> Result<Command, Outcome> {
    let [name] = args(request);
    Ok(Command::Get(sequence_name(name)?))
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
/// before anything is queued or sent, by the library's rule
/// ([`crate::seq::check_name`]) that the command line follows too.
fn sequence_name(raw: Vec<u8>) -> Result<String, Outcome> {
    let Ok(name) = String::from_utf8(raw) else {
        return Err(err("ERR the sequence name must be UTF-8 text"));
    };
    match crate::seq::check_name(&name) {
        Ok(()) => Ok(name),
        Err(e) => Err(err(&format!("ERR {e}"))),
    }
}

fn ping(request: Request) -> Result<Command, Outcome> {
    let text = request.into_iter().nth(1);
    Ok(text.map_or(Command::Ping, Command::Echo))
}

fn echo(request: Request) -> Result<Command, Outcome> {
    let [text] = args(request);
    Ok(Command::Echo(text))
}

fn select(request: Request) -> Result<Command, Outcome> {
    let [db] = args(request);
    match std::str::from_utf8(&db).ok().map(str::parse::<i64>) {
        Some(Ok(0)) => Ok(Command::Select),
        Some(Ok(_)) => Err(err(
            "ERR DB index is out of range (seq serve has database 0 only)",
        )),
        _ => Err(err("ERR value is not an integer or out of range")),
    }
}

/// `AUTH pass` is the user `default`'s.
fn auth(request: Request) -> Result<Command, Outcome> {
    let mut args = request.into_iter().skip(1);
    let first = args.next().unwrap_or_default();
    Ok(match args.next() {
        Some(pass) => Command::Auth { user: first, pass },
        None => Command::Auth {
            user: b"default".to_vec(),
            pass: first,
        },
    })
}

fn hello(request: Request) -> Result<Command, Outcome> {
    let mut options = Hello::default();
    let mut rest = request.into_iter().skip(1);
    let Some(version) = rest.next() else {
        return Ok(Command::Hello(options));
    };
    options.proto = match std::str::from_utf8(&version).ok().map(str::parse::<i64>) {
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
    while let Some(option) = rest.next() {
        if option.eq_ignore_ascii_case(b"AUTH") {
            let (Some(user), Some(pass)) = (rest.next(), rest.next()) else {
                return Err(err("ERR Syntax error in HELLO option 'auth'"));
            };
            options.auth = Some([user, pass]);
        } else if option.eq_ignore_ascii_case(b"SETNAME") {
            let Some(name) = rest.next() else {
                return Err(err("ERR Syntax error in HELLO option 'setname'"));
            };
            options.name = Some(client_name(name)?);
        } else {
            return Err(err(&format!(
                "ERR Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(&option)
            )));
        }
    }
    Ok(Command::Hello(options))
}

/// A client name by Redis's rule: printable ASCII without spaces.
fn client_name(name: Vec<u8>) -> Result<Vec<u8>, Outcome> {
    if name.iter().any(|b| *b <= b' ' || *b > b'~') {
        return Err(err(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        ));
    }
    Ok(name)
}

fn client(mut request: Request) -> Result<Command, Outcome> {
    let sub = String::from_utf8_lossy(&request[1]).to_ascii_uppercase();
    let sub = match (sub.as_str(), request.len() - 1) {
        ("SETNAME", 2) => {
            let name = client_name(request.pop().unwrap_or_default())?;
            Client::SetName((!name.is_empty()).then_some(name))
        }
        ("GETNAME", 1) => Client::GetName,
        ("SETINFO", 3) => Client::SetInfo,
        ("ID", 1) => Client::Id,
        ("SETNAME" | "GETNAME" | "SETINFO" | "ID", _) => {
            return Err(err(&format!(
                "ERR wrong number of arguments for 'client|{}' command",
                sub.to_ascii_lowercase()
            )));
        }
        _ => {
            return Err(err(&format!(
                "ERR unknown subcommand '{}'. seq serve knows CLIENT SETNAME, GETNAME, SETINFO \
                 and ID.",
                String::from_utf8_lossy(&request[1])
            )));
        }
    };
    Ok(Command::Client(sub))
}

fn command(request: Request) -> Result<Command, Outcome> {
    let Some(sub) = request.get(1) else {
        return Ok(Command::List);
    };
    let sub = String::from_utf8_lossy(sub).to_ascii_uppercase();
    match sub.as_str() {
        "COUNT" => Ok(Command::Count),
        // redis-cli then uses the help it was built with, which knows
        // INCR, INCRBY, GET and the rest as Redis documents them.
        "DOCS" => Err(err(
            "ERR COMMAND DOCS is not available: seq serve keeps no documentation",
        )),
        "INFO" => Ok(Command::Describe(request.len() - 2)),
        _ => Err(err(&format!(
            "ERR unknown subcommand '{sub}'. seq serve knows COMMAND, COMMAND COUNT, DOCS and \
             INFO."
        ))),
    }
}

/// `CONFIG GET` only; any other subcommand is answered as a wrong number
/// of arguments.
fn config(mut request: Request) -> Result<Command, Outcome> {
    if !request[1].eq_ignore_ascii_case(b"GET") {
        return Err(arity("CONFIG"));
    }
    Ok(Command::ConfigGet(request.split_off(2)))
}

fn info(request: Request) -> Result<Command, Outcome> {
    let section = request
        .get(1)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .unwrap_or_default();
    Ok(Command::Info(section))
}

/// `-ERR unknown command`, in Redis's words: the name as `shown`, the
/// first arguments.
pub fn unknown(shown: &[u8], args: &[Vec<u8>]) -> Outcome {
    let args: Vec<String> = args
        .iter()
        .take(8)
        .map(|a| format!("'{}'", String::from_utf8_lossy(&a[..a.len().min(128)])))
        .collect();
    err(&format!(
        "ERR unknown command '{}', with args beginning with: {}",
        String::from_utf8_lossy(&shown[..shown.len().min(128)]),
        args.join(" ")
    ))
}

/// Why a command is refused inside `MULTI`.
pub fn not_queueable(spec: &Spec) -> Outcome {
    err(&format!(
        "ERR Command not allowed inside a transaction (seq serve queues INCR, INCRBY, GET, \
         PING, ECHO and INFO): {}",
        spec.name.to_ascii_lowercase()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(words: &[&str]) -> Result<Command, Vec<u8>> {
        let request: Request = words.iter().map(|w| w.as_bytes().to_vec()).collect();
        let spec = find(&request[0]).expect("known");
        spec.parse(request).map_err(|refusal| match refusal {
            Outcome::Now(reply) => reply,
            _ => panic!("a refusal is a reply now"),
        })
    }

    #[test]
    fn every_name_is_found_in_any_case_and_once() {
        for spec in &TABLE {
            let lower = spec.name.to_ascii_lowercase();
            assert!(std::ptr::eq(find(lower.as_bytes()).unwrap(), spec));
        }
        assert!(find(b"SET").is_none() && find(b"INCRX").is_none());
    }

    #[test]
    fn every_command_parses_what_its_arity_admits() {
        for spec in &TABLE {
            let (fewest, most) = spec.args;
            for n in fewest..=most.min(fewest + 4) {
                let mut request = vec![spec.name.as_bytes().to_vec()];
                request.extend((0..n).map(|_| b"0".to_vec()));
                // A refusal is fine; a panic is not.
                let _ = spec.parse(request);
            }
        }
    }

    #[test]
    fn arguments_are_checked_once_here() {
        assert!(matches!(
            parsed(&["incrby", "orders", "5"]),
            Ok(Command::Incr {
                count: 5,
                last: true,
                ..
            })
        ));
        let refused = |words: &[&str]| String::from_utf8(parsed(words).err().unwrap()).unwrap();
        assert!(refused(&["INCRBY", "", "0"]).starts_with("-ERR the increment"));
        assert!(refused(&["INCR", ""]).contains("must not be empty"));
        assert_eq!(
            refused(&["GET"]),
            "-ERR wrong number of arguments for 'get' command\r\n"
        );
        assert_eq!(
            refused(&["CONFIG", "SET", "x"]),
            "-ERR wrong number of arguments for 'config' command\r\n"
        );
        assert!(matches!(parsed(&["PING", "x"]), Ok(Command::Echo(t)) if t == b"x"));
        assert!(matches!(
            parsed(&["AUTH", "pw"]),
            Ok(Command::Auth { user, .. }) if user == b"default"
        ));
    }
}
