//! yaraus as a running process of a test (`Run`), the command lines that
//! start it, and what /proc says about the processes it supervises.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::RedisServer;
use super::pool::NS;
use super::scratch::Scratch;
use super::{EVENT, wait_until};

// ----- command lines -------------------------------------------------------

/// `yaraus ARGS`, with `$D` set to the scratch directory, which is also the
/// working directory (so that a core dump, if any, lands there), and stdin
/// closed.
pub fn yaraus_in(scratch: &Scratch, args: &[&str]) -> Command {
    let mut cmd = super::yaraus();
    cmd.args(args)
        .env("D", scratch.dir())
        .current_dir(scratch.dir())
        .stdin(Stdio::null());
    cmd
}

/// `yaraus run --redis URL OPTS -- COMMAND`, as [`yaraus_in`].
pub fn run_cmd(url: &str, scratch: &Scratch, opts: &[&str], command: &[&str]) -> Command {
    let mut cmd = yaraus_in(scratch, &["run", "--redis", url]);
    cmd.args(opts).arg("--").args(command);
    cmd
}

/// `yaraus lock --redis URL NAME OPTS -- COMMAND`, as [`yaraus_in`].
pub fn lock_cmd(
    url: &str,
    scratch: &Scratch,
    name: &str,
    opts: &[&str],
    command: &[&str],
) -> Command {
    let mut cmd = yaraus_in(scratch, &["lock", "--redis", url, name]);
    cmd.args(opts).arg("--").args(command);
    cmd
}

/// Timings for `yaraus run` with the safeguards on: `--interval 100ms
/// --expire E --kill-after K --delay D`.
pub const fn safe_timings(
    expire: &'static str,
    kill_after: &'static str,
    delay: &'static str,
) -> [&'static str; 8] {
    [
        "--interval",
        "100ms",
        "--expire",
        expire,
        "--kill-after",
        kill_after,
        "--delay",
        delay,
    ]
}

/// Short timings for `yaraus run`, safeguards off, with the given lease
/// length and kill-after: [`safe_timings`] with `--delay 0`, then
/// `--no-safeguards`.
pub const fn timings(expire: &'static str, kill_after: &'static str) -> [&'static str; 9] {
    let safe = safe_timings(expire, kill_after, "0");
    let mut out = ["--no-safeguards"; 9];
    let mut i = 0;
    while i < safe.len() {
        out[i] = safe[i];
        i += 1;
    }
    out
}

pub fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    [base, more].concat()
}

// ----- a running yaraus ----------------------------------------------------

static RUNS: AtomicUsize = AtomicUsize::new(0);

/// A running yaraus (any subcommand), its stderr (the log) and stdout in
/// files. Dropping it SIGKILLs yaraus if it still runs (its child follows, by
/// PDEATHSIG and the guard), and prints its log when the test is failing.
pub struct Run {
    child: Child,
    status: Option<ExitStatus>,
    log: PathBuf,
    out: PathBuf,
    pub name: String,
}

impl Run {
    /// `yaraus run` with [`run_cmd`].
    pub fn start(url: &str, scratch: &Scratch, opts: &[&str], command: &[&str]) -> Run {
        Run::spawn(run_cmd(url, scratch, opts, command), scratch)
    }

    /// Starts `cmd` with stdout and stderr going to files of the scratch
    /// directory.
    pub fn spawn(cmd: Command, scratch: &Scratch) -> Run {
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let log = scratch.path(&format!("yaraus-{n}.log"));
        let stderr = File::create(&log).expect("log file");
        Run::launch(cmd, scratch, n, log, stderr.into())
    }

    /// Starts `cmd` with stdout going to a file and stderr to `stderr`
    /// ([`Run::log`] is then empty).
    pub fn spawn_with_stderr(cmd: Command, scratch: &Scratch, stderr: Stdio) -> Run {
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let log = scratch.path(&format!("yaraus-{n}.log"));
        File::create(&log).expect("log file");
        Run::launch(cmd, scratch, n, log, stderr)
    }

    fn launch(mut cmd: Command, scratch: &Scratch, n: usize, log: PathBuf, stderr: Stdio) -> Run {
        let out = scratch.path(&format!("yaraus-{n}.out"));
        cmd.stdout(File::create(&out).expect("stdout file"))
            .stderr(stderr);
        let child = cmd.spawn().expect("spawn yaraus");
        Run {
            child,
            status: None,
            log,
            out,
            name: format!("yaraus #{n}"),
        }
    }

