//! The watchdog is the command's parent: a SIGKILLed yaraus takes even a
//! descendant that left the session, and a killed watchdog takes the
//! command along.

use super::*;

#[test]
fn a_sigkilled_yaraus_takes_even_a_descendant_that_left_the_session() {
    let (_server, scratch, mut run) = long_lease_run(
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
    let (server, scratch, mut run) = long_lease_run(
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
