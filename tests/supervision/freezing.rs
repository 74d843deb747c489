//! Freezes: Redis frozen while a child ignores SIGTERM (`--kill-after`
//! inside the validity, and refused when it does not fit), and yaraus
//! itself frozen by SIGSTOP.

use super::*;

/// A [`STUBBORN_HEARTBEAT`] child under `yaraus run` with a pool of one id
/// and `timings(expire, kill_after)`, once it beats and its lease has been
/// renewed: the run and the child's pid.
fn stubborn_run(
    server: &RedisServer,
    scratch: &Scratch,
    expire: &'static str,
    kill_after: &'static str,
) -> (Run, i32) {
    let child = scratch.script("child.sh", STUBBORN_HEARTBEAT);
    let run = Run::start(
        &server.url_ns(NS),
        scratch,
        &timings(expire, kill_after),
        &["sh", &child],
    );
    let pid = read_pid(scratch, "pid");
    wait_beating(scratch);
    wait_renewal(server);
    (run, pid)
}

/// The same under `yaraus lock NAME --ttl TTL --kill-after K`, once the
/// lock has been extended.
fn stubborn_lock(
    server: &RedisServer,
    scratch: &Scratch,
    name: &str,
    ttl: &str,
    kill_after: &str,
) -> (Run, i32) {
    let child = scratch.script("child.sh", STUBBORN_HEARTBEAT);
    let run = Run::spawn(
        lock_cmd(
            &server.url_ns(NS),
            scratch,
            name,
            &["--ttl", ttl, "--kill-after", kill_after],
            &["sh", &child],
        ),
        scratch,
    );
    let pid = read_pid(scratch, "pid");
    wait_beating(scratch);
    wait_extension(server, name);
    (run, pid)
}

/// What a test freezes (SIGSTOP) while a child runs under a claim.
#[derive(Clone, Copy)]
enum Freeze {
    /// The Redis server: no renewal can reach it.
    Redis,
    /// yaraus alone (not its group): its watchdog must still kill.
    Yaraus,
}

/// Freezes `freeze` with writes paused on the server and asserts that the
/// child `pid` and its group are dead before the expiry `read_expiry`
/// reads; then thaws everything and expects 124.
fn freeze_and_check(
    freeze: Freeze,
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
    match freeze {
        Freeze::Redis => {
            server.sigstop();
            wait_child_and_group_dead(pid, pgid, "the child to be killed while Redis is frozen");
        }
        Freeze::Yaraus => {
            kill(run.pid(), Signal::SIGSTOP).expect("SIGSTOP yaraus");
            let yaraus = run.pid().as_raw();
            wait_until("yaraus to stop", EVENT, || state(yaraus) == Some('T'));
            wait_child_and_group_dead(pid, pgid, "the child to be killed while yaraus is stopped");
        }
    }
    assert_beats_end_before(scratch, expiry, what);

    match freeze {
        Freeze::Redis => {
            server.sigcont();
            unpause(server);
        }
        Freeze::Yaraus => {
            unpause(server);
            kill(run.pid(), Signal::SIGCONT).expect("SIGCONT yaraus");
        }
    }
    assert_eq!(run.wait(), EXIT_LOST, "{}", run.log());
}

/// A [`STUBBORN_HEARTBEAT`] child under `yaraus run --expire 2s
/// --kill-after K` with a pool of one id, through [`freeze_and_check`].
fn freeze_a_run(freeze: Freeze, kill_after: &'static str, what: &str) {
    let (server, scratch) = fresh_pool(1, 1);
    let (run, pid) = stubborn_run(&server, &scratch, "2s", kill_after);
    freeze_and_check(
        freeze,
        &server,
        &scratch,
        run,
        pid,
        || score(&server, 1).expect("id 1 in the pool"),
        what,
    );
}

/// A [`STUBBORN_HEARTBEAT`] child under `yaraus lock NAME --ttl 3s
/// --kill-after K`, through [`freeze_and_check`].
fn freeze_a_lock(freeze: Freeze, name: &str, kill_after: &str, what: &str) {
    let server = RedisServer::start();
    let scratch = Scratch::new();
    let (run, pid) = stubborn_lock(&server, &scratch, name, "3s", kill_after);
    freeze_and_check(
        freeze,
        &server,
        &scratch,
        run,
        pid,
        || lock_expiry(&server, name),
        what,
    );
}

// ===========================================================================
// --kill-after inside the validity.
// ===========================================================================

#[test]
fn a_child_ignoring_sigterm_is_dead_before_the_lease_expires_when_redis_freezes() {
    freeze_a_run(Freeze::Redis, "800ms", "run, --kill-after 800ms");
}

#[test]
fn a_child_ignoring_sigterm_is_dead_before_the_lock_expires_when_redis_freezes() {
    freeze_a_lock(Freeze::Redis, "frozen", "800ms", "lock, --kill-after 800ms");
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

/// `yaraus run --expire 2s --interval 500ms --delay 0 OPTS -- touch $D/ran`.
fn two_second_run(server: &RedisServer, scratch: &Scratch, opts: &[&str]) -> Command {
    let base = ["--expire", "2s", "--interval", "500ms", "--delay", "0"];
    run_cmd(
        &server.url_ns(NS),
        scratch,
        &with(&base, opts),
        &["touch", &scratch.arg("ran")],
    )
}

#[test]
fn a_kill_after_that_does_not_fit_in_the_lease_validity_is_a_usage_error() {
    let (server, scratch) = fresh_pool(1, 1);
    // validity 2s − 1% − 2ms = 1978ms; minus the interval (500ms) leaves
    // 1478ms < 1800ms: no room for a renewal before the SIGTERM.
    let cmd = two_second_run(&server, &scratch, &["--kill-after", "1800ms"]);
    assert_kill_after_refused(
        &server,
        &scratch,
        cmd,
        "run --expire 2s --interval 500ms --kill-after 1800ms",
    );
    // --no-safeguards gives up the room for renewals, not the budget: a
    // kill-after longer than the whole validity is refused all the same.
    let cmd = two_second_run(
        &server,
        &scratch,
        &["--kill-after", "2s", "--no-safeguards"],
    );
    assert_kill_after_refused(
        &server,
        &scratch,
        cmd,
        "run --expire 2s --kill-after 2s --no-safeguards",
    );
}

// ===========================================================================
// yaraus itself frozen (SIGSTOP to yaraus alone).
// ===========================================================================

#[test]
fn a_frozen_yaraus_run_still_gets_its_child_killed_before_the_lease_expires() {
    freeze_a_run(Freeze::Yaraus, "300ms", "yaraus run stopped");
}

#[test]
fn a_frozen_yaraus_lock_still_gets_its_child_killed_before_the_lock_expires() {
    freeze_a_lock(Freeze::Yaraus, "stopped", "300ms", "yaraus lock stopped");
}
