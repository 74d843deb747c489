//! The lock's keys on the server, projected onto the model's, and the
//! test's clock (see `mod.rs`, "Time").

use super::answer::{counter, int, text, ticks};
use super::{FENCE_KEY, FENCE_START, KEY, Names, TICK_MS};
use redis::Value;
use std::sync::LazyLock;
use yaraus::lock::script::Inspect;
use yaraus_models::rwlock_model::{CLIENTS, Entry, Key, State};

/// What the server holds, in the model's words.
#[derive(Debug, PartialEq)]
pub struct Held {
    pub key: Seen,
    /// The fencing counter (`None`: not a counter).
    pub fence: Option<u64>,
    /// Any other key on the server (the model has none).
    pub others: Vec<String>,
}

#[derive(Debug, PartialEq)]
pub enum Seen {
    /// No key, or a sorted set of expired entries only (every script drops
    /// those first).
    Missing,
    Exclusive {
        owner: usize,
        left: u8,
    },
    /// Each client's live place or mark, ticks left.
    Shared {
        entries: [Entry; CLIENTS],
        /// Live members that are no client's (or a client's second).
        strays: Vec<String>,
        /// The key has no expiry, or expires before its last live entry.
        expiry_wrong: bool,
    },
    Strange(String),
}

pub fn project(s: &State) -> Held {
    let key = match s.key {
        Key::Missing => Seen::Missing,
        Key::Exclusive { owner, left } => Seen::Exclusive {
            owner: owner as usize,
            left,
        },
        Key::Shared(entries) => Seen::Shared {
            entries,
            strays: Vec::new(),
            expiry_wrong: false,
        },
    };
    Held {
        key,
        fence: Some(FENCE_START + u64::from(s.fence)),
        others: Vec::new(),
    }
}

/// The keys read back: inspect.lua (the read-only script of `lock
/// --info`), the key's expiry time, and the names of every key.
pub fn observe(conn: &mut redis::Connection, names: &Names) -> Held {
    let reply: Vec<Value> = Inspect {
        key: KEY,
        fence_key: FENCE_KEY,
    }
    .invocation()
    .invoke(conn)
    .expect("inspect.lua");
    let field = |i: usize| text(&reply[i]).unwrap_or_default();
    let (kind, value) = (field(0), field(1));
    let (pttl, now) = (int(&reply[2]).unwrap_or(-3), int(&reply[4]).unwrap_or(0));
    let key = match kind.as_str() {
        "none" => Seen::Missing,
        "string" => match (names.member(&value), pttl) {
            (Some((owner, false)), ms) if ms > 0 => Seen::Exclusive {
                owner,
                left: ticks(ms),
            },
            _ => Seen::Strange(format!("the string {value:?}, pttl {pttl}")),
        },
        "zset" => {
            let expiry: i64 = redis::cmd("PEXPIRETIME")
                .arg(KEY)
                .query(conn)
                .expect("PEXPIRETIME");
            shared(&reply[5..], now, expiry, names)
        }
        other => Seen::Strange(format!("a {other}")),
    };
    let mut others: Vec<String> = redis::cmd("KEYS").arg("*").query(conn).expect("KEYS");
    others.retain(|k| k != KEY && k != FENCE_KEY);
    others.sort();
    Held {
        key,
        fence: counter(&reply[3]),
        others,
    }
}

/// A sorted set's live entries (members and expiry scores, as inspect.lua
/// lists them) at `now`; the key expires at `expiry` (-1: never).
fn shared(members: &[Value], now: i64, expiry: i64, names: &Names) -> Seen {
    let mut entries = [Entry::None; CLIENTS];
    let mut strays = Vec::new();
    let mut last = None;
    for pair in members.chunks(2) {
        let (member, score) = (text(&pair[0]).unwrap_or_default(), text(&pair[1]));
        let score: i64 = score.and_then(|s| s.parse().ok()).unwrap_or(i64::MIN);
        if score <= now {
            continue;
        }
        last = last.max(Some(score));
        let left = ticks(score - now);
        match names.member(&member) {
            Some((c, mark)) if entries[c] == Entry::None => {
                entries[c] = if mark {
                    Entry::Mark(left)
                } else {
                    Entry::Place(left)
                };
            }
            _ => strays.push(member),
        }
    }
    match last {
        None if expiry == -1 => Seen::Strange("expired entries that never go".to_string()),
        None => Seen::Missing,
        Some(last) => Seen::Shared {
            entries,
            strays,
            expiry_wrong: expiry == -1 || expiry < last,
        },
    }
}

/// One tick of server time: every time stored at the key one tick earlier
/// (its expiry, and a sorted set's scores); a key whose expiry passes is
/// gone, as it would be.
static TICK: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local key, d = KEYS[1], tonumber(ARGV[1])
local at = redis.call('PEXPIRETIME', key)
if redis.call('TYPE', key)['ok'] == 'zset' then
  local entries = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
  for i = 1, #entries, 2 do
    redis.call('ZADD', key, string.format('%.0f', tonumber(entries[i + 1]) - d), entries[i])
  end
end
if at > 0 then
  redis.call('PEXPIREAT', key, string.format('%.0f', at - d))
end
return at
",
    )
});

pub fn tick(conn: &mut redis::Connection) {
    let _: i64 = TICK.key(KEY).arg(TICK_MS).invoke(conn).expect("the tick");
}
