//! A stderr nobody reads, in JSON: `yaraus seq serve -v` logs a numbered
//! debug line for each connection it accepts; with its stderr a full pipe,
//! a flood of connections overflows the log's queue. The server must go on
//! answering (a log call never waits), and once the pipe is read again
//! every line must parse, each run of lost lines told by a notice with a
//! numeric `dropped` where they were lost: the numbers of the lines that
//! got through and the counts of the notices add up to every connection.

use super::*;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::signal::Signal;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::OwnedFd;
use std::process::Stdio;

/// More connections than the log's queue (256 lines) holds.
const FLOOD: u64 = 1000;

/// A filler line of the pipe, no longer than PIPE_BUF so that it goes in
/// whole or not at all, and so that yaraus's lines stay whole around it.
const FILLER: &str = "#";

/// Writes whole filler lines to the pipe until it is full.
fn fill(ours: &File) {
    let flags = OFlag::from_bits_truncate(fcntl(ours, FcntlArg::F_GETFL).unwrap());
    fcntl(ours, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).unwrap();
    let line = format!("{}\n", FILLER.repeat(511));
    loop {
        match (&*ours).write(line.as_bytes()) {
            Ok(n) => assert_eq!(n, line.len(), "a filler line cut short"),
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => panic!("filling the pipe: {e}"),
        }
    }
    fcntl(ours, FcntlArg::F_SETFL(flags)).unwrap();
}

/// One connection that the server has surely accepted (and logged): it
/// answers PING.
fn ping(port: u16) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to seq serve");
    // A server held up by its log would fail the test here, not hang it.
    stream.set_read_timeout(Some(common::EVENT)).unwrap();
    stream.write_all(b"PING\r\n").unwrap();
    let mut reply = [0u8; 7];
    stream.read_exact(&mut reply).expect("a reply to PING");
    assert_eq!(&reply, b"+PONG\r\n");
}

/// Reads the pipe to its end on a thread of its own.
fn drain(read: OwnedFd) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut out = String::new();
        File::from(read).read_to_string(&mut out).unwrap();
        out
    })
}

#[test]
fn a_full_stderr_in_json_drops_lines_and_counts_them_in_a_notice_that_parses() {
    let server = RedisServer::start();
    let scratch = common::scratch::Scratch::new();
    let port = common::free_port();
    let listen = format!("127.0.0.1:{port}");
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
    let ours = File::from(write.try_clone().unwrap());
    let mut cmd = yaraus_in(&scratch, &["--log-format", "json", "-v", "seq", "serve"]);
    cmd.args([
        "--listen",
        &listen,
        "--redis",
        &server.url(),
        "--allow-volatile",
    ]);
    let mut serve = Run::spawn_with_stderr(cmd, &scratch, Stdio::from(write));
    common::wait_until("seq serve to answer", common::EVENT, || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    // Nobody reads the pipe from here on, and it is full: the writer
    // thread blocks on its next line and the queue fills up.
    fill(&ours);
    for _ in 0..FLOOD {
        ping(port);
    }
    let reader = drain(read);
    // A line after the drain, to carry the notice of the last lost run.
    ping(port);
    serve.signal(Signal::SIGTERM);
    assert_eq!(serve.wait(), 0);
    drop(ours);
    let out = reader.join().unwrap();

    // The connections that waited for the server to answer were numbered
    // too: the count starts at the first numbered line seen.
    let (mut next, mut told, mut seen) = (None::<u64>, 0, 0);
    for line in out.lines().filter(|l| !l.starts_with(FILLER)) {
        let value = object(line);
        if let Some(lost) = value["dropped"].as_u64() {
            assert_eq!(value["level"], "warn", "{line}");
            assert_eq!(value["subcommand"], "seq serve", "{line}");
            told += lost;
            next = next.map(|n| n + lost);
            continue;
        }
        let message = value["message"].as_str().unwrap();
        let Some(rest) = message.strip_prefix("seq serve: connection ") else {
            continue;
        };
        let number: u64 = rest.split(' ').next().unwrap().parse().unwrap();
        assert_eq!(value["level"], "debug", "{line}");
        if let Some(expected) = next {
            assert_eq!(number, expected, "a line lost without a notice: {line}");
        }
        next = Some(number + 1);
        seen += 1;
    }
    assert!(told > 0, "nothing was dropped:\n{out}");
    assert!(seen > 0, "no connection line got through:\n{out}");
    assert!(
        seen + told > FLOOD,
        "{seen} lines and {told} dropped for {} connections",
        FLOOD + 1
    );
}
