//! The renewal script on a pool whose keys are not what it expects, through
//! the library's own invocation (`yaraus::lease::script::Renew`).
//!
//! The script checks no key's type before it works (a check costs a command
//! on every renewal): each key is first read with `redis.pcall`, which
//! answers a key of another type with an error instead of aborting the
//! script. What the type checks gave must hold all the same: a pool gone or
//! replaced is not written to and the id is reported gone; a stats or clock
//! key of another type is left alone while the renewal goes through.

use crate::common::RedisServer;
use crate::common::pool::{CLIENTS, IDS, NS, STATS, enc, init_pool, server_now};
use std::collections::BTreeMap;
use yaraus::lease::PoolKeys;
use yaraus::lease::WorkerId;
use yaraus::lease::clock_guard::Offset;
use yaraus::lease::script::Renew;

const CLOCK: &str = "t:clock";
const HOLDER: &str = "holder";
const ID: u64 = 2;
/// The horizon the holder sends: a Unix instant in milliseconds.
const HORIZON: i64 = 1_900_000_000_000;

/// A pool 1..3 whose id 2 `HOLDER` holds for a minute, with a counter and a
/// clock record already written.
fn held_pool() -> RedisServer {
    let server = RedisServer::start();
    init_pool(&server, 1, 3);
    let until = server_now(&server) + 60.0;
    server.cmd(&["ZADD", IDS, "XX", &until.to_string(), &enc(ID)]);
    server.cmd(&["HSET", CLIENTS, &enc(ID), HOLDER]);
    server.cmd(&["HINCRBY", STATS, "extend_ttl_count", "1"]);
    server.cmd(&["HSET", CLOCK, &enc(ID), "1700000000000 0 1 1700000000000"]);
    server
}

/// One renewal of id 2 by `HOLDER`, its wall clock having stepped back (so
/// that a renewal that counts writes one counter more): the reply's code,
/// and the owner it names when it refuses (its expiry when it extends).
fn renew(server: &RedisServer) -> (i64, String) {
    let keys = PoolKeys::new(NS);
    let invocation = Renew {
        keys: &keys,
        client: HOLDER,
        id: WorkerId(ID),
        ttl_ms: 60_000,
        horizon: HORIZON,
        offset: Offset { ms: 3, error_ms: 1 },
        stepped_back: true,
    }
    .invocation();
    let (code, owner, _now): (i64, redis::Value, i64) = invocation
        .invoke(&mut server.conn())
        .expect("the renewal script answers");
    let owner = match (code, owner) {
        (0, owner) => redis::from_redis_value(owner).expect("an owner or ''"),
        _ => String::new(),
    };
    (code, owner)
}

fn field(server: &RedisServer, key: &str, field: &str) -> Option<String> {
    server.query(&["HGET", key, field])
}

#[test]
fn a_pool_gone_or_replaced_is_not_written_to_and_the_id_is_gone() {
    let cases: [(&str, &[&str]); 4] = [
        ("ids deleted", &["DEL", IDS]),
        ("owners deleted", &["DEL", CLIENTS]),
        ("ids a string", &["SET", IDS, "not a pool"]),
        ("owners a string", &["SET", CLIENTS, "not a hash"]),
    ];
    for (case, change) in cases {
        let server = held_pool();
        if change[0] == "SET" {
            server.cmd(&["DEL", change[1]]);
        }
        server.cmd(change);
        let before: BTreeMap<String, String> = server.snapshot();
        assert_eq!(renew(&server), (0, String::new()), "{case}");
        assert_eq!(server.snapshot(), before, "{case}: the renewal wrote");
    }
}

#[test]
fn a_stats_or_clock_key_of_another_type_is_left_alone_and_the_lease_extended() {
    // The stats a list: nothing counted, the lease and its record written.
    let server = held_pool();
    server.cmd(&["DEL", STATS]);
    server.cmd(&["RPUSH", STATS, "not a hash"]);
    let expiry: f64 = server.query(&["ZSCORE", IDS, &enc(ID)]);
    assert_eq!(renew(&server), (1, String::new()));
    let extended: f64 = server.query(&["ZSCORE", IDS, &enc(ID)]);
    assert!(extended > expiry, "{extended} after {expiry}");
    let list: Vec<String> = server.query(&["LRANGE", STATS, "0", "-1"]);
    assert_eq!(list, ["not a hash"]);
    let record = field(&server, CLOCK, &enc(ID)).expect("a record");
    assert!(record.starts_with(&format!("{HORIZON} 3 1 ")), "{record}");

    // The clock a string: counted, the lease extended, the string kept.
    let server = held_pool();
    server.cmd(&["DEL", CLOCK]);
    server.cmd(&["SET", CLOCK, "not a hash"]);
    assert_eq!(renew(&server), (1, String::new()));
    let clock: String = server.query(&["GET", CLOCK]);
    assert_eq!(clock, "not a hash");
    for (counter, value) in [
        ("extend_ttl_count", "2"),
        ("extend_ttl_success", "1"),
        ("clock_step_back", "1"),
    ] {
        assert_eq!(
            field(&server, STATS, counter).as_deref(),
            Some(value),
            "{counter}"
        );
    }
}