    pub fn pid(&self) -> Pid {
        Pid::from_raw(self.child.id() as i32)
    }

    /// The pipe to stdin, when the command was given `Stdio::piped()`.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// What went to stdout.
    pub fn output(&self) -> String {
        fs::read_to_string(&self.out).unwrap_or_default()
    }

    pub fn wait_log(&self, needle: &str) {
        wait_until(&format!("{} to log {needle:?}", self.name), EVENT, || {
            self.log().contains(needle)
        });
    }

    pub fn signal(&self, sig: Signal) {
        kill(self.pid(), sig).unwrap_or_else(|e| panic!("kill -{sig} {}: {e}", self.name));
    }

    pub fn exited(&mut self) -> bool {
        if self.status.is_none() {
            self.status = self.child.try_wait().expect("try_wait yaraus");
        }
        self.status.is_some()
    }

    /// Waits for yaraus to exit; returns its exit code.
    pub fn wait(&mut self) -> i32 {
        let name = self.name.clone();
        wait_until(&format!("{name} to exit"), EVENT, || self.exited());
        let status = self.status.expect("status");
        status
            .code()
            .unwrap_or_else(|| panic!("{name} itself died: {status}\nits log:\n{}", self.log()))
    }

    /// `(client id, worker id)` from the "client id: X, id: N" log line.
    pub fn lease(&self) -> Option<(String, u64)> {
        let log = self.log();
        let line = log.lines().find(|l| l.contains("client id: "))?;
        let rest = &line[line.find("client id: ")? + "client id: ".len()..];
        let (client, id) = rest.split_once(", id: ")?;
        Some((client.to_string(), id.trim().parse().ok()?))
    }

    pub fn wait_lease(&self) -> (String, u64) {
        self.wait_log("client id: ");
        self.lease().expect("a 'client id: X, id: N' line")
    }

    /// The last line of the log.
    pub fn last_line(&self) -> String {
        self.log().lines().last().unwrap_or("").to_string()
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if !self.exited() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if thread::panicking() {
            eprintln!(
                "--- stderr of {}:\n{}--- stdout:\n{}---",
                self.name,
                self.log(),
                self.output()
            );
        }
    }
}

/// `yaraus run` with `opts` on namespace [`NS`] of `server`, running the
/// shell script `body` (written to `child.sh` in the scratch directory).
pub fn run_script(server: &RedisServer, scratch: &Scratch, opts: &[&str], body: &str) -> Run {
    let child = scratch.script("child.sh", body);
    Run::start(&server.url_ns(NS), scratch, opts, &["sh", &child])
}

/// The body of a child that runs `prologue` (a `trap`, usually), writes its
/// pid to `$D/pid` and loops until it is killed.
pub fn waiting_child(prologue: &str) -> String {
    format!("{prologue}\necho $$ > \"$D/pid\"\nwhile :; do sleep 0.05; done\n")
}

/// The body of a holder's command (`sh -c`): it touches `started`, then
/// holds on until `go` exists, so that a test or a bench decides when it
/// lets go.
pub fn holds_until_go(started: &Path, go: &Path) -> String {
    format!(
        "touch {}; while [ ! -e {} ]; do sleep 0.01; done",
        started.display(),
        go.display()
    )
}

/// Runs `yaraus run` to completion; returns the exit code and the finished run.
pub fn run_to_end(url: &str, scratch: &Scratch, opts: &[&str], command: &[&str]) -> (i32, Run) {
    let mut run = Run::start(url, scratch, opts, command);
    let code = run.wait();
    (code, run)
}

// ----- processes -----------------------------------------------------------

/// `(state, process group)` from /proc/PID/stat, None if there is no such process.
pub fn proc_stat(pid: i32) -> Option<(char, i32)> {
    let fields = stat_fields(pid)?;
    let state = fields.first()?.chars().next()?;
    let pgrp = fields.get(2)?.parse().ok()?;
    Some((state, pgrp))
}

