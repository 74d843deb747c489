//! The supervision promise of `yaraus run` and `yaraus lock`, against real
//! redis-server processes, real signals and real children:
//!
//! **no process started for a claim runs after the claim's deadline, and the
//! deadline comes before the server-side expiry.** SIGTERM goes at (deadline
//! − kill-after) and SIGKILL at the deadline, so even a child that ignores
//! SIGTERM is dead before the claim expires in Redis — whatever happens to
//! yaraus (its process group killed, frozen, stopped by Ctrl-Z, blocked on a
//! full stderr) and whatever the child does (leave its process group, leave
//! its session).
//!
//! Timing is observed, never assumed: the children append heartbeats (`date
//! +%s.%N`, wall clock, every ~20 ms) to `$D/beats`, and the last one is
//! compared with the expiry the server holds — the id's score in `t:ids`, or
//! for a lock the server's `TIME` + `PTTL` of its key. Both clocks are this
//! machine's. Where the expiry is read before a fault, writes are paused on
//! the server first (`CLIENT PAUSE ... WRITE`), so that no renewal can slip in
//! between the reading and the fault: the expiry read is then the last one
//! yaraus can know of. Every other wait is a `wait_until` on an event.

mod common;

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;

use common::pool::{CLIENTS, NS, enc, init_pool, score, server_now, stat};
use common::process::{
    KillOnDrop, Run, alive, is_yaraus, live_members, lock_cmd, proc_stat, read_pid, run_cmd,
    terminal_foreground, timings, yaraus_ancestor, yaraus_in,
};
use common::pty::{bash_available, on_a_pty, pty_available, shell_words};
use common::scratch::Scratch;
use common::{EVENT, RedisServer, wait_until};
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// The exit status of a run whose claim was lost and whose command was killed.
const EXIT_LOST: i32 = 124;
/// The exit status of a usage error.
const EXIT_USAGE: i32 = 2;

/// The body of a child that writes heartbeats until it is killed.
const HEARTBEAT: &str = r#"echo $$ > "$D/pid"
while :; do date +%s.%N >> "$D/beats"; sleep 0.02; done
"#;

/// The same, ignoring SIGTERM (and so do the `date` and `sleep` it starts):
/// only SIGKILL ends it.
const STUBBORN_HEARTBEAT: &str = r#"trap '' TERM
echo $$ > "$D/pid"
while :; do date +%s.%N >> "$D/beats"; sleep 0.02; done
"#;

// ----- helpers ---------------------------------------------------------------

/// The last heartbeat the children wrote to `$D/beats`, in Unix seconds.
fn last_beat(scratch: &Scratch) -> f64 {
    let beats = scratch.lines("beats");
    let last = beats.last().expect("no heartbeat was written");
    last.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a heartbeat: {last:?}"))
}

/// Waits until the child has written its first heartbeat.
fn wait_beating(scratch: &Scratch) {
    scratch.wait_line("beats");
}

/// Asserts that the last heartbeat came before `expiry` (Unix seconds).
fn assert_beats_end_before(scratch: &Scratch, expiry: f64, what: &str) {
    let last = last_beat(scratch);
    assert!(
        last < expiry,
        "{what}: the last heartbeat ({last:.6}) is {:.3} s after the server-side expiry \
         ({expiry:.6}): the child ran after its claim expired",
        last - expiry
    );
}

/// Waits until the process `pid` is dead, and so is every other process of
/// the process group it was in (a `date` or `sleep` it started) — yaraus
/// processes (a watchdog) excepted.
fn wait_child_and_group_dead(pid: i32, pgid: i32, what: &str) {
    wait_until(what, EVENT, || {
        !alive(pid)
            && live_members(pgid)
                .into_iter()
                .all(|p| p == pid || is_yaraus(p))
    });
}

/// The process group of a live process.
fn pgid_of(pid: i32) -> i32 {
    proc_stat(pid)
        .map(|(_, g)| g)
        .unwrap_or_else(|| panic!("process {pid} is gone"))
}

fn state(pid: i32) -> Option<char> {
    proc_stat(pid).map(|(s, _)| s)
}

