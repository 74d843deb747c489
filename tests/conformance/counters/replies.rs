//! The sequence scripts run on one node through the library's builders,
//! and their replies in the models' words.

use std::time::Duration;
use yaraus::seq::script::{Heal, HealStep, Propose, Read};

/// The quarantine argument when the model says a mark is not ripe: far
/// longer than any test, so the node's clock always finds time left.
pub const UNRIPE: Duration = Duration::from_secs(10 * 3600);

/// The quarantine argument for `ripe`: none when the model says the mark
/// is ripe (the mark was made moments ago on the same clock), else
/// [`UNRIPE`].
pub fn quarantine(ripe: bool) -> Duration {
    if ripe { Duration::ZERO } else { UNRIPE }
}

/// A node's key, as the models name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    Counter(u64),
    Missing,
    /// The quarantine mark made after the model's loss number `e` (from 0).
    Mark(u8),
    /// Anything the models have no name for (a mark nobody made, a stray).
    Other(String),
}

/// A script's reply, as the models name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// read.lua: the node holds the counter.
    Holds(u64),
    /// read.lua: the node does not hold it.
    Lacks(Key),
    /// propose.lua: stored.
    Accepted(u64),
    /// propose.lua: the counter is already at or above the proposal.
    Refused(u64),
    /// propose.lua: no counter here, no vote.
    NoVote,
    /// heal.lua mark: the quarantine starts.
    Marked(Key),
    /// heal.lua ripe: the quarantine is over.
    Ripe(Key),
    /// heal.lua ripe or repair: the quarantine is not over.
    Quarantined,
    /// heal.lua repair: set again.
    Repaired(u64),
    /// heal.lua: the node holds something else, nothing written.
    Else(Key),
    /// Expected side only: the script's contract says this request writes
    /// here, where the model says it changes nothing (a model that forgot
    /// a step, if it ever shows).
    Writes(&'static str),
    /// An error, or a reply outside the script's contract.
    Odd(String),
}

/// The marks made in a run: the exact `healing:…` text of each, by the
/// model's number of the loss that made it.
#[derive(Default)]
pub struct Marks(Vec<(u8, String)>);

impl Marks {
    pub fn clear(&mut self) {
        self.0.clear();
    }

    pub fn register(&mut self, e: u8, text: &str) {
        self.0.retain(|(m, _)| *m != e);
        self.0.push((e, text.to_string()));
    }

    /// The text of mark `e`; a well-formed mark no node holds when none
    /// was made (a request for it then finds something else).
    pub fn text(&self, e: u8) -> String {
        self.0
            .iter()
            .find(|(m, _)| *m == e)
            .map_or_else(|| "healing:0:0".to_string(), |(_, t)| t.clone())
    }

    /// A key's text (`''`: missing) in the models' words.
    pub fn key(&self, text: &str) -> Key {
        if text.is_empty() {
            return Key::Missing;
        }
        if let Some((e, _)) = self.0.iter().find(|(_, t)| t == text) {
            return Key::Mark(*e);
        }
        match text.parse::<u64>() {
            Ok(v) if v.to_string() == text => Key::Counter(v),
            _ => Key::Other(text.to_string()),
        }
    }
}

/// One node's connection and the counter's key.
pub struct Node<'a> {
    pub conn: &'a mut redis::Connection,
    pub key: &'a str,
    pub marks: &'a Marks,
}

