//! Losing the id: the child's group is killed, exit 124.

use super::*;

#[test]
fn stolen_ownership_kills_the_group_within_interval_plus_kill_after() {
    let (server, scratch) = fresh_pool(1, 1);
    let interval = Duration::from_millis(200);
    let kill_after = Duration::from_millis(500);
    // Scheduling slack on top of interval + kill-after; the expiry (30 s) is
    // far beyond it, so only the ownership check can explain a kill in time.
    let slack = Duration::from_secs(1);
    // The child ignores SIGTERM (so do the sleeps it starts): SIGKILL is needed.
    let mut run = run_script(
        &server,
        &scratch,
        &[
            "--interval",
            "200ms",
            "--expire",
            "30s",
            "--kill-after",
            "500ms",
            "--delay",
            "0",
            "--no-safeguards",
        ],
        &waiting_child("trap '' TERM"),
    );
    let pid = read_pid(&scratch, "pid");
    let (_, id) = run.wait_lease();

    steal(&server, id);
    let stolen = Instant::now();
    wait_until("the child's group to die", EVENT, || {
        !alive(pid) && live_members(pid).is_empty()
    });
    let gone = stolen.elapsed();
    assert!(
        gone >= kill_after,
        "killed after {gone:?}, before --kill-after {kill_after:?} had passed since SIGTERM"
    );
    assert!(
        gone <= interval + kill_after + slack,
        "killed only after {gone:?}"
    );
    assert_eq!(run.wait(), 124, "{}", run.log());
    let log = run.log();
    assert!(log.contains("now belongs to thief"), "{log}");
    assert!(log.contains("sending SIGKILL"), "{log}");
    // The thief's record is not touched by a release.
    assert_eq!(owner(&server, id).as_deref(), Some("thief"));
}

#[test]
fn ownership_lost_during_the_delay_never_starts_the_child() {
    let (server, scratch) = fresh_pool(1, 1);
    let (mut run, _, id) = in_the_delay(&server, &scratch, "30s");
    steal(&server, id);
    assert_eq!(run.wait(), 124, "{}", run.log());
    assert!(
        run.last_line().contains("lost before the command started"),
        "{}",
        run.log()
    );
    assert!(!scratch.exists("ran"));
    assert_eq!(owner(&server, id).as_deref(), Some("thief"));
}

#[test]
fn a_grandchild_under_sh_dies_with_the_group_on_loss() {
    let (server, scratch) = fresh_pool(1, 1);
    // sh starts a grandchild that ignores SIGTERM, then waits for it.
    let mut run = run_script(
        &server,
        &scratch,
        &timings("30s", "300ms"),
        r#"sh -c 'trap "" TERM; echo $$ > "$D/grandchild"; exec sleep 1000' &
echo $$ > "$D/pid"
wait
"#,
    );
    let pid = read_pid(&scratch, "pid");
    let grandchild = read_pid(&scratch, "grandchild");
    assert_eq!(proc_stat(grandchild).map(|(_, g)| g), Some(pid));
    let (_, id) = run.wait_lease();

    steal(&server, id);
    assert_eq!(run.wait(), 124, "{}", run.log());
    wait_until("the grandchild to die", EVENT, || !alive(grandchild));
    assert!(!alive(pid));
    assert!(live_members(pid).is_empty());
}

#[test]
fn the_whole_group_gets_sigkill_kill_after_after_sigterm_even_if_the_leader_exits_first() {
    let (server, scratch) = fresh_pool(1, 1);
    let kill_after = 1.0;
    // The leader takes most of --kill-after to shut down gracefully; its
    // grandchild ignores SIGTERM. The grandchild must get SIGKILL when
    // --kill-after has passed since the SIGTERM, not a --kill-after later.
    let mut run = run_script(
        &server,
        &scratch,
        &timings("30s", "1s"),
        &waiting_child(
            r#"trap 'date +%s.%N > "$D/term"; sleep 0.8; exit 0' TERM
sh -c 'trap "" TERM; echo $$ > "$D/grandchild"; exec sleep 1000' &"#,
        ),
    );
    let pid = read_pid(&scratch, "pid");
    let grandchild = read_pid(&scratch, "grandchild");
    let (_, id) = run.wait_lease();

    steal(&server, id);
    wait_until("the grandchild to die", EVENT, || !alive(grandchild));
    let dead = wall_now();
    assert_eq!(run.wait(), 124, "{}", run.log());
    let term: f64 = scratch.wait_line("term").parse().unwrap();
    // Scheduling slack: 0.5 s, less than the 0.8 s the leader took.
    assert!(
        dead - term < kill_after + 0.5,
        "the grandchild outlived the SIGTERM by {:.3}s (--kill-after {kill_after}s)",
        dead - term
    );
    assert!(!alive(pid));
    assert!(live_members(pid).is_empty());
}