/// Pauses every write command (scripts included) on the server, so that no
/// renewal can change an expiry read afterwards. Reads still work.
fn pause_writes(server: &RedisServer) {
    server.cmd(&["CLIENT", "PAUSE", "600000", "WRITE"]);
}

fn unpause(server: &RedisServer) {
    server.cmd(&["CLIENT", "UNPAUSE"]);
}

/// Waits for `yaraus run` to have renewed its lease at least once.
fn wait_renewal(server: &RedisServer) {
    wait_until("a renewal of the lease", EVENT, || {
        stat(server, "extend_ttl_success") >= 1
    });
}

fn pttl(server: &RedisServer, key: &str) -> i64 {
    server.query(&["PTTL", key])
}

/// Waits until the lock `key` has been extended once (its PTTL went up).
fn wait_extension(server: &RedisServer, key: &str) {
    let mut last = pttl(server, key);
    assert!(last > 0, "the lock {key} is not held (PTTL {last})");
    wait_until(&format!("an extension of the lock {key}"), EVENT, || {
        let now = pttl(server, key);
        let extended = now > last;
        last = now;
        extended
    });
}

/// When the lock `key` expires on the server: its `TIME` + `PTTL key`, read
/// atomically, in Unix seconds.
fn lock_expiry(server: &RedisServer, key: &str) -> f64 {
    let mut conn = server.conn();
    let ((secs, micros), pttl): ((u64, u64), i64) = redis::pipe()
        .atomic()
        .cmd("TIME")
        .cmd("PTTL")
        .arg(key)
        .query(&mut conn)
        .expect("TIME + PTTL");
    assert!(pttl > 0, "the lock {key} is not held (PTTL {pttl})");
    secs as f64 + micros as f64 / 1e6 + pttl as f64 / 1e3
}

// ===========================================================================
// 1. The process group of yaraus killed at once (`kill -9 %1`).
// ===========================================================================

/// The child leaves two sleeps in its group; yaraus leads a group of its
/// own, which is SIGKILLed as a whole. Both sleeps must die with it.
fn kill_the_group_of_yaraus(mut cmd: Command, scratch: &Scratch, what: &str) {
    cmd.process_group(0);
    let mut run = Run::spawn(cmd, scratch);
    let a = read_pid(scratch, "a");
    let b = read_pid(scratch, "b");
    let _leftovers = KillOnDrop(vec![a, b]);
    assert!(alive(a) && alive(b));
    assert!(!run.exited(), "{}", run.log());

    killpg(run.pid(), Signal::SIGKILL).expect("kill -9 the group of yaraus");
    wait_until("yaraus to die", EVENT, || run.exited());
    for (sleep, pid) in [("sleep 1001", a), ("sleep 1002", b)] {
        wait_until(
            &format!("{sleep} (pid {pid}) to die with the process group of {what}"),
            EVENT,
            || !alive(pid),
        );
    }
}

const TWO_SLEEPS: &str = r#"sleep 1001 & echo $! > "$D/a"; sleep 1002 & echo $! > "$D/b"; wait"#;

#[test]
fn killing_yaraus_process_group_kills_the_grandchildren_too() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let cmd = run_cmd(
        &server.url_ns(NS),
        &scratch,
        &timings("30s", "300ms"),
        &["sh", "-c", TWO_SLEEPS],
    );
    kill_the_group_of_yaraus(cmd, &scratch, "yaraus run");
}

#[test]
fn killing_yaraus_lock_process_group_kills_the_grandchildren_too() {
    let server = RedisServer::start();
    let scratch = Scratch::new();
    let cmd = lock_cmd(
        &server.url_ns(NS),
        &scratch,
        "group",
        &["--ttl", "30s", "--kill-after", "300ms"],
        &["sh", "-c", TWO_SLEEPS],
    );
    kill_the_group_of_yaraus(cmd, &scratch, "yaraus lock");
}

// ===========================================================================
// 2. A descendant that leaves the session (setsid).
// ===========================================================================

/// Starts a SIGTERM-proof heartbeat process in a session of its own, and
/// waits until it has written its pid to `$D/esc`.
const START_ESCAPEE: &str = r#"setsid sh -c 'trap "" TERM; echo $$ > "$D/esc"; while :; do date +%s.%N >> "$D/beats"; sleep 0.02; done' &
while [ ! -s "$D/esc" ]; do sleep 0.01; done
"#;

