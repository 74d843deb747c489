//! The helpers of the `seq_serve` tests: `yaraus seq serve` as a process
//! (its port read from its log), a raw RESP client that tells an integer
//! from a bulk string, and the real-time order check over timed calls.

use super::common::RedisServer;
use super::common::process::Run;
use super::common::scratch::Scratch;
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

// ----- the server and a raw client -------------------------------------------

/// A running `yaraus seq serve --listen 127.0.0.1:0` and the port it printed.
pub struct Serve {
    pub run: Run,
    pub port: u16,
    /// `YARAUS_SEQ_PASSWORD` of its environment, which `info_text` sends.
    password: Option<String>,
    _scratch: Scratch,
}

impl Serve {
    pub fn start(servers: &[RedisServer], extra: &[&str]) -> Serve {
        Serve::start_env(servers, extra, &[])
    }

    pub fn start_env(servers: &[RedisServer], extra: &[&str], env: &[(&str, &str)]) -> Serve {
        Serve::launch(super::common::yaraus(), servers, extra, env)
    }

    /// [`Serve::start`] with at most `files` file descriptors (`ulimit -n`).
    pub fn start_with_files(servers: &[RedisServer], extra: &[&str], files: u32) -> Serve {
        let mut cmd = super::common::spawn::command("sh");
        super::common::spawn::without_yaraus_env(&mut cmd);
        cmd.arg("-c")
            .arg(format!("ulimit -n {files} && exec \"$@\""))
            .arg("sh")
            .arg(env!("CARGO_BIN_EXE_yaraus"));
        Serve::launch(cmd, servers, extra, &[])
    }

    fn launch(
        mut cmd: std::process::Command,
        servers: &[RedisServer],
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Serve {
        let scratch = Scratch::new();
        cmd.args(["seq", "serve", "--listen", "127.0.0.1:0"])
            .args(extra);
        for s in servers {
            cmd.arg("--redis").arg(s.url());
        }
        cmd.envs(env.iter().copied())
            .stdin(std::process::Stdio::null());
        let run = Run::spawn(cmd, &scratch);
        run.wait_log("listening on 127.0.0.1:");
        let log = run.log();
        let rest = &log[log.find("listening on 127.0.0.1:").unwrap() + 23..];
        let port = rest[..rest.find(' ').unwrap()].parse().unwrap();
        let password = env
            .iter()
            .find(|(k, _)| *k == "YARAUS_SEQ_PASSWORD")
            .map(|(_, v)| v.to_string());
        Serve {
            run,
            port,
            password,
            _scratch: scratch,
        }
    }

    pub fn client(&self) -> Client {
        Client::connect(self.port)
    }

    /// The `seq_NAME:` line of `INFO sequences`, as `field=value` pairs.
    pub fn info(&self, name: &str) -> Vec<(String, String)> {
        let Reply::Bulk(Some(text)) = self.client().send(&["INFO", "sequences"]) else {
            panic!("INFO is a bulk string");
        };
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("seq_{name}:")))
            .unwrap_or_else(|| panic!("no seq_{name} in:\n{text}"))
            .to_string();
        line.split(',')
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap();
                (k.to_string(), v.to_string())
            })
            .collect()
    }

    /// The text of `INFO section` (RESP2: a bulk string).
    pub fn info_text(&self, section: &str) -> String {
        let mut c = self.client();
        if let Some(password) = &self.password {
            assert_eq!(c.send(&["AUTH", password]), status("OK"));
        }
        match c.send(&["INFO", section]) {
            Reply::Bulk(Some(text)) => text,
            other => panic!("INFO is a bulk string in RESP2: {other:?}"),
        }
    }

    /// `field` of `INFO health` (`ready`, `nodes_ok`, `node0`...).
    pub fn health(&self, field: &str) -> String {
        let text = self.info_text("health");
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")))
            .unwrap_or_else(|| panic!("no {field} in:\n{text}"))
            .to_string()
    }

    /// `field` of `INFO section`, as a number (`stats`, `clients`...).
    pub fn counter(&self, section: &str, field: &str) -> u64 {
        info_field(&self.info_text(section), field)
    }

    /// A line of the server's `/proc/PID/status` in KiB: `VmRSS` (resident
    /// now) or `VmHWM` (the most it was).
    pub fn memory_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.run.pid())).unwrap();
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")))
            .unwrap_or_else(|| panic!("no {field} in /proc/PID/status"));
        line.split_whitespace().next().unwrap().parse().unwrap()
    }

    pub fn stat(&self, name: &str, field: &str) -> f64 {
        let info = self.info(name);
        info.iter()
            .find(|(k, _)| k == field)
            .unwrap()
            .1
            .parse()
            .unwrap()
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<String>),
    Array(Vec<Reply>),
    /// RESP3 `_`.
    Null,
    /// RESP3 `%`: the pairs in the order sent.
    Map(Vec<(Reply, Reply)>),
    /// RESP3 `=`: the format (`txt`) and the text.
    Verbatim(String, String),
}

impl Reply {
    /// The id an INCR/INCRBY answered: an integer, or digits in a bulk
    /// string above 2^63 - 1; None for an error.
    pub fn id(&self) -> Option<u64> {
        match self {
            Reply::Int(n) => Some(u64::try_from(*n).expect("a positive id")),
            Reply::Bulk(Some(s)) => Some(s.parse().expect("digits")),
            Reply::Error(_) => None,
            other => panic!("not an id: {other:?}"),
        }
    }

