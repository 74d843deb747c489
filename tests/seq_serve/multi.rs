//! MULTI / EXEC / DISCARD as Redis runs them, checked on the real nodes:
//! queued requests touch no node before EXEC; EXEC runs them in order in
//! one round and replies the array; a refusal while queuing aborts EXEC
//! and, like DISCARD, consumes no id (the counters on the nodes are read);
//! WATCH is refused; the errors Redis gives for nesting and strays.

use super::*;

/// The counter of `name` on every node (None where it is missing).
fn counters(servers: &[common::RedisServer], name: &str) -> Vec<Option<String>> {
    let key = format!("yaraus:seq:{name}");
    servers
        .iter()
        .map(|s| s.query::<Option<String>>(&["GET", &key]))
        .collect()
}

#[test]
fn exec_runs_the_queue_in_order_in_one_round_and_nothing_before() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let mut c = serve.client();
    assert_eq!(c.send(&["MULTI"]), status("OK"));
    for req in [
        &["INCR", "orders"][..],
        &["INCRBY", "orders", "5"],
        &["GET", "orders"],
        &["PING"],
        &["INCR", "other"],
    ] {
        assert_eq!(c.send(req), status("QUEUED"), "{req:?}");
    }
    assert_eq!(counters(&servers, "orders"), [None, None, None]);
    assert_eq!(
        c.send(&["EXEC"]),
        Reply::Array(vec![
            Reply::Int(1),
            Reply::Int(6),
            bulk("6"),
            status("PONG"),
            Reply::Int(1)
        ])
    );
    assert_eq!(
        serve.stat("orders", "rounds"),
        1.0,
        "INCR and INCRBY in one round"
    );
    assert_eq!(counters(&servers, "orders"), vec![Some("6".into()); 3]);

    // Pipelined: a request after EXEC comes after the transaction's ids.
    c.raw(b"MULTI\r\nINCR orders\r\nINCR orders\r\nEXEC\r\nINCR orders\r\n");
    assert_eq!(c.read(), Some(status("OK")));
    assert_eq!(c.read(), Some(status("QUEUED")));
    assert_eq!(c.read(), Some(status("QUEUED")));
    assert_eq!(
        c.read(),
        Some(Reply::Array(vec![Reply::Int(7), Reply::Int(8)]))
    );
    assert_eq!(c.read(), Some(Reply::Int(9)));

    // An error at EXEC time is that element, as in Redis; the rest run.
    for s in &servers {
        s.cmd(&["HSET", "yaraus:seq:hashed", "a", "1"]);
    }
    c.send(&["MULTI"]);
    c.send(&["INCR", "hashed"]);
    c.send(&["INCR", "orders"]);
    let Reply::Array(replies) = c.send(&["EXEC"]) else {
        panic!("EXEC is an array")
    };
    assert!(replies[0].error().contains("is a hash"), "{replies:?}");
    assert_eq!(replies[1], Reply::Int(10));

    // In RESP3 too, where GET of nothing is the null.
    c.send(&["HELLO", "3"]);
    c.send(&["MULTI"]);
    c.send(&["GET", "none"]);
    c.send(&["INCR", "orders"]);
    assert_eq!(
        c.send(&["EXEC"]),
        Reply::Array(vec![Reply::Null, Reply::Int(11)])
    );
}

#[test]
fn discarded_and_aborted_transactions_consume_no_id() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let mut c = serve.client();
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(1));
    let before = counters(&servers, "orders");
    assert_eq!(before, vec![Some("1".into()); 3]);

    c.send(&["MULTI"]);
    c.send(&["INCR", "orders"]);
    c.send(&["INCRBY", "orders", "100"]);
    assert_eq!(c.send(&["DISCARD"]), status("OK"));
    assert_eq!(counters(&servers, "orders"), before);

    // Each refusal while queuing aborts the EXEC that follows.
    let refusals: [&[&str]; 6] = [
        &["INCRBY", "orders", "abc"],
        &["INCRBY", "orders", "0"],
        &["INCR", ""],
        &["INCR"],
        &["SET", "orders", "5"],
        &["AUTH", "x"],
    ];
    for bad in refusals {
        c.send(&["MULTI"]);
        assert_eq!(c.send(&["INCR", "orders"]), status("QUEUED"));
        let e = c.send(bad);
        assert!(e.error().starts_with("ERR"), "{bad:?}: {e:?}");
        assert_eq!(c.send(&["INCR", "orders"]), status("QUEUED"));
        assert_eq!(
            c.send(&["EXEC"]).error(),
            "EXECABORT Transaction discarded because of previous errors.",
            "{bad:?}"
        );
        assert_eq!(counters(&servers, "orders"), before, "{bad:?} consumed ids");
    }
    // The next id is the one after the last handed out: none was burnt.
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(2));
    assert_eq!(serve.stat("orders", "rounds"), 2.0);
}

#[test]
fn stray_nested_and_watching_requests_get_redis_errors() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let mut c = serve.client();
    assert_eq!(c.send(&["EXEC"]).error(), "ERR EXEC without MULTI");
    assert_eq!(c.send(&["DISCARD"]).error(), "ERR DISCARD without MULTI");
    let e = c.send(&["WATCH", "orders"]);
    assert!(e.error().starts_with("ERR WATCH is not supported"), "{e:?}");
    assert_eq!(c.send(&["UNWATCH"]), status("OK"));
    assert_eq!(c.send(&["MULTI"]), status("OK"));
    assert_eq!(
        c.send(&["MULTI"]).error(),
        "ERR MULTI calls can not be nested"
    );
    assert_eq!(
        c.send(&["WATCH", "orders"]).error(),
        "ERR WATCH inside MULTI is not allowed"
    );
    assert_eq!(c.send(&["INCR", "orders"]), status("QUEUED"));
    // Neither aborts the transaction, as in Redis.
    assert_eq!(c.send(&["EXEC"]), Reply::Array(vec![Reply::Int(1)]));
    assert_eq!(c.send(&["EXEC"]).error(), "ERR EXEC without MULTI");
    // RESET leaves the transaction; QUIT inside one closes at once.
    c.send(&["MULTI"]);
    c.send(&["INCR", "orders"]);
    assert_eq!(c.send(&["RESET"]), status("RESET"));
    assert_eq!(c.send(&["EXEC"]).error(), "ERR EXEC without MULTI");
    c.send(&["MULTI"]);
    c.send(&["INCR", "orders"]);
    assert_eq!(c.send(&["QUIT"]), status("OK"));
    assert!(c.closed());
    assert_eq!(counters(&servers, "orders"), vec![Some("1".into()); 3]);
}