#[test]
fn a_descendant_that_calls_setsid_is_killed_before_the_id_is_released() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let child = scratch.script("child.sh", &format!("{START_ESCAPEE}exit 0\n"));
    let mut run = Run::start(
        &server.url_ns(NS),
        &scratch,
        &timings("30s", "300ms"),
        &["sh", &child],
    );
    let escapee = read_pid(&scratch, "esc");
    let _leftovers = KillOnDrop(vec![escapee]);

    assert_eq!(run.wait(), 0, "{}", run.log());
    // Dead (or a zombie waiting for init) once yaraus has exited, and so is
    // whatever it was running (its `date`, its `sleep`).
    assert!(
        !alive(escapee),
        "the escapee (pid {escapee}, its own session) still runs after yaraus exited"
    );
    assert_eq!(
        live_members(escapee),
        Vec::<i32>::new(),
        "processes of the escapee's group still run after yaraus exited"
    );
    // The release set the id's score to the server's now: the release
    // instant. The escapee must have been dead before it.
    let released = score(&server, 1).expect("id 1 in the pool");
    let last = last_beat(&scratch);
    assert!(
        last < released,
        "the escapee's last heartbeat ({last:.6}) is {:.3} s after the release ({released:.6})",
        last - released
    );
}

#[test]
fn a_descendant_that_calls_setsid_is_killed_when_the_id_is_lost() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let child = scratch.script(
        "child.sh",
        &format!("{START_ESCAPEE}echo $$ > \"$D/pid\"\nwhile :; do sleep 0.05; done\n"),
    );
    let mut run = Run::start(
        &server.url_ns(NS),
        &scratch,
        &timings("30s", "300ms"),
        &["sh", &child],
    );
    let escapee = read_pid(&scratch, "esc");
    let _leftovers = KillOnDrop(vec![escapee]);
    read_pid(&scratch, "pid");

    server.cmd(&["HSET", CLIENTS, &enc(1), "thief"]);
    assert_eq!(run.wait(), EXIT_LOST, "{}", run.log());
    assert!(
        !alive(escapee),
        "the escapee (pid {escapee}, its own session) still runs after yaraus lost the id"
    );
    assert_eq!(
        live_members(escapee),
        Vec::<i32>::new(),
        "processes of the escapee's group still run after yaraus lost the id"
    );
}

// ===========================================================================
// 3. A stderr nobody reads.
// ===========================================================================

/// Sets or clears O_NONBLOCK on an open file description.
fn set_nonblocking(fd: &OwnedFd, on: bool) {
    let flags = OFlag::from_bits_truncate(fcntl(fd.as_fd(), FcntlArg::F_GETFL).expect("F_GETFL"));
    let flags = if on {
        flags | OFlag::O_NONBLOCK
    } else {
        flags - OFlag::O_NONBLOCK
    };
    fcntl(fd.as_fd(), FcntlArg::F_SETFL(flags)).expect("F_SETFL");
}

/// Writes to the pipe until it is full (non-blocking for the time it takes).
fn fill_pipe(fd: &OwnedFd) {
    set_nonblocking(fd, true);
    let mut file = File::from(fd.try_clone().expect("dup the write end"));
    for chunk in [4096, 1] {
        let buf = vec![b'x'; chunk];
        loop {
            match file.write(&buf) {
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => panic!("filling the pipe: {e}"),
            }
        }
    }
    set_nonblocking(fd, false);
}

