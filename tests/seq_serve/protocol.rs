//! What one client sees: the commands as Redis answers them, AUTH, ids
//! exact at 2^63 and stopping at 2^64, a pipeline answered in order, and
//! the cap on the ids of a round.

use super::*;

#[test]
fn commands_answer_as_redis_does() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let mut c = serve.client();
    assert_eq!(c.send(&["GET", "orders"]), Reply::Bulk(None));
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(1));
    assert_eq!(c.send(&["incrby", "orders", "10"]), Reply::Int(11));
    assert_eq!(c.send(&["GET", "orders"]), bulk("11"));
    for s in &servers {
        assert_eq!(s.query::<String>(&["GET", KEY]), "11");
    }
    for bad in ["0", "-1", "abc", "1.5", "+3", "18446744073709551616"] {
        let e = c.send(&["INCRBY", "orders", bad]);
        assert!(
            e.error().starts_with("ERR the increment must be"),
            "{bad}: {e:?}"
        );
    }
    assert!(c.send(&["INCR", ""]).error().contains("must not be empty"));
    assert!(
        c.send(&["INCR", &"n".repeat(513)])
            .error()
            .contains("longer than 512")
    );
    assert_eq!(c.send(&["GET", "orders"]), bulk("11"), "bad requests wrote");

    assert_eq!(c.send(&["PING"]), status("PONG"));
    assert_eq!(c.send(&["PING", "hi there"]), bulk("hi there"));
    assert_eq!(c.send(&["ECHO", "x\r\ny"]), bulk("x\r\ny"));
    assert_eq!(c.send(&["SELECT", "0"]), status("OK"));
    assert!(
        c.send(&["SELECT", "1"])
            .error()
            .starts_with("ERR DB index is out of range")
    );
    assert_eq!(c.send(&["CLIENT", "SETNAME", "worker-1"]), status("OK"));
    assert_eq!(c.send(&["CLIENT", "GETNAME"]), bulk("worker-1"));
    assert_eq!(
        c.send(&["CLIENT", "SETINFO", "lib-name", "x"]),
        status("OK")
    );
    let Reply::Array(hello) = c.send(&["HELLO", "2"]) else {
        panic!("HELLO is an array")
    };
    assert_eq!(hello[..2], [bulk("server"), bulk("yaraus")]);
    assert!(c.send(&["HELLO", "4"]).error().starts_with("NOPROTO"));
    assert!(
        c.send(&["AUTH", "x"])
            .error()
            .contains("without any password configured")
    );
    assert!(matches!(c.send(&["COMMAND", "COUNT"]), Reply::Int(n) if n > 0));
    assert!(c.send(&["COMMAND", "DOCS"]).error().starts_with("ERR"));
    assert_eq!(
        c.send(&["CONFIG", "GET", "appendonly"]),
        Reply::Array(vec![bulk("appendonly"), bulk("yes")])
    );
    assert_eq!(
        c.send(&["SET", "orders", "1"]).error(),
        "ERR unknown command 'SET', with args beginning with: 'orders' '1'"
    );
    assert_eq!(
        c.send(&["INCR"]).error(),
        "ERR wrong number of arguments for 'incr' command"
    );
    // Inline commands, as typed into telnet.
    c.raw(b"PING\r\nINCR orders\r\n");
    assert_eq!(c.read(), Some(status("PONG")));
    assert_eq!(c.read(), Some(Reply::Int(12)));

    // A sequence error is one -ERR line for its requests; others go on.
    for s in &servers {
        s.cmd(&["HSET", "yaraus:seq:hashed", "a", "1"]);
    }
    let e = c.send(&["INCR", "hashed"]);
    assert!(
        e.error().starts_with("ERR ") && e.error().contains("is a hash, not a counter"),
        "{e:?}"
    );
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(13));

    let requests = serve.stat("orders", "requests");
    assert_eq!(requests, 4.0);
    assert_eq!(serve.stat("hashed", "errors"), 1.0);
    assert_eq!(c.send(&["QUIT"]), status("OK"));
    assert!(c.closed());
}

#[test]
fn a_password_on_the_command_line_is_warned_of_and_one_from_the_environment_is_not() {
    let servers = masters(3, true);
    let argv = Serve::start_env(&servers, &["--requirepass", "s3cret"], &[]);
    let env = Serve::start_env(&servers, &[], &[("YARAUS_SEQ_PASSWORD", "s3cret")]);
    let warning = "--requirepass is on the command line";
    assert!(argv.run.log().contains(warning), "{}", argv.run.log());
    assert!(!env.run.log().contains(warning), "{}", env.run.log());
    assert!(!argv.run.log().contains("s3cret") && !env.run.log().contains("s3cret"));
}