    /// The value of `key` in a map (RESP3) or a flat array of pairs (RESP2).
    pub fn field(&self, key: &str) -> &Reply {
        let pairs: Vec<(&Reply, &Reply)> = match self {
            Reply::Map(pairs) => pairs.iter().map(|(k, v)| (k, v)).collect(),
            Reply::Array(flat) => flat.chunks(2).map(|p| (&p[0], &p[1])).collect(),
            other => panic!("not a map: {other:?}"),
        };
        pairs
            .into_iter()
            .find(|(k, _)| **k == bulk(key))
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no {key} in {self:?}"))
    }

    pub fn error(&self) -> &str {
        match self {
            Reply::Error(e) => e,
            other => panic!("not an error: {other:?}"),
        }
    }
}

pub struct Client {
    reader: BufReader<TcpStream>,
    pub writer: TcpStream,
}

impl Client {
    pub fn connect(port: u16) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to seq serve");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        Client {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        }
    }

    pub fn raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write to seq serve");
    }

    pub fn send(&mut self, args: &[&str]) -> Reply {
        self.try_send(args)
            .expect("seq serve closed the connection")
    }

    /// None when the server closed the connection.
    pub fn try_send(&mut self, args: &[&str]) -> Option<Reply> {
        let mut req = format!("*{}\r\n", args.len());
        for a in args {
            req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        self.writer.write_all(req.as_bytes()).ok()?;
        self.read()
    }

    /// The next reply; None at the end of the stream (or a reset).
    pub fn read(&mut self) -> Option<Reply> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return None,
            Err(e) => panic!("reading a reply: {e}"),
        }
        let line = line.strip_suffix("\r\n").expect("CRLF");
        let (kind, rest) = line.split_at(1);
        Some(match kind {
            "+" => Reply::Status(rest.into()),
            "-" => Reply::Error(rest.into()),
            ":" => Reply::Int(rest.parse().unwrap()),
            "$" if rest == "-1" => Reply::Bulk(None),
            "$" => {
                let mut body = vec![0; rest.parse::<usize>().unwrap() + 2];
                self.reader.read_exact(&mut body).unwrap();
                body.truncate(body.len() - 2);
                Reply::Bulk(Some(String::from_utf8(body).unwrap()))
            }
            "*" => Reply::Array(
                (0..rest.parse::<usize>().unwrap())
                    .map(|_| self.read().expect("array element"))
                    .collect(),
            ),
            "_" if rest.is_empty() => Reply::Null,
            "%" => Reply::Map(
                (0..rest.parse::<usize>().unwrap())
                    .map(|_| {
                        (
                            self.read().expect("map key"),
                            self.read().expect("map value"),
                        )
                    })
                    .collect(),
            ),
            "=" => {
                let mut body = vec![0; rest.parse::<usize>().unwrap() + 2];
                self.reader.read_exact(&mut body).unwrap();
                body.truncate(body.len() - 2);
                let text = String::from_utf8(body).unwrap();
                let (format, text) = text.split_at(4);
                Reply::Verbatim(format.trim_end_matches(':').into(), text.into())
            }
            _ => panic!("not RESP: {line:?}"),
        })
    }

    /// True once the server closed the connection (reads until then, or
    /// until the read timeout: false).
    pub fn closed(&mut self) -> bool {
        let mut rest = Vec::new();
        match self.reader.read_to_end(&mut rest) {
            Ok(_) => true,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }
}

/// The number after `field:` in the text of an `INFO`.
pub fn info_field(text: &str, field: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in:\n{text}"))
        .parse()
        .unwrap()
}

pub fn bulk(s: &str) -> Reply {
    Reply::Bulk(Some(s.into()))
}

pub fn status(s: &str) -> Reply {
    Reply::Status(s.into())
}

// ----- real-time order ---------------------------------------------------------

/// One INCR: when it was sent, when its reply came, the id.
#[derive(Clone, Copy)]
pub struct Call {
    pub start: Instant,
    pub end: Instant,
    pub id: u64,
}

/// No id twice, and a call that began after another one ended got a larger id.
pub fn assert_unique_and_ordered(calls: &[Call]) {
    let mut seen = HashSet::new();
    for c in calls {
        assert!(seen.insert(c.id), "id {} handed out twice", c.id);
    }
    let mut by_start: Vec<&Call> = calls.iter().collect();
    by_start.sort_by_key(|c| c.start);
    let mut by_end: Vec<&Call> = calls.iter().collect();
    by_end.sort_by_key(|c| c.end);
    let (mut ended, mut highest) = (0, None::<&Call>);
    for c in by_start {
        while ended < by_end.len() && by_end[ended].end < c.start {
            if highest.is_none_or(|h| by_end[ended].id > h.id) {
                highest = Some(by_end[ended]);
            }
            ended += 1;
        }
        if let Some(h) = highest {
            assert!(
                c.id > h.id,
                "id {} began after id {} had returned, and is not above it",
                c.id,
                h.id
            );
        }
    }
}

/// `clients` threads, each doing INCR orders `per_client` times, on the
/// ports in turn; every call that got an id.
pub fn hammer(ports: &[u16], clients: usize, per_client: usize) -> Vec<Call> {
    let handles: Vec<_> = (0..clients)
        .map(|i| {
            let ports = ports.to_vec();
            thread::spawn(move || {
                let mut conns: Vec<Client> = ports.iter().map(|&p| Client::connect(p)).collect();
                let mut calls = Vec::with_capacity(per_client);
                for n in 0..per_client {
                    let conn = &mut conns[(i + n) % ports.len()];
                    let start = Instant::now();
                    let reply = conn.send(&["INCR", "orders"]);
                    let end = Instant::now();
                    let id = reply.id().unwrap_or_else(|| panic!("{reply:?}"));
                    calls.push(Call { start, end, id });
                }
                calls
            })
        })
        .collect();
    handles
        .into_iter()
        .flat_map(|h| h.join().expect("client thread"))
        .collect()
}
