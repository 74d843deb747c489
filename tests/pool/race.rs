//! Two `init`s racing, driven step by step: the first init's decision
//! (`resize.lua`) and its removal (`shrink.lua`) sent through the library's
//! own builders, the other init run whole as the command between them.

use super::*;
use yaraus::lease::PoolKeys;
use yaraus::lease::script::{Resize, Shrink};

/// The ids `ns:ids` holds, by number.
fn ids_of(s: &RedisServer) -> BTreeSet<String> {
    zset(s, "t:ids").into_keys().collect()
}

fn ids(range: std::ops::RangeInclusive<u64>) -> BTreeSet<String> {
    range.map(enc).collect()
}

/// One init decides to shrink 1..2 to 1..1; before it removes id 2,
/// another grows the pool to 1..3; then the first sends its removal. No id
/// of 1..3 may be lost: the removal was decided for a range that no longer
/// stands, and an init to 1..3 run afterwards finds the whole of 1..3.
#[test]
fn two_inits_racing_lose_no_id_of_the_range_that_stands() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init", "--max", "2"]);
    let keys = PoolKeys::new("t");
    let mut conn = s.conn();

    let decided: Vec<redis::Value> = Resize {
        keys: &keys,
        min: 1,
        max: 1,
        force: false,
    }
    .invocation()
    .invoke(&mut conn)
    .expect("resize.lua");
    assert_eq!(decided, vec![redis::Value::Int(1)], "the shrink is decided");

    let out = yaraus_ok(&["--redis", &url, "init", "--max", "3"]);
    assert!(init_report(&out).contains("to 1..3"), "{out:#?}");
    assert_eq!(ids_of(&s), ids(1..=3));

    let removed: i64 = Shrink {
        keys: &keys,
        decided: (1, 1),
        ids: 2..=2,
    }
    .invocation()
    .invoke(&mut conn)
    .expect("shrink.lua");
    assert_eq!(removed, -1, "the removal must see it was overtaken");
    assert_eq!(ids_of(&s), ids(1..=3), "an id was lost");

    let out = yaraus_ok(&["--redis", &url, "init", "--max", "3"]);
    assert!(init_report(&out).starts_with("already initialized: ids "));
    let st = hash(&s, "t:stats");
    assert_eq!((st["min"].as_str(), st["max"].as_str()), ("1", "3"));
}

/// A pool whose recorded range lacks an id inside it (what the race above
/// left before it was fixed, or a Go tool's pool with a gap): init to that
/// range puts it back, free, and leaves every lease as it was.
#[test]
fn init_puts_back_an_id_missing_from_inside_its_range_keeping_leases() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init", "--max", "5"]);
    let now = server_secs(&s) as f64;
    lease(&s, "t", 1, now + 600.0, "holder-1");
    lease(&s, "t", 5, now + 600.0, "holder-5");
    let _: i64 = s.query(&["ZREM", "t:ids", &enc(3)]);
    let mut want = zset(&s, "t:ids");
    let clients = hash(&s, "t:clients");

    let out = yaraus_ok(&["--redis", &url, "init", "--max", "5"]);
    assert_eq!(
        init_report(&out),
        "resized t:ids from 1..5 to 1..5: 1 ids added, 0 removed"
    );
    want.insert(enc(3), "0".into());
    assert_eq!(zset(&s, "t:ids"), want);
    assert_eq!(hash(&s, "t:clients"), clients);
    let out = yaraus_ok(&["--redis", &url, "init", "--max", "5"]);
    assert!(init_report(&out).starts_with("already initialized: ids "));
}