impl Node<'_> {
    /// The key as it is (plain GET).
    pub fn get(&mut self) -> Key {
        let got: redis::RedisResult<Option<String>> =
            redis::cmd("GET").arg(self.key).query(self.conn);
        match got {
            Ok(text) => self.marks.key(text.as_deref().unwrap_or("")),
            Err(e) => Key::Other(format!("GET failed: {e}")),
        }
    }

    /// read.lua, read-only (the look every read of these models is); also
    /// the state's exact text, for a request that names it.
    pub fn read(&mut self) -> (Reply, String) {
        let inv = Read {
            key: self.key,
            mark: "",
        }
        .invocation();
        match run(self.conn, &inv) {
            Ok((1, text)) => (counter_or_odd(&text, Reply::Holds), text),
            Ok((0, text)) => (Reply::Lacks(self.marks.key(&text)), text),
            other => (odd(other), String::new()),
        }
    }

    /// propose.lua for the one value `v`.
    pub fn propose(&mut self, v: u64) -> Reply {
        let inv = Propose {
            key: self.key,
            first: v,
            last: v,
        }
        .invocation();
        match run(self.conn, &inv) {
            Ok((1, text)) => counter_or_odd(&text, Reply::Accepted),
            Ok((0, text)) => counter_or_odd(&text, Reply::Refused),
            Ok((2, _)) => Reply::NoVote,
            other => odd(other),
        }
    }

    /// heal.lua mark, of a key read missing; the mark's text too.
    pub fn mark(&mut self, token: &str) -> (Reply, String) {
        let step = HealStep::Mark {
            state: String::new(),
            token: token.to_string(),
        };
        match self.heal(&step) {
            Ok((1, text)) => (Reply::Marked(self.marks.key(&text)), text),
            other => (self.heal_reply(other), String::new()),
        }
    }

    /// heal.lua ripe, of the exact mark `state`.
    pub fn ripe(&mut self, state: &str, ripe: bool) -> Reply {
        let step = HealStep::Ripe {
            state: state.to_string(),
            quarantine: quarantine(ripe),
        };
        match self.heal(&step) {
            Ok((1, text)) => Reply::Ripe(self.marks.key(&text)),
            other => self.heal_reply(other),
        }
    }

    /// heal.lua repair of the exact mark `state` to `counter`.
    pub fn repair(&mut self, state: &str, counter: u64, ripe: bool) -> Reply {
        let step = HealStep::Repair {
            state: state.to_string(),
            counter,
            quarantine: quarantine(ripe),
        };
        match self.heal(&step) {
            Ok((1, text)) => counter_or_odd(&text, Reply::Repaired),
            other => self.heal_reply(other),
        }
    }

    fn heal(&mut self, step: &HealStep) -> Result<(i64, String), String> {
        let inv = Heal {
            key: self.key,
            step,
        }
        .invocation();
        run(self.conn, &inv)
    }

    /// heal.lua's replies that write nothing.
    fn heal_reply(&self, reply: Result<(i64, String), String>) -> Reply {
        match reply {
            Ok((2, _)) => Reply::Quarantined,
            Ok((0, text)) => Reply::Else(self.marks.key(&text)),
            other => odd(other),
        }
    }
}

fn counter_or_odd(text: &str, f: fn(u64) -> Reply) -> Reply {
    text.parse()
        .map_or_else(|_| Reply::Odd(format!("not a counter: {text}")), f)
}

fn odd(reply: Result<(i64, String), String>) -> Reply {
    match reply {
        Ok((code, text)) => Reply::Odd(format!("{{{code}, {text}}}")),
        Err(e) => Reply::Odd(e),
    }
}

/// Runs a script; its reply `{code, text}` (`text` empty when absent).
fn run(
    conn: &mut redis::Connection,
    inv: &redis::ScriptInvocation,
) -> Result<(i64, String), String> {
    use redis::Value;
    let items = match inv.invoke::<Value>(conn) {
        Ok(Value::Array(items)) => items,
        Ok(other) => return Err(format!("{other:?}")),
        Err(e) => return Err(e.to_string()),
    };
    let text = |v: &Value| match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::Int(i) => Some(i.to_string()),
        _ => None,
    };
    match items.as_slice() {
        [Value::Int(code)] => Ok((*code, String::new())),
        [Value::Int(code), v] => text(v)
            .map(|t| (*code, t))
            .ok_or_else(|| format!("{items:?}")),
        _ => Err(format!("{items:?}")),
    }
}
