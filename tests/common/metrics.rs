//! Scraping `--metrics-listen`: the address from the log, a plain HTTP/1.1
//! GET over a `TcpStream`, and the exposition text as a map.
//!
//! Why no HTTP client or Prometheus parser crate: one GET with
//! `Connection: close` is a few lines, and the parse the tests need (a
//! sample's name with its labels, and its value) is simpler than the
//! format; the only candidate parser crate (`prometheus-parse`) has not
//! been released since 2023 and pulls in chrono and regex. What the tests
//! check is the values; the format itself is the official client's.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// The line yaraus logs when its listener is bound.
const LISTENING: &str = "metrics: listening on http://";

/// The `HOST:PORT` the listener says it is bound to, once it said so.
pub fn address(log: &str) -> Option<String> {
    let rest = &log[log.find(LISTENING)? + LISTENING.len()..];
    Some(rest[..rest.find('/')?].to_string())
}

/// `GET path` on `addr`: the status code and the body.
pub fn get(addr: &str, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    stream
        .set_read_timeout(Some(super::EVENT))
        .expect("read timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("send the request");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .unwrap_or_else(|e| panic!("GET {path} from {addr}: {e}"));
    let (head, body) = response
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no end of headers in:\n{response}"));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in:\n{head}"));
    (status, body.to_string())
}

/// The samples of a scrape: `name{labels}` as written, and the value.
pub fn parse(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|line| {
            // The value follows the last space (label values here have none).
            let (name, value) = line
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("not a sample: {line:?}"));
            let value = match value {
                "+Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                v => v
                    .parse()
                    .unwrap_or_else(|_| panic!("not a value: {line:?}")),
            };
            (name.to_string(), value)
        })
        .collect()
}

/// A running subcommand's metrics endpoint.
pub struct Endpoint {
    pub addr: String,
}

impl Endpoint {
    /// The endpoint `log` names; waits for the line.
    pub fn from_log(log: impl Fn() -> String) -> Endpoint {
        let mut found = None;
        super::wait_until("the metrics listener's address", super::EVENT, || {
            found = address(&log());
            found.is_some()
        });
        Endpoint {
            addr: found.expect("found"),
        }
    }

    /// `/metrics`, parsed; the sample `name` must be there.
    pub fn scrape(&self) -> BTreeMap<String, f64> {
        let (status, body) = get(&self.addr, "/metrics");
        assert_eq!(status, 200, "/metrics:\n{body}");
        assert!(body.ends_with("# EOF\n"), "/metrics is cut:\n{body}");
        parse(&body)
    }

    /// The value of the sample `name` (with its labels, as written).
    pub fn value(&self, name: &str) -> f64 {
        let samples = self.scrape();
        *samples
            .get(name)
            .unwrap_or_else(|| panic!("no {name} in {samples:#?}"))
    }

    /// The status `path` answers.
    pub fn status(&self, path: &str) -> u16 {
        get(&self.addr, path).0
    }

    /// Waits until `path` answers `status`.
    pub fn wait_status(&self, path: &str, status: u16, timeout: Duration) {
        super::wait_until(&format!("{path} to answer {status}"), timeout, || {
            self.status(path) == status
        });
    }
}
