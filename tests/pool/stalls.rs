//! `list` through stalls: its own process stopped (SIGSTOP) or blocked on
//! a reader that stopped reading, for longer than its response timeout,
//! lists every id; a server that stops answering ends it, with the
//! timeout's error, once no chunk has come for that long.
//!
//! The pool has 2^16 ids: 14 chunk requests of 5,000 ids, 8 of them in
//! flight while the first rows are written, the last ones sent only as
//! the listing takes chunks, after the fault.

use super::*;
use std::io::Lines;
use std::process::ChildStdout;

/// The pool's last id.
const IDS: u64 = 65_535;
/// `--timeout` of the listings: their response timeout is twice it.
const TIMEOUT: &str = "1s";
/// How long a fault lasts: clearly longer than that response timeout.
const STALL: Duration = Duration::from_secs(3);

/// A server with a pool of [`IDS`] ids in the namespace `t`; its URL.
fn big_pool() -> (RedisServer, String) {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["-q", "--redis", &url, "init", "--max", &IDS.to_string()]);
    (s, url)
}

/// `yaraus --timeout 1s list` on `url`, its stdout read until its first row.
fn listing(url: &str) -> (Spawned, Lines<BufReader<ChildStdout>>) {
    let mut list = Spawned::piped(&["--timeout", TIMEOUT, "--redis", url, "list"]);
    // A small buffer: the test reads no more than it asks for.
    let stdout = list.child().stdout.take().unwrap();
    let mut lines = BufReader::with_capacity(4096, stdout).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "[");
    let first = lines.next().expect("a first row").unwrap();
    assert!(first.contains("\"id\":1,"), "{first}");
    (list, lines)
}

/// Reads the rows after the first to the end of stdout, checking their
/// order; returns how many rows there were in all, and whether the JSON
/// array was closed.
fn rest(lines: Lines<BufReader<ChildStdout>>) -> (u64, bool) {
    let (mut count, mut closed) = (1u64, false);
    for line in lines {
        let line = line.unwrap();
        assert!(!closed, "output after the closing bracket: {line}");
        if line == "]" {
            closed = true;
            continue;
        }
        count += 1;
        let want = format!("\"id\":{count},");
        assert!(
            line.contains(&want),
            "row {count} is not id {count}: {line}"
        );
    }
    (count, closed)
}

/// Asserts that the listing `list`, whose stdout `lines` has given its
/// first row, lists every id and exits 0.
fn lists_every_id(mut list: Spawned, lines: Lines<BufReader<ChildStdout>>) {
    let (count, closed) = rest(lines);
    let status = list.wait(COMMAND_TIMEOUT);
    let stderr = list.stderr();
    assert_eq!(status.code(), Some(0), "{status:?}, stderr: {stderr}");
    assert_eq!(stderr, "");
    assert!(closed, "the JSON array is not closed");
    assert_eq!(count, IDS);
}

/// A `list` stopped (SIGSTOP) for longer than its response timeout while
/// its requests were in flight, and the server answered them meanwhile:
/// the time it was stopped is not the server's silence.
#[test]
fn list_rides_out_a_stop_of_its_own_process() {
    let (_s, url) = big_pool();
    let (mut list, lines) = listing(&url);
    let pid = list.child().id();
    kill(Pid::from_raw(pid as i32), Signal::SIGSTOP).expect("SIGSTOP yaraus");
    wait_until("yaraus to stop", COMMAND_TIMEOUT, || {
        common::faults::proc_state(pid) == Some('T')
    });
    // The fault injected: a stop of a fixed length.
    thread::sleep(STALL);
    kill(Pid::from_raw(pid as i32), Signal::SIGCONT).expect("SIGCONT yaraus");
    lists_every_id(list, lines);
}

/// A `list` whose reader stops reading for longer than its response
/// timeout: yaraus blocks on its output, reading no replies meanwhile.
#[test]
fn list_rides_out_a_reader_that_pauses() {
    let (_s, url) = big_pool();
    let (list, lines) = listing(&url);
    // The fault injected: a pause of a fixed length.
    thread::sleep(STALL);
    lists_every_id(list, lines);
}

/// A server that stops answering (SIGSTOP) once the first rows are out:
/// the listing ends with the timeout's error (exit 69) without its closing
/// bracket, after the rows it had, not hanging on the request sent to the
/// stopped server.
#[test]
fn list_ends_when_the_server_stops_answering_mid_listing() {
    let (s, url) = big_pool();
    let (mut list, lines) = listing(&url);
    s.sigstop();
    let (count, closed) = rest(lines);
    let status = list.wait(COMMAND_TIMEOUT);
    let stderr = list.stderr();
    s.sigcont();
    assert_eq!(status.code(), Some(69), "{status:?}, stderr: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("Redis at") && lines[0].contains("did not answer in time"),
        "{stderr}"
    );
    assert!(!closed, "a listing that failed closed its array");
    assert!(count < IDS, "{count} rows: every id was listed");
}
