//! Bad input to the pool commands (`init`, `run`, `stats`, `list`): each
//! mistake gives exactly one line on stderr that names it, the documented
//! exit status, and no change to Redis (compared with a snapshot taken
//! before). Passwords in URLs never reach the output.
//!
//! `run` logs its progress ("getting new id...") before it touches the pool,
//! so the cases where the pool itself is wrong pass `-q` to `run`: what is
//! checked there is that the error is one line, not that `run` is silent
//! about its progress.

use crate::common;

use std::net::TcpListener;
use std::time::Duration;

use common::{Output, RedisServer, ServerOptions};

const USAGE: i32 = 2;
const UNAVAILABLE: i32 = 69;
const SOFTWARE: i32 = 125;

/// No bad input may take longer than this; a hang fails the test.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(20);

fn yaraus_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    common::run_yaraus(args, env, COMMAND_TIMEOUT)
}

fn yaraus(args: &[&str]) -> Output {
    yaraus_env(args, &[])
}

/// Runs `args` and checks: status `code`, nothing on stdout, exactly one line
/// on stderr, containing every one of `names` (case-insensitive). Returns the line.
fn expect_error(args: &[&str], code: i32, names: &[&str]) -> String {
    let out = yaraus(args);
    check_error(args, &out, code, names)
}

fn check_error(args: &[&str], out: &Output, code: i32, names: &[&str]) -> String {
    assert_eq!(out.code, Some(code), "yaraus {args:?}: {out:#?}");
    assert_eq!(out.stdout, "", "yaraus {args:?} wrote to stdout: {out:#?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "yaraus {args:?}: expected exactly one line on stderr: {out:#?}"
    );
    let line = lines[0];
    for name in names {
        assert!(
            line.to_lowercase().contains(&name.to_lowercase()),
            "yaraus {args:?}: the error does not say {name:?}: {line}"
        );
    }
    line.to_string()
}

/// `--redis URL` followed by `rest`.
fn with_url<'a>(url: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["--redis", url];
    v.extend_from_slice(rest);
    v
}

/// Every pool command, as the argument list after the global options.
/// `quiet_run` gives `run` a `-q` (see the module comment).
fn pool_commands(quiet_run: bool) -> Vec<Vec<&'static str>> {
    let run: Vec<&str> = if quiet_run {
        vec!["-q", "run", "--", "true"]
    } else {
        vec!["run", "--", "true"]
    };
    vec![vec!["stats"], vec!["list"], vec!["init"], run]
}

