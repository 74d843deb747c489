//! Standard output that cannot be written. A subcommand whose output is
//! lost must say so and fail, as coreutils do (`ls > /dev/full` exits 1
//! with "write error"): a script that reads an id, a token or a report from
//! yaraus must never take an empty file for success. A reader that goes away
//! (`yaraus list | head`) is not such a failure: the printing just ends.
//!
//! `/dev/full` refuses every write with ENOSPC.

use crate::common;

use common::RedisServer;
use common::pool::{NS, init_pool};
use std::fs::File;
use std::process::Stdio;
use std::time::Duration;

/// yaraus's own failure (error.rs, the exit tables of `--help`).
const SOFTWARE: i32 = 125;
const COMMAND_TIMEOUT: Duration = Duration::from_secs(20);

/// Runs yaraus with stdout on `/dev/full`; returns its status and stderr.
fn to_dev_full(args: &[String]) -> (Option<i32>, String) {
    let full = File::options().write(true).open("/dev/full").unwrap();
    let child = common::yaraus()
        .args(args)
        .stdin(Stdio::null())
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn yaraus");
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(out) = rx.recv_timeout(COMMAND_TIMEOUT) else {
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        panic!(
            "yaraus {args:?} did not finish within {COMMAND_TIMEOUT:?} with stdout on /dev/full"
        );
    };
    let out = out.unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn words(url: &str, args: &str) -> Vec<String> {
    let mut v = vec!["--redis".to_string(), url.to_string()];
    v.extend(args.split_whitespace().map(String::from));
    v
}

#[test]
fn every_printing_subcommand_fails_when_its_output_cannot_be_written() {
    let server = RedisServer::start();
    let url = server.url_ns(NS);
    init_pool(&server, 1, 3);
    let ok = common::run_ok(
        &["--redis", &url, "hilo", "--allow-volatile", "agent", "h"],
        &[],
        COMMAND_TIMEOUT,
    );
    assert_eq!(ok.code, Some(0));
    let cases = [
        "init --max 3",
        "stats",
        "stats --format prometheus",
        "list",
        "list --format table",
        "list --using",
        "lock printed --info",
        "seq --allow-volatile next s",
        "seq --allow-volatile get s",
        "seq --allow-volatile set-floor s 10",
        "hilo --allow-volatile next h",
        "hilo --allow-volatile next h --count 3",
        "hilo --allow-volatile status h",
        "index printed --status",
        "index printed --interval 100ms --print",
        "acl-rules",
        "completions bash",
        "--version",
        "--help",
        "run --help",
    ];
    for case in cases {
        let (code, stderr) = to_dev_full(&words(&url, case));
        assert_eq!(code, Some(SOFTWARE), "yaraus {case} > /dev/full: {stderr}");
        let last = stderr.lines().last().unwrap_or("");
        assert!(
            last.contains("cannot write to stdout") && last.contains("No space left"),
            "yaraus {case} > /dev/full ends with {last:?}:\n{stderr}"
        );
    }
}

/// `lock --acquire` whose token cannot be printed would leave a lock that
/// nobody can release: it gives the lock back before it fails.
#[test]
fn a_lock_whose_token_cannot_be_printed_is_given_back() {
    let server = RedisServer::start();
    let url = server.url();
    let (code, stderr) = to_dev_full(&words(&url, "lock unprinted --acquire --ttl 1h"));
    assert_eq!(code, Some(SOFTWARE), "{stderr}");
    assert!(stderr.contains("cannot write to stdout"), "{stderr}");
    let exists: i64 = server.query(&["EXISTS", "unprinted"]);
    assert_eq!(exists, 0, "the lock is still held: {stderr}");
    // The fencing counter was raised; that is a gap, never a repeat.
    let taken = common::run_ok(
        &["--redis", &url, "lock", "unprinted", "--acquire", "-n"],
        &[],
        COMMAND_TIMEOUT,
    );
    assert!(taken.stdout.contains("YARAUS_LOCK_TOKEN="), "{taken:?}");
}

/// A reader that stops reading is not an error for output that streams
/// (`yaraus index NAME --print | head -1`).
#[test]
fn a_reader_that_goes_away_ends_index_print_cleanly() {
    let server = RedisServer::start();
    let mut child = common::yaraus()
        .args(words(
            &server.url(),
            "index closed --interval 100ms --print",
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    use std::io::Read;
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let deadline = std::time::Instant::now() + COMMAND_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "index --print went on after its reader left"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(0));
}
