//! An interactive terminal.

use super::*;

#[test]
fn an_interactive_child_reads_the_terminal_and_gets_ctrl_c_once() {
    let (server, scratch) = fresh_pool(1, 1);
    let child = scratch.script(
        "child.sh",
        r#"trap 'echo INT >> "$D/ints"' INT
echo ready > "$D/ready"
read line
echo "got: $line" > "$D/line"
while [ ! -e "$D/stop" ]; do sleep 0.05; done
exit 5
"#,
    );
    let command_line = yaraus_run_line(&server.url_ns(NS), FAST, &["sh", &child]);
    let (mut run, mut tty) = on_a_pty(&scratch, &command_line);

    scratch.wait_line("ready");
    tty.type_in(b"hello from the terminal\n");
    assert_eq!(scratch.wait_line("line"), "got: hello from the terminal");
    tty.type_in(b"\x03");
    scratch.wait_line("ints");
    scratch.touch("stop");
    // script -e exits with the status of yaraus, which is the child's.
    assert_eq!(run.wait(), 5, "{}", run.output());
    drop(tty);
    // Ctrl-C reached the child once, and yaraus, out of the terminal's
    // foreground group, neither got nor forwarded it. (yaraus logs to the
    // terminal, which script copies to its stdout.)
    assert_eq!(scratch.lines("ints"), ["INT"]);
    let screen = run.output();
    assert!(screen.contains("starting..."), "{screen}");
    assert!(screen.contains("releasing id 1..."), "{screen}");
    assert!(!screen.contains("interrupted"), "{screen}");
    assert!(leased_ids(&server).is_empty());
}

#[test]
fn ctrl_z_stops_the_child_and_yaraus_and_fg_resumes_both() {
    // An interactive bash with job control on a pseudo-terminal (script(1)),
    // driven as a user would: type the command, Ctrl-Z, `fg`.
    require_bash();
    let (server, scratch) = fresh_pool(1, 1);
    let child = scratch.script("child.sh", READS_A_LINE);
    let command_line = yaraus_run_line(
        &server.url_ns(NS),
        &timings("30s", "300ms"),
        &["sh", &child],
    );
    let (mut run, mut tty) = on_a_pty(&scratch, "bash --norc --noprofile -i");
    // Alone on its line: in `a; b`, bash would run b as soon as a stops.
    tty.type_in(format!("{command_line}\n"));
    let child_pid: i32 = scratch.wait_line("pid").parse().unwrap();
    // yaraus is the child's parent, or its grandparent when a watchdog
    // process stands between them.
    let yaraus_pid = yaraus_ancestor(child_pid).expect("a yaraus among the child's ancestors");
    let state = |pid: i32| proc_stat(pid).map(|(state, _)| state);

    // Ctrl-Z: the child stops, and yaraus follows it, so that bash (which
    // waits for yaraus, its job) gets the terminal back.
    tty.type_in(b"\x1a");
    wait_until("the child to stop", EVENT, || state(child_pid) == Some('T'));
    wait_until("yaraus to stop", EVENT, || state(yaraus_pid) == Some('T'));
    assert!(run.output().contains("stopping too"), "{}", run.output());

    // `fg`: bash continues yaraus, which gives the terminal to the child
    // and continues it; the child reads what is typed next.
    tty.type_in(b"fg\n");
    wait_until("the child to run again", EVENT, || {
        state(child_pid).is_some_and(|s| s != 'T')
    });
    tty.type_in(b"after fg\n");
    assert_eq!(scratch.wait_line("line"), "got: after fg");
    // Read by bash once `fg` returns: the status of yaraus, the child's.
    tty.type_in(b"echo \"status $?\" > \"$D/status\"\n");
    assert_eq!(scratch.wait_line("status"), "status 6");
    tty.type_in(b"exit\n");
    run.wait();
    assert!(leased_ids(&server).is_empty());
}
