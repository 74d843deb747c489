//! redis-rs (the crate and version of Cargo.toml) against `seq serve`, in
//! RESP2 and RESP3 (`?protocol=resp3`, which sends `HELLO 3` on
//! connecting), blocking and async multiplexed: ids into `u64` increasing
//! across two names, one at a time, in an atomic pipeline (MULTI … EXEC)
//! and a plain one; above 2^63 − 1 into `u64` exactly; `GET` of nothing
//! into `None`.

use super::*;

const BIG: u64 = 9_223_372_036_854_775_805;

fn check_blocking(port: u16, query: &str, last: &mut [u64; 2], big: &mut u64) {
    let url = format!("redis://127.0.0.1:{port}/{query}");
    let mut con = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    // HELLO without a version answers in the protocol the connection speaks.
    let hello: redis::Value = redis::cmd("HELLO").query(&mut con).unwrap();
    let resp3 = matches!(hello, redis::Value::Map(_));
    assert_eq!(resp3, query.contains("resp3"), "{url}: {hello:?}");
    let incr = |con: &mut redis::Connection, name: &str| -> u64 {
        redis::cmd("INCR")
            .arg(name)
            .query(con)
            .unwrap_or_else(|e| panic!("{url}: {e}"))
    };
    for _ in 0..5 {
        for (i, name) in ["a", "b"].into_iter().enumerate() {
            let id = incr(&mut con, name);
            assert!(id > last[i], "{url}: {name} {id} after {}", last[i]);
            last[i] = id;
        }
    }
    let (a, b, a2): (u64, u64, u64) = redis::pipe()
        .atomic()
        .incr("a", 1)
        .incr("b", 1)
        .incr("a", 4)
        .query(&mut con)
        .unwrap_or_else(|e| panic!("{url}: MULTI/EXEC: {e}"));
    assert!(
        a > last[0] && b > last[1] && a2 == a + 4,
        "{url}: {a} {b} {a2}"
    );
    let (a3, b3): (u64, u64) = redis::pipe()
        .incr("a", 1)
        .incr("b", 1)
        .query(&mut con)
        .unwrap_or_else(|e| panic!("{url}: pipeline: {e}"));
    assert!(a3 > a2 && b3 > b, "{url}: {a3} {b3}");
    *last = [a3, b3];
    let nothing: Option<u64> = redis::cmd("GET").arg("nothing").query(&mut con).unwrap();
    assert_eq!(nothing, None, "{url}");
    for _ in 0..2 {
        *big += 1;
        assert_eq!(incr(&mut con, "big"), *big, "{url}");
    }
}

#[test]
fn redis_rs_blocking_in_resp2_and_resp3_and_async_in_resp3() {
    let servers = masters(3, true);
    for s in &servers {
        s.cmd(&["SET", "yaraus:seq:big", &BIG.to_string()]);
    }
    let serve = Serve::start(&servers, &[]);
    let (mut last, mut big) = ([0u64; 2], BIG);
    check_blocking(serve.port, "", &mut last, &mut big);
    check_blocking(serve.port, "?protocol=resp3", &mut last, &mut big);
    check_blocking(serve.port, "?protocol=resp2", &mut last, &mut big);
    assert!(big > i64::MAX as u64);

    let url = format!("redis://127.0.0.1:{}/?protocol=resp3", serve.port);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (a, b, big_id, nothing) = runtime.block_on(async {
        let client = redis::Client::open(url.as_str()).unwrap();
        let mut con = client
            .get_multiplexed_async_connection()
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        let (a, b): (u64, u64) = redis::pipe()
            .atomic()
            .incr("a", 1)
            .incr("b", 1)
            .query_async(&mut con)
            .await
            .unwrap();
        let big_id: u64 = redis::cmd("INCR")
            .arg("big")
            .query_async(&mut con)
            .await
            .unwrap();
        let nothing: Option<u64> = redis::cmd("GET")
            .arg("nothing")
            .query_async(&mut con)
            .await
            .unwrap();
        (a, b, big_id, nothing)
    });
    assert!(a > last[0] && b > last[1], "async: {a} {b} after {last:?}");
    assert_eq!(big_id, big + 1);
    assert_eq!(nothing, None);
}