#[test]
fn a_password_is_required_before_anything_else() {
    let servers = masters(3, true);
    let serve = Serve::start_env(&servers, &[], &[("YARAUS_SEQ_PASSWORD", "s3cret")]);
    let mut c = serve.client();
    assert_eq!(
        c.send(&["INCR", "orders"]).error(),
        "NOAUTH Authentication required."
    );
    assert!(c.send(&["PING"]).error().starts_with("NOAUTH"));
    assert!(c.send(&["AUTH", "wrong"]).error().starts_with("WRONGPASS"));
    assert!(c.send(&["HELLO", "2"]).error().starts_with("NOAUTH"));
    assert!(
        c.send(&["AUTH", "bob", "s3cret"])
            .error()
            .starts_with("WRONGPASS")
    );
    assert_eq!(c.send(&["AUTH", "s3cret"]), status("OK"));
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(1));
    let mut d = serve.client();
    assert!(matches!(
        d.send(&["HELLO", "2", "AUTH", "default", "s3cret"]),
        Reply::Array(_)
    ));
    assert_eq!(d.send(&["INCR", "orders"]), Reply::Int(2));
    assert!(
        !serve.run.log().contains("s3cret"),
        "the password was logged"
    );
}

#[test]
fn ids_stay_exact_at_2_to_the_63_and_stop_at_2_to_the_64() {
    let servers = masters(3, true);
    for s in &servers {
        s.cmd(&["SET", "yaraus:seq:big", "9223372036854775797"]);
        s.cmd(&["SET", "yaraus:seq:top", "18446744073709551610"]);
    }
    let serve = Serve::start(&servers, &[]);
    let mut c = serve.client();
    // 2^63 - 10, exactly; then past i64: the same digits as a bulk string.
    assert_eq!(c.send(&["INCR", "big"]), Reply::Int(9223372036854775798));
    assert_eq!(c.send(&["INCRBY", "big", "9"]), Reply::Int(i64::MAX));
    assert_eq!(c.send(&["INCR", "big"]), bulk("9223372036854775808"));
    assert_eq!(c.send(&["GET", "big"]), bulk("9223372036854775808"));

    // Past 2^64 - 1: an error, and no node was written.
    for k in ["10", "6"] {
        let e = c.send(&["INCRBY", "top", k]);
        assert!(e.error().contains("18446744073709551615"), "{e:?}");
    }
    for s in &servers {
        assert_eq!(
            s.query::<String>(&["GET", "yaraus:seq:top"]),
            "18446744073709551610"
        );
    }
    assert_eq!(
        c.send(&["INCRBY", "top", "5"]),
        bulk("18446744073709551615")
    );
    assert!(
        c.send(&["INCR", "top"])
            .error()
            .contains("18446744073709551615")
    );
    assert_eq!(c.send(&["GET", "top"]), bulk("18446744073709551615"));
}

#[test]
fn a_pipeline_is_answered_in_order_and_shares_rounds() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let mut c = serve.client();
    // More than a connection takes at once (256), mixed with other commands.
    let mut burst = Vec::new();
    for _ in 0..300 {
        burst.extend_from_slice(b"*2\r\n$4\r\nINCR\r\n$6\r\norders\r\nPING\r\n");
    }
    c.raw(&burst);
    let mut last = 0;
    for _ in 0..300 {
        let id = c.read().unwrap().id().unwrap();
        assert!(id > last, "{id} after {last}");
        last = id;
        assert_eq!(c.read(), Some(status("PONG")));
    }
    assert_eq!(last, 300);
    let rounds = serve.stat("orders", "rounds");
    assert!(rounds <= 10.0, "300 pipelined INCRs took {rounds} rounds");
}

#[test]
fn max_batch_caps_the_ids_of_a_round_but_never_splits_a_request() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &["--max-batch", "3"]);
    let mut c = serve.client();
    let mut burst = Vec::new();
    for _ in 0..10 {
        burst.extend_from_slice(b"INCR orders\r\n");
    }
    burst.extend_from_slice(b"INCRBY orders 7\r\nINCR orders\r\n");
    c.raw(&burst);
    let ids: Vec<u64> = (0..12).map(|_| c.read().unwrap().id().unwrap()).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17, 18]);
    assert!(serve.stat("orders", "batch_max") <= 3.0);
    // 10 INCRs at 3 a round, the 7 alone, the last INCR: at least 6 rounds.
    assert!(serve.stat("orders", "rounds") >= 6.0);
}

