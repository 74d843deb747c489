//! The store both sides hold: the index's keys read back from the one
//! Redis, and the model's `Store`, projected onto one type.
//!
//! Everything the model keeps of the store is compared (`last`, and per
//! interval `count`, `who`, `transition`); besides, the config hash must
//! carry the interval the code sends, no key or member may be one the
//! model does not know of (a script writing elsewhere, or for another
//! client), and every key must expire (the scripts' PEXPIRE: the model has
//! no expiry because the keys outlive the test, see `mod.rs`).

use yaraus::index::IndexKeys;
use yaraus_models::index_model::model::{MAX_N, MAX_R, Store};

/// The store, as the model sees it.
#[derive(Debug, PartialEq)]
pub struct Held {
    pub last: u64,
    /// The config hash's interval (ms); none before the first tick.
    pub interval_ms: Option<u64>,
    /// count[n], 0 when the counter does not exist.
    pub count: [u64; MAX_N + 1],
    /// who[n][r]: replica r's rank in n, 0 when it has none.
    pub who: [[u64; MAX_R]; MAX_N + 1],
    /// transition[n]: bit r set when replica r is in the set.
    pub transition: [u8; MAX_N + 1],
    /// Keys, hash fields or set members the model knows nothing of.
    pub unknown: Vec<String>,
    /// Keys that never expire.
    pub lasting: Vec<String>,
}

impl Held {
    /// Nothing written.
    fn empty() -> Held {
        Held {
            last: 0,
            interval_ms: None,
            count: [0; MAX_N + 1],
            who: [[0; MAX_R]; MAX_N + 1],
            transition: [0; MAX_N + 1],
            unknown: Vec::new(),
            lasting: Vec::new(),
        }
    }

    /// The model's store, with the interval the code writes once ticked.
    pub fn of(store: &Store, interval_ms: u64) -> Held {
        let mut held = Held::empty();
        held.last = store.last.into();
        held.interval_ms = (store.last > 0).then_some(interval_ms);
        held.count = store.count.map(u64::from);
        for (n, ranks) in store.who.iter().enumerate() {
            held.who[n] = ranks.map(u64::from);
        }
        held.transition = store.transition;
        held
    }

    /// What the index's keys hold on `conn`; `clients[r]` is replica r's
    /// client id.
    pub fn read(conn: &mut redis::Connection, keys: &IndexKeys, clients: &[String]) -> Held {
        let mut names: Vec<String> = redis::cmd("KEYS").arg("*").query(conn).expect("KEYS");
        names.sort();
        let mut pipe = redis::pipe();
        pipe.hgetall(keys.config());
        for n in 0..=MAX_N as u64 {
            pipe.get(keys.count(n))
                .hgetall(keys.who(n))
                .smembers(keys.transition(n));
        }
        for name in &names {
            pipe.pttl(name);
        }
        let replies: Vec<redis::Value> = pipe.query(conn).expect("reading the index's keys");
        let mut replies = replies.into_iter();
        let mut next = || replies.next().expect("one reply per command");

        let mut held = Held::empty();
        let config: Vec<(String, String)> = parse(next());
        for (field, value) in config {
            match field.as_str() {
                "last" => held.last = number(&value),
                "interval" => held.interval_ms = Some(number(&value)),
                _ => held.unknown.push(format!("{} {field}", keys.config())),
            }
        }
        let rank_of = |client: &str| clients.iter().position(|c| c == client);
        for n in 0..=MAX_N {
            let count: Option<String> = parse(next());
            held.count[n] = count.map_or(0, |c| number(&c));
            let who: Vec<(String, String)> = parse(next());
            for (client, rank) in who {
                match rank_of(&client) {
                    Some(r) => held.who[n][r] = number(&rank),
                    None => held
                        .unknown
                        .push(format!("{} {client}", keys.who(n as u64))),
                }
            }
            let members: Vec<String> = parse(next());
            for client in members {
                match rank_of(&client) {
                    Some(r) => held.transition[n] |= 1 << r,
                    None => held
                        .unknown
                        .push(format!("{} {client}", keys.transition(n as u64))),
                }
            }
        }
        let known: Vec<String> = std::iter::once(keys.config())
            .chain(
                (0..=MAX_N as u64).flat_map(|n| [keys.count(n), keys.who(n), keys.transition(n)]),
            )
            .collect();
        for name in names {
            let ttl: i64 = parse(next());
            if ttl == -1 {
                held.lasting.push(name.clone());
            }
            if !known.contains(&name) {
                held.unknown.push(name);
            }
        }
        held
    }
}

fn parse<T: redis::FromRedisValue>(v: redis::Value) -> T {
    redis::from_redis_value(v.clone()).unwrap_or_else(|e| panic!("{v:?}: {e}"))
}

fn number(s: &str) -> u64 {
    s.parse()
        .unwrap_or_else(|_| panic!("{s:?} where the index keeps a number"))
}
