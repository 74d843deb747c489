//! What waiting cannot cure ends a command at once, with one line and its
//! exit status, even a command that would wait forever for what passes
//! (`run` and `lock` without `--wait`): the outer bound of the test is
//! reached only if it was retried.

use super::*;

/// Runs `yaraus --redis URL ARGS` with `env`; asserts its status and that
/// its stderr is one line containing `says`.
fn fails_at_once(url: &str, args: &[&str], env: &[(&str, &str)], code: i32, says: &str) {
    let mut all = vec!["--redis", url];
    all.extend(args);
    let out = run_yaraus(&all, env, ENDS_WITHIN);
    assert_eq!(out.code, Some(code), "{args:?}: {}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
    assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
}

/// The commands that wait for what passes: forever (`run`, `lock`), or for
/// the default bound of a one-shot command.
const WAITING: [&[&str]; 3] = [
    &["run", "--", "true"],
    &["lock", "nightly", "--", "true"],
    &["seq", "next", "orders", "--allow-volatile"],
];

#[test]
fn a_wrong_password_fails_at_once() {
    let server = RedisServer::start_with(ServerOptions {
        requirepass: Some("right".into()),
        ..Default::default()
    });
    // The password from the environment: one in the URL is warned of.
    let socket = server.socket_path().unwrap().to_str().unwrap();
    let url = format!("unix://{socket}?ns={NS}");
    for args in WAITING {
        let wrong = [("YARAUS_REDIS_PASSWORD", "wrong")];
        fails_at_once(&url, args, &wrong, 69, "authentication");
    }
}

#[test]
fn a_key_of_another_type_fails_at_once() {
    let server = RedisServer::start();
    // (A string at a lock's key is a lock: redis-py's tokens are strings.)
    for key in ["t:ids", "nightly", "t:seq:orders"] {
        server.cmd(&["HSET", key, "something", "else"]);
    }
    let url = server.url_ns(NS);
    for (args, says) in WAITING
        .into_iter()
        .zip(["t:ids", "nightly", "t:seq:orders"])
    {
        fails_at_once(&url, args, &[], 125, says);
    }
}

#[test]
fn a_server_that_does_not_speak_redis_fails_at_once() {
    // A real server of another protocol: it answers every connection with
    // an HTTP error and hangs up.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::Write;
        for mut stream in listener.incoming().flatten() {
            let _ = stream.write_all(b"HTTP/1.0 400 Bad Request\r\n\r\n");
        }
    });
    let url = format!("redis://127.0.0.1:{port}/0");
    let says = format!("not a Redis server at 127.0.0.1:{port}");
    for args in WAITING {
        fails_at_once(&url, args, &[], 69, &says);
    }
}
