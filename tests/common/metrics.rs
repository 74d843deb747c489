//! Scraping `--metrics-listen`: the address from the log, a plain HTTP/1.1
//! GET over a `TcpStream`, the exposition text as a map, and the page
//! checked by the real `promtool check metrics`.
//!
//! Why no HTTP client or Prometheus parser crate: one GET with
//! `Connection: close` is a few lines, and the parse the tests need (a
//! sample's name with its labels, and its value) is simpler than the
//! format; the only candidate parser crate (`prometheus-parse`) has not
//! been released since 2023 and pulls in chrono and regex. The format
//! itself is checked by promtool, Prometheus's own linter.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::Duration;

/// What Prometheus asks for: OpenMetrics first.
pub const OPENMETRICS: &str = "application/openmetrics-text;version=1.0.0;q=0.5,\
    text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
/// The Prometheus text format 0.0.4 only.
pub const TEXT: &str = "text/plain;version=0.0.4";

/// The line yaraus logs when its listener is bound.
const LISTENING: &str = "metrics: listening on http://";

/// The `HOST:PORT` the listener says it is bound to, once it said so.
pub fn address(log: &str) -> Option<String> {
    let rest = &log[log.find(LISTENING)? + LISTENING.len()..];
    Some(rest[..rest.find('/')?].to_string())
}

/// An answer: its status, `Content-Type` and body.
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

/// `GET path` on `addr`: the status code and the body.
pub fn get(addr: &str, path: &str) -> (u16, String) {
    let answer = request(addr, path, None);
    (answer.status, answer.body)
}

/// `GET path` on `addr`, with an `Accept` header if given.
pub fn request(addr: &str, path: &str, accept: Option<&str>) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    stream
        .set_read_timeout(Some(super::EVENT))
        .expect("read timeout");
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{accept}Connection: close\r\n\r\n"
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
    let content_type = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-type")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_default();
    Answer {
        status,
        content_type,
        body: body.to_string(),
    }
}

/// Fails unless `promtool check metrics` finds `page` (in the format
/// `accept` asked for) well-formed and clean.
///
/// promtool reads the Prometheus text format 0.0.4 only: OpenMetrics names
/// a counter's family `foo` and its sample `foo_total`, which promtool
/// reports as "foo_total no help text" however right the page is. So an
/// OpenMetrics page must parse (a malformed line is promtool's exit 1),
/// and its only findings may be those, each for a counter declared with
/// `# TYPE foo counter`; a 0.0.4 page must have no finding at all.
pub fn assert_promtool_passes(page: &str, openmetrics: bool) {
    super::tools::require_test_tool(
        "promtool",
        "prometheus",
        "/metrics is checked with promtool check metrics",
    );
    let mut child = super::command("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start promtool");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(page.as_bytes())
        .expect("write the page to promtool");
    let out = child.wait_with_output().expect("promtool's end");
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let expected: BTreeSet<String> = if openmetrics {
        page.lines()
            .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
            .map(|family| format!("{family}_total no help text"))
            .collect()
    } else {
        BTreeSet::new()
    };
    let findings: Vec<&str> = said.lines().filter(|l| !l.trim().is_empty()).collect();
    let clean = findings.is_empty() && out.status.success();
    let only_expected =
        out.status.code() == Some(3) && findings.iter().all(|f| expected.contains(f.trim()));
    assert!(
        clean || (openmetrics && only_expected),
        "promtool check metrics ({}): {}\n{said}\npage:\n{page}",
        if openmetrics {
            "OpenMetrics"
        } else {
            "text 0.0.4"
        },
        out.status
    );
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

    /// `/metrics` in OpenMetrics, parsed.
    pub fn scrape(&self) -> BTreeMap<String, f64> {
        let page = self.page(OPENMETRICS);
        assert!(page.ends_with("# EOF\n"), "/metrics is cut:\n{page}");
        parse(&page)
    }

    /// `/metrics` as `accept` asks for it; its content type must be the
    /// format's.
    pub fn page(&self, accept: &str) -> String {
        let answer = request(&self.addr, "/metrics", Some(accept));
        assert_eq!(answer.status, 200, "/metrics:\n{}", answer.body);
        let openmetrics = accept.starts_with("application/openmetrics-text");
        let want = if openmetrics {
            "application/openmetrics-text; version=1.0.0; charset=utf-8"
        } else {
            "text/plain; version=0.0.4; charset=utf-8"
        };
        assert_eq!(answer.content_type, want, "Accept: {accept}");
        answer.body
    }

    /// `/metrics` in both formats passes promtool; the two pages have the
    /// same samples (what changes between them is the comment lines).
    pub fn assert_promtool_passes(&self) {
        let openmetrics = self.page(OPENMETRICS);
        let text = self.page(TEXT);
        assert_promtool_passes(&openmetrics, true);
        assert_promtool_passes(&text, false);
        let samples = |page: &str| -> BTreeSet<String> {
            page.lines()
                .filter(|l| !l.starts_with('#'))
                .filter_map(|l| Some(l.rsplit_once(' ')?.0.to_string()))
                .collect()
        };
        assert_eq!(
            samples(&openmetrics),
            samples(&text),
            "{openmetrics}\n{text}"
        );
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
