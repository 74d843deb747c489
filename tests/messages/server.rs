//! What a server did, in plain words: a refused password or a URL redis-rs
//! cannot use without the name of redis-rs's error kind, and a port that
//! answers but is not Redis in one line that says so.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use crate::messages::common::tools::require;
use crate::messages::common::{RedisServer, ServerOptions, command};
use crate::messages::{UNAVAILABLE, USAGE, one_line, yaraus, yaraus_env};

/// The `Debug` names of redis-rs's error kinds, which its `Display` appends
/// ("… - AuthenticationFailed").
const KIND_NAMES: &[&str] = &[
    "AuthenticationFailed",
    "InvalidClientConfig",
    "ResponseError",
    "IoError",
    "Extension",
    "ClusterConnectionNotFound",
    " - Io",
];

fn no_kind_name(args: &[&str], line: &str) {
    for name in KIND_NAMES {
        assert!(
            !line.contains(name),
            "yaraus {args:?} said {name:?}: {line}"
        );
    }
}

#[test]
fn a_refused_password_is_said_without_the_library_s_words() {
    let s = RedisServer::start_with(ServerOptions {
        tcp: true,
        requirepass: Some("right".into()),
        ..Default::default()
    });
    // Not in the URL: yaraus would warn that it shows in the process list.
    let wrong = [("YARAUS_REDIS_PASSWORD", "wrong")];
    let url = format!("redis://127.0.0.1:{}/0", s.port().unwrap());
    for cmd in [
        &["stats"][..],
        &["-q", "run", "--", "true"],
        &["lock", "x", "true"],
    ] {
        let args = [&["--redis", url.as_str()][..], cmd].concat();
        let out = yaraus_env(&args, &wrong);
        let line = one_line(&args, &out, UNAVAILABLE, &["refused authentication"]);
        no_kind_name(&args, &line);
    }
}

#[test]
fn a_url_redis_rs_cannot_use_is_said_without_the_library_s_words() {
    for (url, says) in [
        ("redis://host/abc", "Invalid database number"),
        ("redis://0.0.0.0/0", "wildcard address"),
        ("rediss://host/0#secure", "#insecure"),
    ] {
        let args = ["--redis", url, "stats"];
        let out = yaraus(&args);
        let line = one_line(&args, &out, USAGE, &["invalid Redis URL", says]);
        no_kind_name(&args, &line);
    }
}

/// `python3 -m http.server` on a port of its choosing, killed on drop.
struct HttpServer {
    child: Child,
    port: u16,
}

impl HttpServer {
    fn start() -> HttpServer {
        require(
            "python3",
            "python3",
            "install-test-tools.sh",
            "an HTTP server stands for a port that is not Redis",
        );
        let mut child = command("python3")
            .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn python3 -m http.server");
        // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ...",
        // printed once it listens.
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("read http.server's first line");
        let port = line
            .split_whitespace()
            .skip_while(|w| *w != "port")
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in http.server's line {line:?}"));
        HttpServer { child, port }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_port_that_is_not_redis_is_one_line_that_says_so() {
    let http = HttpServer::start();
    let url = format!("redis://127.0.0.1:{}/0", http.port);
    let says = format!(
        "yaraus: not a Redis server at 127.0.0.1:{} (it answered \"HTTP/1.0 501",
        http.port
    );
    for cmd in [
        &["stats"][..],
        &["init", "--max", "3"],
        &["-q", "run", "--", "true"],
        &["lock", "x", "true"],
        &["seq", "next", "x"],
        &["hilo", "next", "x"],
    ] {
        let args = [&["--redis", url.as_str()][..], cmd].concat();
        let out = yaraus(&args);
        one_line(&args, &out, UNAVAILABLE, &[&says]);
    }
}