/// The fields of /proc/PID/stat after the command name: `[state, ppid,
/// pgrp, session, tty_nr, tpgid, ...]`.
fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(
        stat[stat.rfind(')')? + 1..]
            .split_whitespace()
            .map(str::to_string)
            .collect(),
    )
}

/// The parent of `pid`, None if there is no such process.
pub fn parent_of(pid: i32) -> Option<i32> {
    stat_fields(pid)?.get(1)?.parse().ok()
}

/// The foreground process group of the terminal `pid` is attached to
/// (`tpgid`), None without a terminal or without such a process.
pub fn terminal_foreground(pid: i32) -> Option<i32> {
    let tpgid: i32 = stat_fields(pid)?.get(5)?.parse().ok()?;
    (tpgid > 0).then_some(tpgid)
}

/// True while `pid` is a process that can still run (not gone, not a zombie).
pub fn alive(pid: i32) -> bool {
    matches!(proc_stat(pid), Some((state, _)) if state != 'Z' && state != 'X')
}

/// When `pid` started, in ns since boot (`/proc/PID/stat` field 22, in
/// USER_HZ ticks: 100 a second on x86_64 and aarch64, a fixed part of the
/// kernel's ABI there).
pub fn started_ns(pid: i32) -> Option<u64> {
    const USER_HZ: u64 = 100;
    let ticks: u64 = stat_fields(pid)?.get(19)?.parse().ok()?;
    Some(ticks * (1_000_000_000 / USER_HZ))
}

/// [`alive`], for the process that was already running at `at` (ns on the
/// monotonic clock, which is the boot clock's on a machine that does not
/// suspend): a pid that a later process reused is not it.
pub fn alive_since(pid: i32, at: u64) -> bool {
    alive(pid) && started_ns(pid).is_some_and(|started| started <= at)
}

/// The processes of group `pgid` that can still run.
pub fn live_members(pgid: i32) -> Vec<i32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| matches!(proc_stat(pid), Some((s, g)) if g == pgid && s != 'Z' && s != 'X'))
        .collect()
}

/// The pid a child wrote to `name` in the scratch directory, once it is there.
pub fn read_pid(scratch: &Scratch, name: &str) -> i32 {
    read_pid_file(&scratch.path(name))
}

/// The pid a child wrote to the file `path`, once a whole line is there.
pub fn read_pid_file(path: &Path) -> i32 {
    let mut pid = 0;
    wait_until(&format!("{} to hold a pid", path.display()), EVENT, || {
        pid = fs::read_to_string(path)
            .ok()
            .filter(|s| s.ends_with('\n'))
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        pid > 0
    });
    pid
}

/// Whether `pid` runs the yaraus binary under test (by its executable, or
/// by its name when the executable cannot be read).
pub fn is_yaraus(pid: i32) -> bool {
    let binary = Path::new(env!("CARGO_BIN_EXE_yaraus"));
    let binary = fs::canonicalize(binary).unwrap_or_else(|_| binary.to_path_buf());
    match fs::read_link(format!("/proc/{pid}/exe")) {
        Ok(exe) => exe == binary,
        Err(_) => fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|comm| comm.trim_end() == "yaraus"),
    }
}

/// The yaraus process that supervises `child_pid`: the outermost of the
/// nearest chain of yaraus processes among its ancestors. That is the parent
/// when yaraus starts the command itself, and the grandparent when a
/// watchdog process (a copy of yaraus, or anything else) stands between them.
pub fn yaraus_ancestor(child_pid: i32) -> Option<i32> {
    let mut pid = parent_of(child_pid)?;
    while pid > 1 && !is_yaraus(pid) {
        pid = parent_of(pid)?;
    }
    if pid <= 1 {
        return None;
    }
    while let Some(parent) = parent_of(pid) {
        if parent <= 1 || !is_yaraus(parent) {
            break;
        }
        pid = parent;
    }
    Some(pid)
}

/// SIGKILLs the processes whose pids it holds when dropped: the processes a
/// test's children started that may outlive a failing test (an escapee, a
/// grandchild yaraus failed to kill).
#[derive(Default)]
pub struct KillOnDrop(pub Vec<i32>);

impl KillOnDrop {
    pub fn add(&mut self, pid: i32) {
        self.0.push(pid);
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for &pid in &self.0 {
            if alive(pid) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
    }
}
