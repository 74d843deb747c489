//! A query parameter yaraus does not know is refused before Redis is
//! touched: redis-rs would ignore it, and a misspelt `ns` would put the
//! pool under the default namespace without a word.

use crate::messages::common::{RedisServer, ServerOptions};
use crate::messages::{USAGE, one_line, yaraus};

#[test]
fn an_unknown_query_parameter_is_a_usage_error_naming_it() {
    let tcp = RedisServer::start_with(ServerOptions {
        tcp: true,
        ..Default::default()
    });
    let unix = RedisServer::start();
    let port = tcp.port().expect("a TCP server");
    let socket = unix.socket_path().expect("a unix socket").display();
    let mut cases = vec![(
        format!("redis://127.0.0.1:{port}/0?nss=x"),
        "'nss' (known: ns, protocol)",
    )];
    // Over TCP, redis-rs reads the db from the path only: `?db=` would be
    // dropped and the pool written to db 0.
    cases.push((
        format!("redis://127.0.0.1:{port}/0?db=3"),
        "'db' (known: ns, protocol); over TCP the db goes in the path",
    ));
    cases.push((
        format!("unix://{socket}?ns=t&nss=x"),
        "'nss' (known: ns, db, user, pass, protocol)",
    ));
    for (url, says) in &cases {
        for cmd in [
            &["stats"][..],
            &["init", "--max", "3"],
            &["run", "--", "true"],
        ] {
            let args = [&["--redis", url.as_str()][..], cmd].concat();
            let out = yaraus(&args);
            one_line(&args, &out, USAGE, &["unknown query parameter", says]);
        }
    }
    // `init` would have created the pool under the default namespace.
    for s in [&tcp, &unix] {
        assert!(s.snapshot().is_empty(), "{:?}", s.snapshot());
    }
}
