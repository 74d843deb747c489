//! Reading the pool back: the keys and the read-only scripts, projected
//! onto the model's state, and the client names the acquires gave.

use super::{BASE_MS, LASTING_MS, UNIT_MS};
use yaraus::lease::clock_guard::ClockRecord;
use yaraus::lease::script::{Leased, Stats};
use yaraus::lease::{PoolKeys, WorkerId};
use yaraus_models::pool_model::{CLIENTS, IDS, Record, Score, State, Who};

/// The pool as the model sees it (see `mod.rs`).
#[derive(Debug, PartialEq)]
pub struct Projection {
    /// The free ids, in the order acquire takes them.
    free: Vec<u8>,
    /// The ids whose lease runs, as the listing script pages them.
    live: Vec<u8>,
    /// The clients hash.
    owners: Vec<(u8, Who)>,
    /// The clock hash.
    clocks: Vec<(u8, Record)>,
    /// The stats hash, as the stats script returns it.
    stats: Vec<(String, i64)>,
    /// The stats script's free and using counts.
    counts: (i64, i64),
    /// The stats script's records of the using ids.
    using_clocks: Vec<(u8, Record)>,
}

impl Projection {
    pub fn of(s: &State) -> Projection {
        let free: Vec<u8> = s
            .by_score()
            .into_iter()
            .filter(|&id| s.slot(id).score != Score::Live)
            .collect();
        let live = s.live();
        let ids = 1..=IDS as u8;
        let owners = ids
            .clone()
            .filter_map(|id| Some((id, Who::Client(s.slot(id).owner?))))
            .collect();
        let record = |id: u8| Some((id, s.slot(id).record?));
        let clocks = ids.clone().filter_map(record).collect();
        let using_clocks = live.iter().filter_map(|&id| record(id)).collect();
        let mut stats: Vec<(String, i64)> = s
            .counters
            .fields()
            .into_iter()
            .filter(|&(_, n)| n > 0)
            .map(|(name, n)| (name.to_string(), i64::from(n)))
            .collect();
        stats.push(("min".to_string(), 1));
        stats.push(("max".to_string(), i64::from(s.range)));
        stats.sort();
        Projection {
            counts: (free.len() as i64, live.len() as i64),
            free,
            live,
            owners,
            clocks,
            stats,
            using_clocks,
        }
    }
}

/// What the test learnt from the replies: each client's name, and the
/// record its last lease found (as the reply wrote it).
#[derive(Default)]
pub struct Read {
    names: [Option<String>; CLIENTS],
    pub found: [String; CLIENTS],
}

impl Read {
    pub fn name(&self, c: u8) -> Option<String> {
        self.names[c as usize].clone()
    }

    /// The client an acquire by `c` answered with: its name from now on
    /// when it had none and the name is no other client's.
    pub fn given(&mut self, c: u8, name: &str) -> Who {
        let unknown = !self.names.iter().flatten().any(|n| n == name);
        let slot = &mut self.names[c as usize];
        if slot.is_none() && unknown {
            *slot = Some(name.to_string());
        }
        self.who(name)
    }

    pub fn who(&self, name: &str) -> Who {
        match self.names.iter().position(|n| n.as_deref() == Some(name)) {
            Some(c) => Who::Client(c as u8),
            None => Who::Unknown(name.to_string()),
        }
    }

    pub fn observe(&mut self, conn: &mut redis::Connection, keys: &PoolKeys) -> Projection {
        let (secs, micros): (u64, u64) = redis::cmd("TIME").query(conn).expect("TIME");
        let now = secs as f64 + micros as f64 / 1e6;
        let scored: Vec<(String, f64)> = redis::cmd("ZRANGE")
            .arg(&keys.ids)
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .query(conn)
            .expect("ZRANGE");
        let free = scored
            .iter()
            .filter(|(_, score)| *score <= now)
            .map(|(member, _)| id(member))
            .collect();
        let after = format!("{secs}.{micros:06}");
        let page = Leased {
            keys,
            after: &after,
            page: IDS + 1,
        };
        let (_, _, members): (i64, String, Vec<String>) =
            page.invocation().invoke(conn).expect("leased.lua");
        let mut live: Vec<u8> = members.iter().map(|m| id(m)).collect();
        live.sort_unstable();
        let owners: Vec<(String, String)> = hgetall(conn, &keys.clients);
        let mut owners: Vec<(u8, Who)> = owners.iter().map(|(m, o)| (id(m), self.who(o))).collect();
        owners.sort_by_key(|(id, _)| *id);
        let clocks = records(hgetall(conn, &keys.clock));
        let stats: StatsReply = Stats { keys }.invocation().invoke(conn).expect("stats.lua");
        let (_, mut counters, free_count, using, _, _, _, using_clocks) = stats;
        counters.sort();
        let using_clocks = using_clocks
            .chunks(2)
            .map(|pair| (pair[0].clone(), pair[1].clone()))
            .collect();
        Projection {
            free,
            live,
            owners,
            clocks,
            stats: counters,
            counts: (free_count, using),
            using_clocks: records(using_clocks),
        }
    }
}

/// `stats.lua`'s reply: now, the stats hash, free, using, three ttls, and
/// the using ids' records (flat).
type StatsReply = (
    i64,
    Vec<(String, i64)>,
    i64,
    i64,
    String,
    String,
    String,
    Vec<String>,
);

fn hgetall(conn: &mut redis::Connection, key: &str) -> Vec<(String, String)> {
    redis::cmd("HGETALL").arg(key).query(conn).expect("HGETALL")
}

fn records(pairs: Vec<(String, String)>) -> Vec<(u8, Record)> {
    let mut out: Vec<(u8, Record)> = pairs.iter().map(|(m, r)| (id(m), record(r))).collect();
    out.sort_by_key(|(id, _)| *id);
    out
}

/// A member's id; 0 for a member that is none.
pub fn id(member: &str) -> u8 {
    WorkerId::decode(member)
        .and_then(|id| u8::try_from(id.0).ok())
        .unwrap_or(0)
}

/// A clock record in the model's units; `u8::MAX` where it is no record
/// the model writes.
pub fn record(text: &str) -> Record {
    let odd = Record {
        horizon: u8::MAX,
        writer: u8::MAX,
    };
    let Some(r) = ClockRecord::parse(text) else {
        return odd;
    };
    let h = r.horizon - BASE_MS;
    let horizon = u8::try_from(h / UNIT_MS).ok().filter(|_| h % UNIT_MS == 0);
    let writer = u8::try_from(r.offset.ms - 1).ok();
    match (horizon, writer, r.offset.error_ms) {
        (Some(horizon), Some(writer), 0) => Record { horizon, writer },
        _ => odd,
    }
}

/// Whether a lease of `ttl_ms` is the lasting one (`None`: neither).
pub fn lasts(ttl_ms: i64) -> Option<bool> {
    match ttl_ms {
        0 => Some(false),
        t if t == LASTING_MS as i64 => Some(true),
        _ => None,
    }
}

/// Waits for the server's clock to enter its next millisecond, so that the
/// next step's scores come after this one's. Polled every 100 µs rather than
/// with `common::wait_until`, whose 10 ms pause would be most of a step.
pub fn next_millisecond(conn: &mut redis::Connection) {
    let ms = |conn: &mut redis::Connection| {
        let (secs, micros): (u64, u64) = redis::cmd("TIME").query(conn).expect("TIME");
        secs * 1000 + micros / 1000
    };
    let start = ms(conn);
    while ms(conn) <= start {
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
}