/// Reads the pipe to its end in a thread; what it read is in the result.
fn drain_pipe(read: OwnedFd) -> Arc<Mutex<Vec<u8>>> {
    let drained = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&drained);
    thread::spawn(move || {
        let mut file = File::from(read);
        let mut buf = [0u8; 8192];
        while let Ok(n) = file.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    drained
}

#[test]
fn a_blocked_stderr_does_not_keep_the_child_alive_past_the_expiry() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let child = scratch.script("child.sh", HEARTBEAT);
    let (read_end, write_end) = nix::unistd::pipe2(OFlag::O_CLOEXEC).expect("pipe");
    // The same open file description as yaraus's stderr: its O_NONBLOCK is
    // yaraus's too.
    let ours = write_end.try_clone().expect("dup the write end");
    let mut cmd = yaraus_in(&scratch, &["--quiet", "run", "--redis", &server.url_ns(NS)]);
    cmd.args(timings("2s", "300ms")).args(["--", "sh", &child]);
    let mut run = Run::spawn_with_stderr(cmd, &scratch, Stdio::from(write_end));
    let pid = read_pid(&scratch, "pid");
    let pgid = pgid_of(pid);
    wait_beating(&scratch);
    wait_renewal(&server);

    // Nobody reads the pipe, and it is full: any warning blocks.
    fill_pipe(&ours);
    pause_writes(&server);
    let expiry = score(&server, 1).expect("id 1 in the pool");
    server.sigstop();

    wait_child_and_group_dead(
        pid,
        pgid,
        "the child to be killed while yaraus's stderr is full and Redis is frozen",
    );
    assert_beats_end_before(&scratch, expiry, "stderr full, Redis frozen");

    server.sigcont();
    unpause(&server);
    // yaraus exits too, with the pipe still full and unread: its last
    // lines are dropped (bounded wait), never waited for.
    drop(ours);
    let code = run.wait();
    let drained = drain_pipe(read_end);
    assert_eq!(
        code,
        EXIT_LOST,
        "stderr: {}",
        String::from_utf8_lossy(&drained.lock().unwrap()).trim_start_matches('x')
    );
}

// ===========================================================================
// 4. --kill-after inside the validity.
// ===========================================================================

#[test]
fn a_child_ignoring_sigterm_is_dead_before_the_lease_expires_when_redis_freezes() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let child = scratch.script("child.sh", STUBBORN_HEARTBEAT);
    let mut run = Run::start(
        &server.url_ns(NS),
        &scratch,
        &timings("2s", "800ms"),
        &["sh", &child],
    );
    let pid = read_pid(&scratch, "pid");
    let pgid = pgid_of(pid);
    wait_beating(&scratch);
    wait_renewal(&server);

    pause_writes(&server);
    let expiry = score(&server, 1).expect("id 1 in the pool");
    server.sigstop();
    wait_child_and_group_dead(pid, pgid, "the child to be killed while Redis is frozen");
    assert_beats_end_before(&scratch, expiry, "run, --kill-after 800ms");

    server.sigcont();
    unpause(&server);
    assert_eq!(run.wait(), EXIT_LOST, "{}", run.log());
}

#[test]
fn a_child_ignoring_sigterm_is_dead_before_the_lock_expires_when_redis_freezes() {
    let server = RedisServer::start();
    let scratch = Scratch::new();
    let child = scratch.script("child.sh", STUBBORN_HEARTBEAT);
    let mut run = Run::spawn(
        lock_cmd(
            &server.url_ns(NS),
            &scratch,
            "frozen",
            &["--ttl", "3s", "--kill-after", "800ms"],
            &["sh", &child],
        ),
        &scratch,
    );
    let pid = read_pid(&scratch, "pid");
    let pgid = pgid_of(pid);
    wait_beating(&scratch);
    wait_extension(&server, "frozen");

    pause_writes(&server);
    let expiry = lock_expiry(&server, "frozen");
    server.sigstop();
    wait_child_and_group_dead(pid, pgid, "the child to be killed while Redis is frozen");
    assert_beats_end_before(&scratch, expiry, "lock, --kill-after 800ms");

    server.sigcont();
    unpause(&server);
    assert_eq!(run.wait(), EXIT_LOST, "{}", run.log());
}

/// Runs `cmd` (whose command touches `$D/ran`) and asserts a usage error
/// about --kill-after: exit 2, one line, Redis unchanged, nothing run.
fn assert_kill_after_refused(server: &RedisServer, scratch: &Scratch, cmd: Command, what: &str) {
    let before = server.snapshot();
    let mut run = Run::spawn(cmd, scratch);
    let code = run.wait();
    let stderr = run.log();
    assert_eq!(code, EXIT_USAGE, "{what}: stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{what}: not one line: {stderr}");
    assert!(stderr.contains("--kill-after"), "{what}: {stderr}");
    assert!(!scratch.exists("ran"), "{what}: the command ran");
    assert_eq!(server.snapshot(), before, "{what}: Redis changed");
}

