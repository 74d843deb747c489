//! The wrapped command: its status and signals pass through, and a signal
//! while waiting for the lock ends the wait and undoes the attempt in flight.

use super::*;

#[test]
fn a_signal_while_waiting_ends_the_wait_and_releases_what_was_taken() {
    let servers = masters(3, true);
    // Another client holds two of the three masters: each of our attempts
    // takes the third and must give it back.
    servers[0].cmd(&["SET", "waited", "other", "PX", "60000"]);
    servers[1].cmd(&["SET", "waited", "other", "PX", "60000"]);
    let dir = tempfile::tempdir().unwrap();
    let (log, marker) = (dir.path().join("stderr"), dir.path().join("ran"));
    let waiting = spawn_logged(
        lock_cmd(&all(&servers))
            .args(["waited", "--", "touch"])
            .arg(&marker),
        &log,
    );
    wait_until("yaraus to wait for the lock", PROCESS_TIMEOUT, || {
        read(&log).contains("waiting for the lock waited")
    });
    kill(Pid::from_raw(waiting.id() as i32), Signal::SIGTERM).unwrap();
    let output = finish(waiting);
    assert_code(&output, 128 + 15);
    assert!(
        read(&log).contains("interrupted by signal 15"),
        "{}",
        read(&log)
    );
    assert!(!marker.exists());
    assert_eq!(
        get(&servers[2], "waited"),
        None,
        "the partly taken lock was kept"
    );
    assert_eq!(get(&servers[0], "waited").as_deref(), Some("other"));
}

#[test]
fn the_command_s_status_and_signals_pass_through() {
    let servers = masters(1, false);
    let s = &servers[0];
    assert_code(
        &run(lock_cmd(&[s]).args(["-q", "st", "--", "sh", "-c", "exit 7"])),
        7,
    );
    assert_code(
        &run(lock_cmd(&[s]).args(["-q", "st", "-c", "kill -9 $$"])),
        128 + 9,
    );
    assert_code(
        &run(lock_cmd(&[s]).args(["-q", "st", "--", "/nonexistent/cmd"])),
        127,
    );
    let output = run(lock_cmd(&[s]).args(["-q", "--replacement", "", "st", "--", "echo", "<>"]));
    assert_eq!(stdout(&output).trim(), "<>");
    assert_eq!(get(s, "st"), None);
}
