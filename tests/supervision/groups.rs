//! Processes that would outlive the claim by leaving yaraus behind: the
//! whole process group of yaraus SIGKILLed at once (`kill -9 %1`), and a
//! descendant that leaves the session with setsid.

use super::*;

// ===========================================================================
// The process group of yaraus killed at once (`kill -9 %1`).
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
    let (server, scratch) = fresh_pool(1, 1);
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
// A descendant that leaves the session (setsid).
// ===========================================================================

/// Starts a SIGTERM-proof heartbeat process in a session of its own, and
/// waits until it has written its pid to `$D/esc`.
const START_ESCAPEE: &str = r#"setsid sh -c 'trap "" TERM; echo $$ > "$D/esc"; while :; do date +%s.%N >> "$D/beats"; sleep 0.02; done' &
while [ ! -s "$D/esc" ]; do sleep 0.01; done
"#;

/// Asserts that the escapee and every process of its group are dead (or
/// zombies waiting for init) `when`.
fn assert_escapee_gone(escapee: i32, when: &str) {
    assert!(
        !alive(escapee),
        "the escapee (pid {escapee}, its own session) still runs {when}"
    );
    assert_eq!(
        live_members(escapee),
        Vec::<i32>::new(),
        "processes of the escapee's group still run {when}"
    );
}

#[test]
fn a_descendant_that_calls_setsid_is_killed_before_the_id_is_released() {
    let (server, scratch, mut run) = long_lease_run(&format!("{START_ESCAPEE}exit 0\n"));
    let escapee = read_pid(&scratch, "esc");
    let _leftovers = KillOnDrop(vec![escapee]);

    assert_eq!(run.wait(), 0, "{}", run.log());
    // Dead (or a zombie waiting for init) once yaraus has exited, and so is
    // whatever it was running (its `date`, its `sleep`).
    assert_escapee_gone(escapee, "after yaraus exited");
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
    let (server, scratch, mut run) = long_lease_run(&waiting_child(START_ESCAPEE.trim_end()));
    let escapee = read_pid(&scratch, "esc");
    let _leftovers = KillOnDrop(vec![escapee]);
    read_pid(&scratch, "pid");

    steal(&server, 1);
    assert_eq!(run.wait(), EXIT_LOST, "{}", run.log());
    assert_escapee_gone(escapee, "after yaraus lost the id");
}