#[test]
fn a_kill_after_that_does_not_fit_in_the_lock_validity_is_a_usage_error() {
    let server = RedisServer::start();
    let scratch = Scratch::new();
    // validity 2s − 1% − 2ms = 1978ms; minus the extension interval
    // (ttl/3 = 666ms) leaves 1312ms < 1500ms.
    let cmd = lock_cmd(
        &server.url_ns(NS),
        &scratch,
        "fit",
        &["--ttl", "2s", "--kill-after", "1500ms"],
        &["touch", &scratch.arg("ran")],
    );
    assert_kill_after_refused(&server, &scratch, cmd, "lock --ttl 2s --kill-after 1500ms");
}

#[test]
fn a_kill_after_that_does_not_fit_in_the_lease_validity_is_a_usage_error() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    // validity 2s − 1% − 2ms = 1978ms; minus the interval (500ms) leaves
    // 1478ms < 1800ms: no room for a renewal before the SIGTERM.
    let cmd = run_cmd(
        &server.url_ns(NS),
        &scratch,
        &[
            "--expire",
            "2s",
            "--interval",
            "500ms",
            "--kill-after",
            "1800ms",
            "--delay",
            "0",
        ],
        &["touch", &scratch.arg("ran")],
    );
    assert_kill_after_refused(
        &server,
        &scratch,
        cmd,
        "run --expire 2s --interval 500ms --kill-after 1800ms",
    );
    // --no-safeguards gives up the room for renewals, not the budget: a
    // kill-after longer than the whole validity is refused all the same.
    let cmd = run_cmd(
        &server.url_ns(NS),
        &scratch,
        &[
            "--expire",
            "2s",
            "--interval",
            "500ms",
            "--kill-after",
            "2s",
            "--delay",
            "0",
            "--no-safeguards",
        ],
        &["touch", &scratch.arg("ran")],
    );
    assert_kill_after_refused(
        &server,
        &scratch,
        cmd,
        "run --expire 2s --kill-after 2s --no-safeguards",
    );
}

// ===========================================================================
// 5. yaraus itself frozen (SIGSTOP to yaraus alone).
// ===========================================================================

/// Freezes yaraus alone (not its group) and asserts that its child is dead
/// before `expiry`, read with writes paused; then thaws everything and
/// expects 124.
fn freeze_yaraus_and_check(
    server: &RedisServer,
    scratch: &Scratch,
    mut run: Run,
    pid: i32,
    read_expiry: impl FnOnce() -> f64,
    what: &str,
) {
    let pgid = pgid_of(pid);
    pause_writes(server);
    let expiry = read_expiry();
    kill(run.pid(), Signal::SIGSTOP).expect("SIGSTOP yaraus");
    let yaraus = run.pid().as_raw();
    wait_until("yaraus to stop", EVENT, || state(yaraus) == Some('T'));

    wait_child_and_group_dead(pid, pgid, "the child to be killed while yaraus is stopped");
    assert_beats_end_before(scratch, expiry, what);

    unpause(server);
    kill(run.pid(), Signal::SIGCONT).expect("SIGCONT yaraus");
    assert_eq!(run.wait(), EXIT_LOST, "{}", run.log());
}

#[test]
fn a_frozen_yaraus_run_still_gets_its_child_killed_before_the_lease_expires() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let child = scratch.script("child.sh", STUBBORN_HEARTBEAT);
    let run = Run::start(
        &server.url_ns(NS),
        &scratch,
        &timings("2s", "300ms"),
        &["sh", &child],
    );
    let pid = read_pid(&scratch, "pid");
    wait_beating(&scratch);
    wait_renewal(&server);
    freeze_yaraus_and_check(
        &server,
        &scratch,
        run,
        pid,
        || score(&server, 1).expect("id 1 in the pool"),
        "yaraus run stopped",
    );
}