#[test]
fn a_sequence_name_is_printable_text_of_1_to_512_bytes_and_a_bad_one_consumes_nothing() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let mut c = serve.client();
    // Any text without control characters: spaces, letters of any
    // script, symbols, 512 bytes of two-byte letters.
    let longest = "é".repeat(256);
    for name in ["orders 2024", "заказы", "订单:2024", "🧾", longest.as_str()] {
        assert_eq!(c.send(&["INCR", name]), Reply::Int(1), "{name}");
    }
    let control = [
        ("a\nb", "U+000A at byte 1"),
        ("\0", "U+0000 at byte 0"),
        ("tab\t", "U+0009 at byte 3"),
        ("\u{1b}[31mred", "U+001B at byte 0"),
        ("del\u{7f}", "U+007F at byte 3"),
        ("é\u{85}", "U+0085 at byte 2"),
        ("x\u{9f}", "U+009F at byte 1"),
    ];
    for (name, says) in control {
        for req in [&["INCR", name][..], &["INCRBY", name, "2"], &["GET", name]] {
            let e = c.send(req);
            assert!(
                e.error()
                    .starts_with("ERR the sequence name must not contain control characters")
                    && e.error().contains(says),
                "{req:?}: {e:?}"
            );
        }
        // In a transaction: refused while queuing, and EXEC runs nothing.
        assert_eq!(c.send(&["MULTI"]), status("OK"));
        assert_eq!(c.send(&["INCR", "orders 2024"]), status("QUEUED"));
        assert!(c.send(&["INCR", name]).error().contains(says));
        assert!(c.send(&["EXEC"]).error().starts_with("EXECABORT"));
    }
    let too_long = format!("x{longest}");
    assert!(
        c.send(&["INCR", &too_long])
            .error()
            .contains("longer than 512")
    );
    c.raw(b"*2\r\n$4\r\nINCR\r\n$2\r\n\xff\xfe\r\n");
    assert_eq!(
        c.read().unwrap().error(),
        "ERR the sequence name must be UTF-8 text"
    );
    // Nothing but the five good names reached a node.
    for s in &servers {
        let mut keys = s.query::<Vec<String>>(&["KEYS", "*"]);
        keys.retain(|k| k.starts_with("yaraus:seq:"));
        assert_eq!(keys.len(), 5, "{keys:?}");
    }
    assert_eq!(c.send(&["INCR", "orders 2024"]), Reply::Int(2));
}

/// Redis answers a connection's requests in order, with their effects in
/// order: a GET pipelined after an INCR sees it, whether the INCR's round
/// is still running or not, and in a transaction after it too.
#[test]
fn a_pipelined_get_sees_the_incr_sent_before_it() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let mut c = serve.client();
    let mut burst = Vec::new();
    for _ in 0..500 {
        burst.extend_from_slice(b"INCR orders\r\nGET orders\r\n");
    }
    c.raw(&burst);
    let mut stale = Vec::new();
    for _ in 0..500 {
        let incr = c.read().unwrap().id().unwrap();
        // Null: no node held the sequence yet, older than any INCR.
        let get = match c.read().unwrap() {
            Reply::Bulk(None) => 0,
            reply => reply.id().unwrap(),
        };
        if get < incr {
            stale.push((incr, get));
        }
    }
    assert!(stale.is_empty(), "GETs older than their INCR: {stale:?}");
    // Pipelined INCRs still share rounds: 500 requests, far fewer rounds.
    let rounds = serve.stat("orders", "rounds");
    assert!(rounds < 500.0, "500 pipelined INCRs took {rounds} rounds");

    // A GET in a transaction after an INCR sent before the MULTI.
    let mut burst = Vec::new();
    for _ in 0..100 {
        burst.extend_from_slice(b"INCR orders\r\nMULTI\r\nGET orders\r\nEXEC\r\n");
    }
    c.raw(&burst);
    for _ in 0..100 {
        let incr = c.read().unwrap().id().unwrap();
        assert_eq!(c.read(), Some(status("OK")));
        assert_eq!(c.read(), Some(status("QUEUED")));
        let Some(Reply::Array(got)) = c.read() else {
            panic!("EXEC is an array")
        };
        let get = got[0].id().unwrap();
        assert!(get >= incr, "GET {get} in EXEC after INCR {incr}");
    }
}