#[test]
fn a_stopped_child_is_continued_so_that_it_can_handle_sigterm_on_loss() {
    let (server, scratch) = fresh_pool(1, 1);
    let mut run = run_script(
        &server,
        &scratch,
        &timings("30s", "5s"),
        &waiting_child(r#"trap 'echo TERM > "$D/term"; exit 0' TERM"#),
    );
    let pid = read_pid(&scratch, "pid");
    let (_, id) = run.wait_lease();
    // What this test needs is a stopped child at the loss. The shell spawns each `sleep` with vfork: a SIGSTOP that lands
    // between the fork and the exec stops the child before its exec, and
    // the shell, waiting for that exec, sleeps uninterruptibly ('D') and
    // never stops (seen under nohup). So the group is continued and stopped
    // again until the shell itself is stopped.
    let group = Pid::from_raw(pid);
    wait_until("the child to stop", EVENT, || {
        nix::sys::signal::killpg(group, Signal::SIGSTOP).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let stopped = proc_stat(pid).is_some_and(|(s, _)| s == 'T');
        if !stopped {
            nix::sys::signal::killpg(group, Signal::SIGCONT).unwrap();
        }
        stopped
    });

    steal(&server, id);
    assert_eq!(run.wait(), 124, "{}", run.log());
    // It handled the SIGTERM itself (a SIGKILL would have left no trace).
    assert_eq!(scratch.wait_line("term"), "TERM");
    assert!(!run.log().contains("sending SIGKILL"), "{}", run.log());
}

#[test]
fn the_child_starts_with_no_blocked_signals_and_default_dispositions() {
    let (server, scratch) = fresh_pool(1, 1);
    // grep is the child itself (no shell in between): it reports its own state.
    let (code, run) = run_to_end(
        &server.url_ns(NS),
        &scratch,
        FAST,
        &["grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"],
    );
    assert_eq!(code, 0, "{}", run.log());
    let out = run.output();
    let mask = |name: &str| -> u64 {
        let line = out
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in {out}"));
        u64::from_str_radix(line[name.len()..].trim(), 16).unwrap()
    };
    assert_eq!(mask("SigBlk:"), 0, "the child starts with signals blocked");
    // yaraus catches these (and Rust ignores SIGPIPE): the child must get
    // them with their default action. Others may be ignored by whoever
    // started the test, and are inherited as a shell would inherit them.
    let ignored = mask("SigIgn:");
    for sig in FORWARDED.into_iter().chain([Signal::SIGPIPE]) {
        assert_eq!(ignored & (1 << (sig as u64 - 1)), 0, "{sig} is ignored");
    }
}

#[test]
fn processes_left_behind_by_the_child_are_stopped_before_the_release() {
    let (server, scratch) = fresh_pool(1, 1);
    // The child exits at once, leaving a SIGTERM-proof process in its group.
    let child = scratch.script(
        "child.sh",
        r#"sh -c 'trap "" TERM; echo $$ > "$D/grandchild"; exec sleep 1000' &
while [ ! -s "$D/grandchild" ]; do sleep 0.01; done
exit 0
"#,
    );
    let (code, run) = run_to_end(&server.url_ns(NS), &scratch, FAST, &["sh", &child]);
    assert_eq!(code, 0, "{}", run.log());
    let grandchild = read_pid(&scratch, "grandchild");
    wait_until("the left-behind process to die", EVENT, || {
        !alive(grandchild)
    });
    let log = run.log();
    let stopping = log
        .find("the child left processes in its group")
        .unwrap_or_else(|| panic!("{log}"));
    let releasing = log.find("releasing id").unwrap_or_else(|| panic!("{log}"));
    assert!(stopping < releasing, "released before stopping: {log}");
    let (client, id) = run.lease().unwrap();
    assert_released(&server, id, &client);
}

#[test]
fn redis_restarted_empty_kills_the_child_before_a_new_owner_starts_its_own() {
    let mut server = RedisServer::start();
    init_pool(&server, 1, 1);
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    let old_sh = scratch.script(
        "old.sh",
        r#"trap 'echo "old: SIGTERM" >> "$D/events"; exit 0' TERM
echo $$ > "$D/old.pid"
while :; do sleep 0.05; done
"#,
    );
    // The new owner records whether the old child is still running as it starts.
    let new_sh = scratch.script(
        "new.sh",
        r#"state=$(cut -d' ' -f3 "/proc/$OLD/stat" 2>/dev/null)
echo "new: started, old child ${state:-gone}" >> "$D/events"
"#,
    );
    // A long expiry: only the ownership check can stop the old child in time.
    let mut old = Run::start(&url, &scratch, &timings("30s", "300ms"), &["sh", &old_sh]);
    let old_pid = read_pid(&scratch, "old.pid");
    let (_, old_id) = old.wait_lease();

    server.restart_empty();
    init_pool(&server, 1, 1);
    // The new owner gets the same id at once, and waits the safeguarded
    // delay (2 × interval + kill-after) before starting its child.
    let mut cmd = run_cmd(
        &url,
        &scratch,
        &[
            "--interval",
            "100ms",
            "--expire",
            "30s",
            "--kill-after",
            "300ms",
        ],
        &["sh", &new_sh],
    );
    cmd.env("OLD", old_pid.to_string());
    let mut new = Run::spawn(cmd, &scratch);

    assert_eq!(old.wait(), 124, "{}", old.log());
    assert_eq!(new.wait(), 0, "{}", new.log());
    assert_eq!(new.lease().map(|(_, id)| id), Some(old_id));
    let events = scratch.lines("events");
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0], "old: SIGTERM");
    assert!(
        events[1] == "new: started, old child gone" || events[1] == "new: started, old child Z",
        "the new owner started while the old child ran: {events:?}"
    );
    assert!(old.log().contains("lost"), "{}", old.log());
}