#[test]
fn a_frozen_yaraus_lock_still_gets_its_child_killed_before_the_lock_expires() {
    let server = RedisServer::start();
    let scratch = Scratch::new();
    let child = scratch.script("child.sh", STUBBORN_HEARTBEAT);
    let run = Run::spawn(
        lock_cmd(
            &server.url_ns(NS),
            &scratch,
            "stopped",
            &["--ttl", "3s", "--kill-after", "300ms"],
            &["sh", &child],
        ),
        &scratch,
    );
    let pid = read_pid(&scratch, "pid");
    wait_beating(&scratch);
    wait_extension(&server, "stopped");
    freeze_yaraus_and_check(
        &server,
        &scratch,
        run,
        pid,
        || lock_expiry(&server, "stopped"),
        "yaraus lock stopped",
    );
}

// ===========================================================================
// 6. Job control on a terminal: Ctrl-Z, fg, a background job.
// ===========================================================================

fn job_control_available() -> bool {
    if pty_available() && bash_available() {
        return true;
    }
    eprintln!("skipped: script(1) or bash is missing, or no pty can be opened");
    false
}

/// The command line that starts `yaraus run` with `opts` on `child.sh`.
fn run_line(server: &RedisServer, opts: &[&str], child: &str) -> String {
    let url = server.url_ns(NS);
    let args: Vec<&str> = [env!("CARGO_BIN_EXE_yaraus"), "run", "--redis", &url]
        .into_iter()
        .chain(opts.iter().copied())
        .chain(["--", "sh", child])
        .collect();
    shell_words(&args)
}

#[test]
fn after_ctrl_z_past_the_expiry_fg_does_not_resume_the_child_and_exits_124() {
    if !job_control_available() {
        return;
    }
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    // SIGTERM-proof: only a SIGKILL ends it, so whatever runs it after the
    // expiry shows in its heartbeats.
    let child = scratch.script("child.sh", STUBBORN_HEARTBEAT);
    let command_line = run_line(&server, &timings("2s", "300ms"), &child);
    let (mut shell, mut tty) = on_a_pty(&scratch, "bash --norc --noprofile -i");
    let mut type_in = |text: &[u8]| {
        tty.write_all(text).unwrap();
        tty.flush().unwrap();
    };
    type_in(format!("{command_line}\n").as_bytes());
    let child_pid = read_pid(&scratch, "pid");
    let yaraus_pid = yaraus_ancestor(child_pid).expect("a yaraus among the child's ancestors");
    let _leftovers = KillOnDrop(vec![child_pid, yaraus_pid]);
    wait_beating(&scratch);
    wait_renewal(&server);

    // Ctrl-Z: the child stops, and so does yaraus.
    type_in(b"\x1a");
    wait_until("yaraus to stop after Ctrl-Z", EVENT, || {
        state(yaraus_pid) == Some('T')
    });
    // Stopped, yaraus renews nothing: wait until the lease has expired on
    // the server (a renewal still in flight at the stop may move it on).
    let mut expiry = f64::INFINITY;
    wait_until("the lease to expire on the server", EVENT, || {
        expiry = score(&server, 1).expect("id 1 in the pool");
        server_now(&server) > expiry
    });

    type_in(b"fg\n");
    wait_until("yaraus to exit after fg", EVENT, || !alive(yaraus_pid));
    type_in(b"echo \"status $?\" > \"$D/status\"\n");
    let status = scratch.wait_line("status");
    type_in(b"exit\n");
    assert_eq!(status, format!("status {EXIT_LOST}"), "{}", shell.output());
    assert!(!alive(child_pid), "the child survived its expired lease");
    assert_beats_end_before(&scratch, expiry, "Ctrl-Z, expiry, fg");
    shell.wait();
}

