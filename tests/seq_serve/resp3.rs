//! RESP3 as a raw client sees it, byte for byte: `HELLO 3` switches the
//! connection and `HELLO 2` (or `RESET`) back; the replies whose RESP3 type
//! differs (the null, maps, verbatim text) change, the others (integers,
//! errors, bulk strings, ids above 2^63 − 1) do not; a refused `HELLO`
//! (a version other than 2 or 3, a wrong password, a syntax error) changes
//! nothing.

use super::*;

#[test]
fn hello_3_switches_the_connection_to_resp3_and_hello_2_or_reset_back() {
    let servers = masters(3, true);
    for s in &servers {
        s.cmd(&["SET", "yaraus:seq:big", "9223372036854775807"]);
    }
    let serve = Serve::start(&servers, &[]);
    let mut c = serve.client();
    // Without a version: a report, in the protocol in use (RESP2 here).
    let hello = c.send(&["HELLO"]);
    assert!(
        matches!(hello, Reply::Array(ref a) if a.len() == 14),
        "{hello:?}"
    );
    assert_eq!(*hello.field("proto"), Reply::Int(2));
    assert_eq!(c.send(&["GET", "orders"]), Reply::Bulk(None));

    let hello = c.send(&["HELLO", "3", "SETNAME", "w1"]);
    assert!(
        matches!(hello, Reply::Map(ref m) if m.len() == 7),
        "{hello:?}"
    );
    assert_eq!(*hello.field("server"), bulk("yaraus"));
    assert_eq!(*hello.field("proto"), Reply::Int(3));
    let Reply::Int(id) = *hello.field("id") else {
        panic!("id is an integer: {hello:?}")
    };
    assert_eq!(c.send(&["CLIENT", "ID"]), Reply::Int(id));
    assert_eq!(*hello.field("modules"), Reply::Array(vec![]));
    assert_eq!(c.send(&["CLIENT", "GETNAME"]), bulk("w1"));
    // What RESP3 changes...
    assert_eq!(c.send(&["GET", "orders"]), Reply::Null);
    assert_eq!(
        c.send(&["CONFIG", "GET", "appendonly"]),
        Reply::Map(vec![(bulk("appendonly"), bulk("yes"))])
    );
    let Reply::Verbatim(format, text) = c.send(&["INFO", "health"]) else {
        panic!("INFO is verbatim text in RESP3")
    };
    assert_eq!(format, "txt");
    assert!(text.starts_with("# Health\r\n"), "{text}");
    assert_eq!(
        c.send(&["COMMAND", "INFO", "incr"]),
        Reply::Array(vec![Reply::Null])
    );
    // ...and what it does not.
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(1));
    assert_eq!(c.send(&["GET", "orders"]), bulk("1"));
    assert_eq!(c.send(&["PING"]), status("PONG"));
    assert_eq!(c.send(&["INCR", "big"]), bulk("9223372036854775808"));
    assert!(
        c.send(&["INCRBY", "orders", "0"])
            .error()
            .starts_with("ERR")
    );

    // Refusals change nothing: still RESP3.
    assert!(c.send(&["HELLO", "4"]).error().starts_with("NOPROTO"));
    assert!(c.send(&["HELLO", "1"]).error().starts_with("NOPROTO"));
    assert!(
        c.send(&["HELLO", "three"])
            .error()
            .starts_with("ERR Protocol version is not an integer")
    );
    assert!(
        c.send(&["HELLO", "2", "SETNAME"])
            .error()
            .starts_with("ERR Syntax error in HELLO option 'setname'")
    );
    assert!(
        c.send(&["HELLO", "2", "AUTH", "default", "x"])
            .error()
            .contains("without any password configured")
    );
    assert_eq!(c.send(&["GET", "nothing"]), Reply::Null);
    let hello = c.send(&["HELLO"]);
    assert_eq!(*hello.field("proto"), Reply::Int(3));

    // HELLO 2: back to RESP2.
    let hello = c.send(&["HELLO", "2"]);
    assert!(matches!(hello, Reply::Array(_)), "{hello:?}");
    assert_eq!(c.send(&["GET", "nothing"]), Reply::Bulk(None));

    // RESET: RESP2, no name, the same id.
    c.send(&["HELLO", "3"]);
    assert_eq!(c.send(&["RESET"]), status("RESET"));
    assert_eq!(c.send(&["GET", "nothing"]), Reply::Bulk(None));
    assert_eq!(c.send(&["CLIENT", "GETNAME"]), Reply::Bulk(None));
    assert_eq!(c.send(&["CLIENT", "ID"]), Reply::Int(id));
    // Another connection is still RESP2 throughout.
    assert_eq!(serve.client().send(&["GET", "nothing"]), Reply::Bulk(None));
}

#[test]
fn hello_3_authenticates_and_reset_forgets_the_password() {
    let servers = masters(3, true);
    let serve = Serve::start_env(&servers, &[], &[("YARAUS_SEQ_PASSWORD", "s3cret")]);
    let mut c = serve.client();
    assert!(
        c.send(&["HELLO", "3", "AUTH", "default", "wrong"])
            .error()
            .starts_with("WRONGPASS")
    );
    // Still RESP2 and not authenticated.
    assert_eq!(
        c.send(&["GET", "orders"]).error(),
        "NOAUTH Authentication required."
    );
    assert!(c.send(&["HELLO", "3"]).error().starts_with("NOAUTH"));
    let hello = c.send(&["HELLO", "3", "AUTH", "default", "s3cret", "SETNAME", "x"]);
    assert_eq!(*hello.field("proto"), Reply::Int(3));
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(1));
    assert_eq!(c.send(&["GET", "other"]), Reply::Null);
    assert_eq!(c.send(&["RESET"]), status("RESET"));
    assert_eq!(
        c.send(&["INCR", "orders"]).error(),
        "NOAUTH Authentication required."
    );
    assert_eq!(c.send(&["AUTH", "s3cret"]), status("OK"));
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(2));
    assert!(!serve.run.log().contains("s3cret"));
}