/// `cmd` (from [`pool_commands`]) making one attempt (`--wait 0`): a server
/// out of reach is otherwise waited for (`run`: forever), and said so.
fn once(cmd: &[&'static str]) -> Vec<&'static str> {
    let at = cmd.iter().position(|a| !a.starts_with('-')).unwrap() + 1;
    [&cmd[..at], &["--wait", "0"], &cmd[at..]].concat()
}

/// A server holding an initialised pool `t` (ids 1..10), for "unchanged" checks.
fn server_with_pool(opts: ServerOptions<'_>) -> RedisServer {
    let s = RedisServer::start_with(opts);
    let out = yaraus(&["-q", "--redis", &s.url_ns("t"), "init", "--max", "10"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    s
}

/// A TCP port of 127.0.0.1 on which nothing listens.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

// ----- URLs ----------------------------------------------------------------

#[test]
fn malformed_urls_are_usage_errors() {
    let s = server_with_pool(ServerOptions::default());
    let before = s.snapshot();
    for (url, names) in [
        (
            "localhost:6379",
            &["invalid Redis URL", "localhost:6379"][..],
        ),
        ("http://x", &["invalid Redis URL", "unknown scheme 'http'"]),
        (
            "foo://127.0.0.1:6379/0",
            &["invalid Redis URL", "unknown scheme 'foo'"],
        ),
        ("redis://host/abc", &["invalid Redis URL", "database"]),
        ("redis://127.0.0.1:99999/0", &["invalid Redis URL", "port"]),
        ("", &["invalid Redis URL"]),
    ] {
        for cmd in pool_commands(false) {
            expect_error(&with_url(url, &cmd), USAGE, names);
        }
    }
    // The same from the environment.
    let out = yaraus_env(&["stats"], &[("YARAUS_REDIS", "http://x")]);
    check_error(&["stats"], &out, USAGE, &["unknown scheme"]);
    assert_eq!(s.snapshot(), before);
}

#[test]
fn a_closed_port_is_unreachable_and_fails_fast() {
    let url = format!("redis://127.0.0.1:{}/0", closed_port());
    for cmd in pool_commands(false) {
        let mut args = vec!["--timeout", "500ms"];
        args.extend(with_url(&url, &once(&cmd)));
        expect_error(&args, UNAVAILABLE, &["cannot reach", &url]);
    }
}

#[test]
fn a_stopped_server_is_unreachable_after_the_timeout() {
    // A real redis-server, SIGSTOPped: it accepts connections but never answers.
    let s = RedisServer::start_with(ServerOptions {
        tcp: true,
        ..Default::default()
    });
    let url = s.url_ns("t");
    s.sigstop();
    for cmd in pool_commands(false) {
        let mut args = vec!["--timeout", "500ms"];
        args.extend(with_url(&url, &once(&cmd)));
        expect_error(&args, UNAVAILABLE, &["redis at"]);
    }
    s.sigcont();
    assert!(s.snapshot().is_empty());
}

#[test]
fn a_tls_url_to_a_plain_server_is_one_line() {
    // rediss:// once panicked (no rustls crypto provider) with a backtrace.
    let s = server_with_pool(ServerOptions {
        tcp: true,
        ..Default::default()
    });
    let before = s.snapshot();
    let url = format!("rediss://127.0.0.1:{}/0?ns=t", s.port().unwrap());
    // A plain server waits for the end of a line that a TLS hello never
    // sends: to the client, a server that does not answer (so, one attempt).
    for cmd in pool_commands(false) {
        let mut args = vec!["--timeout", "500ms"];
        args.extend(with_url(&url, &once(&cmd)));
        expect_error(&args, UNAVAILABLE, &["rediss://127.0.0.1"]);
    }
    assert_eq!(s.snapshot(), before);
}

#[test]
fn a_wrong_password_is_refused_and_never_printed() {
    let pass = "correct-horse-battery";
    let wrong = "Wr0ngPassw0rd";
    let tcp = server_with_pool(ServerOptions {
        tcp: true,
        requirepass: Some(pass.into()),
        ..Default::default()
    });
    let unix = server_with_pool(ServerOptions {
        requirepass: Some(pass.into()),
        ..Default::default()
    });
    let (tcp_before, unix_before) = (tcp.snapshot(), unix.snapshot());
    let port = tcp.port().unwrap();
    let socket = unix.socket_path().unwrap().display().to_string();
    for url in [
        format!("redis://:{wrong}@127.0.0.1:{port}/0?ns=t"),
        format!("redis://default:{wrong}@127.0.0.1:{port}/0?ns=t"),
        format!("redis://:{wrong}@127.0.0.1:{port}/3?ns=t"),
        format!("unix://{socket}?pass={wrong}&ns=t"),
        // No password at all, to db 0 and to another db.
        format!("redis://127.0.0.1:{port}/0?ns=t"),
        format!("redis://127.0.0.1:{port}/3?ns=t"),
        format!("unix://{socket}?db=2&ns=t"),
    ] {
        for cmd in pool_commands(false) {
            // --quiet: without it, the warning that the password is on the
            // command line comes first.
            let args = [&["--quiet"][..], &with_url(&url, &cmd)].concat();
            let line = expect_error(&args, UNAVAILABLE, &["authentication"]);
            assert!(!line.contains(wrong), "the password was printed: {line}");
        }
    }
    assert_eq!(tcp.snapshot(), tcp_before);
    assert_eq!(unix.snapshot(), unix_before);
}

#[test]
fn a_password_in_the_url_is_never_printed_whatever_fails() {
    // '@' and '/' make the password appear percent-encoded in the URL; neither
    // form may be printed. Every failure below carries the right password.
    let pass = "Sup3r@S3cret/Pa55";
    let enc = "Sup3r%40S3cret%2FPa55";
    let secret_parts = ["S3cret", "Pa55"];
    let s = server_with_pool(ServerOptions {
        tcp: true,
        requirepass: Some(pass.into()),
        ..Default::default()
    });
    let port = s.port().unwrap();
    let with_pass = |rest: &str| format!("redis://:{enc}@127.0.0.1:{port}{rest}");
    // A wrongly typed pool in namespace "wt".
    let _: () = s.query(&["SET", "wt:ids", "not a pool"]);
    let before = s.snapshot();

    let mut cases: Vec<(Vec<String>, i32)> = Vec::new();
    let mut add = |url: String, cmd: &[&str], code: i32| {
        // --quiet: without it, the warning that the password is on the
        // command line comes first.
        let mut args = vec![
            "--quiet".to_string(),
            "--timeout".into(),
            "500ms".into(),
            "--redis".into(),
            url,
        ];
        args.extend(cmd.iter().map(|s| s.to_string()));
        cases.push((args, code));
    };
    for cmd in [vec!["stats"], vec!["list"], vec!["run", "--", "true"]] {
        add(with_pass("/0?ns=nopool"), &cmd, SOFTWARE); // uninitialised
    }
    for cmd in pool_commands(false) {
        add(with_pass("/0?ns=wt"), &cmd, SOFTWARE); // wrong type
        add(with_pass("/99?ns=t"), &cmd, UNAVAILABLE); // no such db
        add(with_pass("/abc"), &cmd, USAGE); // malformed
        add(format!("redis://:{enc}@127.0.0.1:99999/0"), &cmd, USAGE);
        add(format!("redis://:{enc}@[::1"), &cmd, USAGE);
        add(format!("http://:{enc}@127.0.0.1:{port}/0"), &cmd, USAGE);
        add(
            format!("redis://:{enc}@127.0.0.1:{}/0", closed_port()),
            &once(&cmd),
            UNAVAILABLE,
        );
        add(
            format!("rediss://:{enc}@127.0.0.1:{port}/0?ns=t"),
            &once(&cmd),
            UNAVAILABLE,
        );
        add(
            format!("redis://user:{enc}@127.0.0.1:{port}/0?ns=t"),
            &cmd,
            UNAVAILABLE,
        );
    }
    // The same password in a unix URL's query.
    let unix = server_with_pool(ServerOptions {
        requirepass: Some(pass.into()),
        ..Default::default()
    });
    let socket = unix.socket_path().unwrap().display().to_string();
    for cmd in pool_commands(false) {
        if cmd != ["init"] {
            add(
                format!("unix://{socket}?pass={enc}&ns=nopool"),
                &cmd,
                SOFTWARE,
            );
        }
        add(
            format!("unix://{socket}?pass={enc}&db=99&ns=t"),
            &cmd,
            UNAVAILABLE,
        );
    }
    for (args, code) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = yaraus(&args);
        check_error(&args, &out, *code, &[]);
        for part in secret_parts {
            assert!(
                !out.stderr.contains(part) && !out.stdout.contains(part),
                "yaraus {args:?} printed the password: {out:#?}"
            );
        }
    }
    assert_eq!(s.snapshot(), before);

    // Nor does a run that succeeds, with its progress log.
    let url = with_pass("/0?ns=t");
    let out = yaraus(&[
        "--redis",
        &url,
        "run",
        "--no-safeguards",
        "--delay",
        "0",
        "--",
        "true",
    ]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    for part in secret_parts {
        assert!(
            !out.stderr.contains(part),
            "the log shows the password: {out:#?}"
        );
    }
}

#[test]
fn a_database_that_does_not_exist_is_unavailable() {
    let tcp = server_with_pool(ServerOptions {
        tcp: true,
        ..Default::default()
    });
    let unix = server_with_pool(ServerOptions::default());
    let (tcp_before, unix_before) = (tcp.snapshot(), unix.snapshot());
    let socket = unix.socket_path().unwrap().display().to_string();
    for url in [
        format!("redis://127.0.0.1:{}/99?ns=t", tcp.port().unwrap()),
        format!("unix://{socket}?db=99&ns=t"),
        format!("redis+unix://{socket}?db=16&ns=t"),
    ] {
        for cmd in pool_commands(false) {
            expect_error(&with_url(&url, &cmd), UNAVAILABLE, &["no such database"]);
        }
    }
    assert_eq!(tcp.snapshot(), tcp_before);
    assert_eq!(unix.snapshot(), unix_before);
}

// ----- the pool's keys -----------------------------------------------------

/// Each of the three keys replaced by a key of another type: every pool
/// command refuses with 125, names the key, and writes nothing.
#[test]
fn pool_keys_of_the_wrong_type_are_refused() {
    let s = RedisServer::start();
    // ns:ids a string, no other key.
    let _: () = s.query(&["SET", "a:ids", "something else"]);
    // A pool whose owners hash is a string.
    for ns in ["b", "c"] {
        let out = yaraus(&["-q", "--redis", &s.url_ns(ns), "init", "--max", "10"]);
        assert_eq!(out.code, Some(0), "{out:#?}");
    }
    let _: () = s.query(&["SET", "b:clients", "something else"]);
    // A pool whose stats hash is a list.
    let _: i64 = s.query(&["DEL", "c:stats"]);
    let _: i64 = s.query(&["RPUSH", "c:stats", "something else"]);
    // ns:ids a hash, with a valid-looking clients hash.
    let _: i64 = s.query(&["HSET", "d:ids", "A1", "0"]);

    let before = s.snapshot();
    for (ns, key) in [
        ("a", "a:ids"),
        ("b", "b:clients"),
        ("c", "c:stats"),
        ("d", "d:ids"),
    ] {
        let url = s.url_ns(ns);
        for cmd in pool_commands(true) {
            expect_error(&with_url(&url, &cmd), SOFTWARE, &[key]);
        }
        // init with another range must refuse just the same.
        expect_error(&with_url(&url, &["init", "--max", "20"]), SOFTWARE, &[key]);
    }
    assert_eq!(s.snapshot(), before);
}

#[test]
fn an_uninitialised_pool_is_refused_and_nothing_is_created() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    for cmd in [
        vec!["stats"],
        vec!["stats", "--format", "prometheus"],
        vec!["list"],
        vec!["list", "--format", "table"],
        vec!["-q", "run", "--", "true"],
        vec!["-q", "run", "--wait", "0", "--", "true"],
    ] {
        expect_error(
            &with_url(&url, &cmd),
            SOFTWARE,
            &["t:ids", "does not exist", "yaraus init"],
        );
    }
    assert!(s.snapshot().is_empty(), "{:?}", s.snapshot());
}

// ----- the command line ----------------------------------------------------

#[test]
fn command_line_mistakes_are_usage_errors() {
    let s = server_with_pool(ServerOptions::default());
    let url = s.url_ns("t");
    let before = s.snapshot();
    let u = url.as_str();
    let cases: Vec<(Vec<&str>, &[&str])> = vec![
        (
            vec!["--redis", u, "frobnicate"],
            &["unrecognized subcommand", "frobnicate"],
        ),
        (vec!["--redis", u, "stats", "--bogus"], &["--bogus"]),
        (vec!["--bogus", "--redis", u, "stats"], &["--bogus"]),
        (
            vec!["--redis", u, "list", "--format", "xml"],
            &["xml", "--format"],
        ),
        (
            vec!["--redis", u, "stats", "--format", "csv"],
            &["csv", "--format"],
        ),
        (
            vec!["--redis", u, "init", "--max", "many"],
            &["many", "--max"],
        ),
        (
            vec!["--redis", u, "run", "--interval", "soon", "--", "true"],
            &["soon", "--interval"],
        ),
        (
            vec!["--redis", u, "run", "--expire", "0", "--", "true"],
            &["--expire", "more than zero"],
        ),
        (
            vec!["--redis", u, "run", "--interval", "-1s", "--", "true"],
            &["-1s", "--interval"],
        ),
        (
            vec!["--redis", u, "run", "--delay", "yesterday", "--", "true"],
            &["yesterday", "--delay"],
        ),
        (
            vec![
                "--redis",
                u,
                "run",
                "--kill-after",
                "5 parsecs",
                "--",
                "true",
            ],
            &["parsecs", "--kill-after"],
        ),
        (
            vec!["--redis", u, "run", "--wait", "forever", "--", "true"],
            &["forever", "--wait"],
        ),
        (
            vec!["--redis", u, "--timeout", "0", "stats"],
            &["--timeout"],
        ),
        (
            vec!["--redis", u, "--timeout", "soon", "stats"],
            &["--timeout", "soon"],
        ),
        (vec!["--redis", u, "run"], &["required", "COMMAND"]),
        (vec!["--redis", u, "run", "--"], &["required", "COMMAND"]),
        (
            vec!["--redis", u, "run", "--interval", "1s"],
            &["required", "COMMAND"],
        ),
    ];
    for (args, names) in &cases {
        expect_error(args, USAGE, names);
    }
    // Several servers where the pool lives on one.
    for cmd in pool_commands(false) {
        let mut args = vec!["--redis", u, "--redis", u];
        args.extend(&cmd);
        expect_error(&args, USAGE, &["2 --redis"]);
        let both = format!("{u},{u}");
        expect_error(&with_url(&both, &cmd), USAGE, &["2 --redis"]);
    }
    // An empty namespace, by flag, by URL, by environment.
    let no_ns = s.url();
    let empty_ns = format!("{no_ns}?ns=");
    for cmd in pool_commands(false) {
        let mut args = vec!["--namespace", "", "--redis", u];
        args.extend(&cmd);
        expect_error(&args, USAGE, &["namespace", "empty"]);
        expect_error(&with_url(&empty_ns, &cmd), USAGE, &["namespace", "empty"]);
        let args = with_url(&no_ns, &cmd);
        let out = yaraus_env(&args, &[("YARAUS_NAMESPACE", "")]);
        check_error(&args, &out, USAGE, &["namespace", "empty"]);
    }
    assert_eq!(s.snapshot(), before);
}