#[test]
fn frozen_redis_kills_the_child_at_the_local_deadline() {
    let (server, scratch) = fresh_pool(1, 1);
    let expire = 1.0;
    // The delay a new owner waits (the safeguard minimum 2 × interval + kill-after).
    let delay = 2.0 * 0.1 + 0.3;
    let mut run = run_script(
        &server,
        &scratch,
        FAST,
        &waiting_child(r#"trap 'date +%s.%N > "$D/term"; exit 0' TERM"#),
    );
    let pid = read_pid(&scratch, "pid");
    let (_, id) = run.wait_lease();
    wait_until("a renewal", EVENT, || {
        stat(&server, "extend_ttl_success") >= 1
    });

    // The expiry the server holds now. A renewal that slips in before the
    // SIGSTOP can only make the real one later, so bounds from this one
    // are conservative on the side that matters (the upper one).
    let expiry = score(&server, id).unwrap();
    server.sigstop();
    wait_until("the child to die", EVENT, || !alive(pid));
    let dead = wall_now();
    assert_eq!(run.wait(), 124, "{}", run.log());
    server.sigcont();

    let term: f64 = scratch.wait_line("term").parse().unwrap();
    // Not killed while the lease was still good for a while...
    assert!(
        term >= expiry - expire / 2.0,
        "SIGTERM at {term}, long before the expiry {expiry}"
    );
    // ...and dead before a new owner could have started after the expiry.
    assert!(
        dead < expiry + delay,
        "child still alive at {dead}, after expiry {expiry} + delay {delay}"
    );
    assert!(
        run.log()
            .contains("no renewal succeeded before the lease ran out"),
        "{}",
        run.log()
    );
}

#[test]
fn sigkilled_yaraus_takes_its_child_with_it() {
    // tokio's blocking-pool threads exit after 10 s idle; a child forked from
    // one would get its PDEATHSIG then. It must outlive that.
    const BLOCKING_POOL_KEEP_ALIVE: Duration = Duration::from_secs(10);
    let (server, scratch) = fresh_pool(1, 1);
    let mut run = run_script(
        &server,
        &scratch,
        FAST,
        "echo $$ > \"$D/pid\"\nexec sleep 1000\n",
    );
    let pid = read_pid(&scratch, "pid");
    let (client, id) = run.wait_lease();

    thread::sleep(BLOCKING_POOL_KEEP_ALIVE + Duration::from_secs(1));
    assert!(alive(pid), "the child died while yaraus ran");
    assert!(!run.exited(), "{}", run.log());

    run.signal(Signal::SIGKILL);
    wait_until("the child to die with yaraus", EVENT, || !alive(pid));
    assert!(run.exited());
    // Nobody released it: the id stays ours until it expires.
    assert_eq!(owner(&server, id).as_deref(), Some(client.as_str()));
}

#[test]
fn sigkilled_yaraus_takes_the_childs_whole_group_with_it() {
    // PDEATHSIG reaches only the child; the guard process must kill the
    // background grandchild too.
    let (server, scratch) = fresh_pool(1, 1);
    let run = run_script(
        &server,
        &scratch,
        FAST,
        "sleep 1000 &\necho $! > \"$D/gpid\"\necho $$ > \"$D/pid\"\nwait\n",
    );
    let pid = read_pid(&scratch, "pid");
    let grandchild = read_pid(&scratch, "gpid");
    run.wait_lease();
    assert!(alive(pid) && alive(grandchild));

    run.signal(Signal::SIGKILL);
    wait_until("the child to die with yaraus", EVENT, || !alive(pid));
    wait_until("the grandchild to die with yaraus", EVENT, || {
        !alive(grandchild)
    });
}