#[test]
fn a_background_run_brought_to_the_foreground_gets_the_terminal_and_is_continued() {
    if !job_control_available() {
        return;
    }
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let child = scratch.script(
        "child.sh",
        r#"echo $$ > "$D/pid"
read line
echo "got: $line" > "$D/line"
exit 6
"#,
    );
    let command_line = run_line(&server, &timings("30s", "300ms"), &child);
    let (mut shell, mut tty) = on_a_pty(&scratch, "bash --norc --noprofile -i");
    let mut type_in = |text: &[u8]| {
        tty.write_all(text).unwrap();
        tty.flush().unwrap();
    };
    type_in(format!("{command_line} &\n").as_bytes());
    let child_pid = read_pid(&scratch, "pid");
    let yaraus_pid = yaraus_ancestor(child_pid).expect("a yaraus among the child's ancestors");
    let _leftovers = KillOnDrop(vec![child_pid, yaraus_pid]);
    // Out of the terminal's foreground group, the child's read gets SIGTTIN.
    wait_until("the background child to stop on SIGTTIN", EVENT, || {
        state(child_pid) == Some('T')
    });

    type_in(b"fg\n");
    wait_until(
        "the child to be continued in the terminal's foreground after fg",
        EVENT,
        || {
            proc_stat(child_pid)
                .is_some_and(|(s, group)| s != 'T' && terminal_foreground(child_pid) == Some(group))
        },
    );
    type_in(b"hello\n");
    assert_eq!(scratch.wait_line("line"), "got: hello");
    wait_until("yaraus to exit", EVENT, || !alive(yaraus_pid));
    type_in(b"echo \"status $?\" > \"$D/status\"\n");
    assert_eq!(
        scratch.wait_line("status"),
        "status 6",
        "{}",
        shell.output()
    );
    type_in(b"exit\n");
    shell.wait();
}

// ===========================================================================
// The watchdog is the command's parent: what that adds.
// ===========================================================================

/// A pool of one id, and `yaraus run` of the shell script `body` with a
/// long lease and a short kill-after.
fn run_script(body: &str) -> (RedisServer, Scratch, Run) {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let child = scratch.script("child.sh", body);
    let run = Run::start(
        &server.url_ns(NS),
        &scratch,
        &timings("30s", "300ms"),
        &["sh", &child],
    );
    (server, scratch, run)
}

#[test]
fn a_sigkilled_yaraus_takes_even_a_descendant_that_left_the_session() {
    let (_server, scratch, mut run) = run_script(
        r#"setsid sh -c 'echo $$ > "$D/esc"; exec sleep 1000' &
echo $$ > "$D/pid"
wait
"#,
    );
    let escapee = read_pid(&scratch, "esc");
    let _leftover = KillOnDrop(vec![escapee]);
    run.wait_lease();
    wait_until("the escapee to lead its own session", EVENT, || {
        pgid_of(escapee) == escapee
    });

    run.signal(Signal::SIGKILL);
    wait_until("yaraus to die", EVENT, || run.exited());
    wait_until(
        &format!("the escapee (pid {escapee}, its own session) to die with yaraus"),
        EVENT,
        || !alive(escapee),
    );
}

#[test]
fn a_killed_watchdog_takes_the_command_along_and_yaraus_releases_and_exits_125() {
    let (server, scratch, mut run) = run_script(
        r#"sleep 1000 &
echo $! > "$D/grandchild"
echo $PPID > "$D/watchdog"
echo $$ > "$D/pid"
wait
"#,
    );
    let pid = read_pid(&scratch, "pid");
    let grandchild = read_pid(&scratch, "grandchild");
    let watchdog = read_pid(&scratch, "watchdog");
    let _leftovers = KillOnDrop(vec![pid, grandchild]);
    let (client, id) = run.wait_lease();
    assert_ne!(
        watchdog,
        run.pid().as_raw(),
        "the command's parent is yaraus"
    );
    assert!(
        is_yaraus(watchdog),
        "the command's parent is not a yaraus watchdog"
    );

    kill(Pid::from_raw(watchdog), Signal::SIGKILL).expect("kill -9 the watchdog");
    assert_eq!(run.wait(), 125, "{}", run.log());
    assert!(!alive(pid), "the command outlived its watchdog");
    assert!(!alive(grandchild), "the grandchild outlived yaraus");
    assert!(
        run.log().contains("lost the watchdog process"),
        "{}",
        run.log()
    );
    // Released: the lease ends now (a release sets the expiry to the
    // server's now; the owner stays recorded, as the Go tool leaves it).
    let expiry = score(&server, id).expect("the id is in the pool");
    assert!(
        expiry <= server_now(&server),
        "id {id} still leased to {client}: {}",
        run.log()
    );
}
