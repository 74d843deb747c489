//! Job control on a terminal, driven through an interactive bash on a
//! pseudo-terminal: Ctrl-Z past the expiry then `fg`, and a background run
//! brought to the foreground.

use super::*;

/// The command line that starts `yaraus run` with `opts` on `child.sh`.
///
/// The child is run by bash, not sh: dash starts each command of its loop
/// with vfork, and a Ctrl-Z that lands between that vfork and the exec
/// stops the new process before its exec while dash, waiting for the exec,
/// sleeps uninterruptibly and never stops, so nothing reports a stop (seen
/// as this test timing out now and then). bash forks.
fn run_line(server: &RedisServer, opts: &[&str], child: &str) -> String {
    yaraus_run_line(&server.url_ns(NS), opts, &["bash", child])
}

#[test]
fn after_ctrl_z_past_the_expiry_fg_does_not_resume_the_child_and_exits_124() {
    require_bash();
    let (server, scratch) = fresh_pool(1, 1);
    // SIGTERM-proof: only a SIGKILL ends it, so whatever runs it after the
    // expiry shows in its heartbeats.
    let child = scratch.script("child.sh", STUBBORN_HEARTBEAT);
    let command_line = run_line(&server, &timings("2s", "300ms"), &child);
    let (mut shell, mut tty) = on_a_pty(&scratch, "bash --norc --noprofile -i");
    tty.type_in(format!("{command_line}\n"));
    let child_pid = read_pid(&scratch, "pid");
    let yaraus_pid = yaraus_ancestor(child_pid).expect("a yaraus among the child's ancestors");
    let _leftovers = KillOnDrop(vec![child_pid, yaraus_pid]);
    wait_beating(&scratch);
    wait_renewal(&server);

    // Ctrl-Z: the child stops, and so does yaraus.
    tty.type_in(b"\x1a");
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

    tty.type_in(b"fg\n");
    wait_until("yaraus to exit after fg", EVENT, || !alive(yaraus_pid));
    tty.type_in(b"echo \"status $?\" > \"$D/status\"\n");
    let status = scratch.wait_line("status");
    tty.type_in(b"exit\n");
    assert_eq!(status, format!("status {EXIT_LOST}"), "{}", shell.output());
    assert!(!alive(child_pid), "the child survived its expired lease");
    assert_beats_end_before(&scratch, expiry, "Ctrl-Z, expiry, fg");
    shell.wait();
}

#[test]
fn a_background_run_brought_to_the_foreground_gets_the_terminal_and_is_continued() {
    require_bash();
    let (server, scratch) = fresh_pool(1, 1);
    let child = scratch.script("child.sh", READS_A_LINE);
    let command_line = run_line(&server, &timings("30s", "300ms"), &child);
    let (mut shell, mut tty) = on_a_pty(&scratch, "bash --norc --noprofile -i");
    tty.type_in(format!("{command_line} &\n"));
    let child_pid = read_pid(&scratch, "pid");
    let yaraus_pid = yaraus_ancestor(child_pid).expect("a yaraus among the child's ancestors");
    let _leftovers = KillOnDrop(vec![child_pid, yaraus_pid]);
    // Out of the terminal's foreground group, the child's read gets SIGTTIN.
    wait_until("the background child to stop on SIGTTIN", EVENT, || {
        state(child_pid) == Some('T')
    });

    tty.type_in(b"fg\n");
    wait_until(
        "the child to be continued in the terminal's foreground after fg",
        EVENT,
        || {
            proc_stat(child_pid)
                .is_some_and(|(s, group)| s != 'T' && terminal_foreground(child_pid) == Some(group))
        },
    );
    tty.type_in(b"hello\n");
    assert_eq!(scratch.wait_line("line"), "got: hello");
    wait_until("yaraus to exit", EVENT, || !alive(yaraus_pid));
    tty.type_in(b"echo \"status $?\" > \"$D/status\"\n");
    assert_eq!(
        scratch.wait_line("status"),
        "status 6",
        "{}",
        shell.output()
    );
    tty.type_in(b"exit\n");
    shell.wait();
}
