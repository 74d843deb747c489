//! Helpers of the `yaraus lock` tests, on top of the shared harness
//! (`tests/common`): sets of masters, the `yaraus lock` command line for them,
//! running it with a deadline, and reading what the children wrote.
//!
//! Nothing here sleeps to let time pass: every wait is on something the test
//! can observe (a process ending, a file growing, a key appearing).
#![allow(dead_code)]

// Re-exported for the lock tests, which glob-import this module; unused in
// the other test crates that compile tests/common.
#[allow(unused_imports)]
pub use super::process::{alive, read_pid_file as read_pid};
use super::{RedisServer, ServerOptions, wait_until, yaraus};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::Duration;

/// How long any single `yaraus lock` of these tests may run before the test
/// fails (far above what any of them needs).
pub const PROCESS_TIMEOUT: Duration = Duration::from_secs(90);

/// `n` fresh masters on unix sockets; with `fsync`, each persists every write
/// before replying (what several masters require for fencing tokens).
pub fn masters(n: usize, fsync: bool) -> Vec<RedisServer> {
    (0..n)
        .map(|_| {
            RedisServer::start_with(ServerOptions {
                appendfsync_always: fsync,
                ..ServerOptions::default()
            })
        })
        .collect()
}

/// `yaraus lock` with a `--redis` per server.
pub fn lock_cmd(servers: &[&RedisServer]) -> Command {
    let mut cmd = yaraus();
    cmd.arg("lock");
    for s in servers {
        cmd.arg("--redis").arg(s.url());
    }
    cmd
}

/// Scripts `server` has run (`EVALSHA` calls that did not fail): a lock's
/// attempts, seen from the server.
pub fn scripts_run(server: &RedisServer) -> u64 {
    let info: String = server.query(&["INFO", "commandstats"]);
    let field = |line: &str, name: &str| -> u64 {
        line.split([',', ':'])
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    info.lines()
        .find(|l| l.starts_with("cmdstat_evalsha:"))
        .map_or(0, |l| field(l, "calls") - field(l, "failed_calls"))
}

/// All of a set, borrowed.
pub fn all(servers: &[RedisServer]) -> Vec<&RedisServer> {
    servers.iter().collect()
}

/// Runs `cmd` to the end (stdin closed), failing the test after [`PROCESS_TIMEOUT`].
pub fn run(cmd: &mut Command) -> Output {
    finish(start(cmd))
}

/// Starts `cmd` with stdin closed and both outputs piped, for [`finish`].
pub fn start(cmd: &mut Command) -> Child {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn yaraus")
}

/// Waits for a child started with piped output, within [`PROCESS_TIMEOUT`].
pub fn finish(mut child: Child) -> Output {
    let mut status = None;
    let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_until("yaraus lock to exit", PROCESS_TIMEOUT, || {
            status = child.try_wait().expect("try_wait");
            status.is_some()
        })
    }));
    if waited.is_err() {
        let _ = child.kill();
        let output = child.wait_with_output().expect("collect output");
        panic!(
            "yaraus lock did not exit within {PROCESS_TIMEOUT:?}; stderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    child.wait_with_output().expect("collect output")
}

/// The exit code, or 128+N for a signal (as a shell reports it).
pub fn code(status: &ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Asserts the exit code, showing stderr when it differs.
pub fn assert_code(output: &Output, expected: i32) {
    assert_eq!(
        code(&output.status),
        expected,
        "unexpected exit status; stderr:\n{}",
        stderr(output)
    );
}

/// The value of a string key, if any.
pub fn get(server: &RedisServer, key: &str) -> Option<String> {
    server
        .try_query::<Option<String>>(&["GET", key])
        .ok()
        .flatten()
}

/// Lines of a file that children append to (empty when it does not exist).
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The shell script of a child that records its stay in the critical
/// section: `start PID NANOS`, a short pause, `stop PID NANOS`.
pub fn critical_section(log: &Path) -> String {
    format!(
        "echo \"start $$ $(date +%s%N)\" >> {log}; sleep 0.1; echo \"stop $$ $(date +%s%N)\" >> {log}",
        log = log.display()
    )
}

/// Asserts that the critical-section log shows `expected` stays that never
/// overlapped: every `start` is followed by the `stop` of the same process
/// before any other `start`, and the timestamps never go back.
pub fn assert_no_overlap(log: &Path, expected: usize) {
    let lines = lines(log);
    assert_eq!(
        lines.len(),
        expected * 2,
        "expected {expected} start/stop pairs, got:\n{}",
        lines.join("\n")
    );
    let mut last_stop: u128 = 0;
    for pair in lines.chunks(2) {
        let start: Vec<&str> = pair[0].split_whitespace().collect();
        let stop: Vec<&str> = pair[1].split_whitespace().collect();
        assert!(
            start.len() == 3 && stop.len() == 3 && start[0] == "start" && stop[0] == "stop",
            "two holders overlapped:\n{}",
            lines.join("\n")
        );
        assert_eq!(
            start[1],
            stop[1],
            "two holders overlapped:\n{}",
            lines.join("\n")
        );
        let (t0, t1): (u128, u128) = (start[2].parse().unwrap(), stop[2].parse().unwrap());
        assert!(
            t0 >= last_stop && t1 >= t0,
            "intervals overlap in time:\n{}",
            lines.join("\n")
        );
        last_stop = t1;
    }
}
