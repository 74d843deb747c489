//! Signals and exit statuses.

use super::*;

#[test]
fn child_killed_by_a_signal_exits_128_plus_n() {
    let (server, scratch) = fresh_pool(1, 2);
    let url = server.url_ns(NS);
    for (sig, n) in [("TERM", 15), ("KILL", 9), ("USR1", 10), ("SEGV", 11)] {
        let (code, run) = run_to_end(
            &url,
            &scratch,
            FAST,
            &["sh", "-c", &format!("kill -{sig} $$; sleep 5")],
        );
        assert_eq!(code, 128 + n, "SIG{sig}: {}", run.log());
        let (client, id) = run.lease().unwrap();
        assert_released(&server, id, &client);
    }
}

#[test]
fn forwarded_signals_reach_the_child_once_and_it_decides_the_exit_status() {
    let (server, scratch) = fresh_pool(1, 2);
    let child = scratch.script(
        "child.sh",
        r#"for s in INT TERM HUP QUIT USR1 USR2; do
  trap "echo $s >> \"\$D/got\"" $s
done
echo $$ > "$D/pid"
while [ ! -e "$D/stop" ]; do sleep 0.05; done
exit 7
"#,
    );
    let mut run = Run::start(&server.url_ns(NS), &scratch, FAST, &["sh", &child]);
    read_pid(&scratch, "pid");
    for (i, sig) in FORWARDED.iter().enumerate() {
        run.signal(*sig);
        scratch.wait_lines("got", i + 1);
    }
    scratch.touch("stop");
    assert_eq!(run.wait(), 7, "{}", run.log());
    // Each one arrived once, in order, and none stopped yaraus.
    assert_eq!(
        scratch.lines("got"),
        ["INT", "TERM", "HUP", "QUIT", "USR1", "USR2"]
    );
    let (client, id) = run.lease().unwrap();
    assert_released(&server, id, &client);
}

#[test]
fn forwarded_signals_that_kill_the_child_give_128_plus_n() {
    let (server, scratch) = fresh_pool(1, 2);
    let url = server.url_ns(NS);
    let child = scratch.script("child.sh", "echo $$ > \"$D/pid.$1\"\nexec sleep 1000\n");
    for sig in FORWARDED {
        let name = sig.as_str();
        let mut run = Run::start(&url, &scratch, FAST, &["sh", &child, name]);
        let pid = read_pid(&scratch, &format!("pid.{name}"));
        run.signal(sig);
        assert_eq!(run.wait(), 128 + sig as i32, "{name}: {}", run.log());
        assert!(!alive(pid));
        let (client, id) = run.lease().unwrap();
        assert_released(&server, id, &client);
    }
}

#[test]
fn signal_while_waiting_for_an_id_exits_128_plus_n_and_leaves_ids_unchanged() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    hold_by_hand(&server, 1, "other", 3600.0);
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    for sig in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        let before = pool_keys(&server);
        let mut run = Run::start(&url, &scratch, FAST, &["touch", &scratch.arg("ran")]);
        run.wait_log("retrying in");
        run.signal(sig);
        assert_eq!(run.wait(), 128 + sig as i32, "{}", run.log());
        assert_eq!(pool_keys(&server), before);
        assert!(!scratch.exists("ran"));
        assert!(run.lease().is_none());
    }
}

#[test]
fn signal_during_the_delay_releases_the_id_and_never_starts_the_child() {
    let (server, scratch) = fresh_pool(1, 1);
    let (mut run, client, id) = in_the_delay(&server, &scratch, "1s");
    assert_leased_to(&server, id, &client);
    run.signal(Signal::SIGTERM);
    assert_eq!(run.wait(), 143, "{}", run.log());
    assert_released(&server, id, &client);
    assert!(!scratch.exists("ran"));
}

#[test]
fn signal_while_an_attempt_is_in_flight_releases_the_id_it_got() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    hold_by_hand(&server, 1, "other", 1.0);
    let freed_at = Instant::now() + Duration::from_secs(1);
    let scratch = Scratch::new();
    let mut run = Run::start(
        &server.url_ns(NS),
        &scratch,
        FAST,
        &["touch", &scratch.arg("ran")],
    );
    run.wait_log("retrying in");
    // Frozen, the server queues the next attempt (due within one interval,
    // 300 ms); the hand-made lease runs out meanwhile on the wall clock that
    // its TIME reads. Nothing can be awaited here: the attempt sits unread
    // in the stopped server's socket, so the wait is bounded with a margin
    // of three intervals, and the log line below proves the path was taken.
    server.sigstop();
    let queued_at = Instant::now() + Duration::from_millis(900);
    thread::sleep(
        freed_at
            .max(queued_at)
            .saturating_duration_since(Instant::now()),
    );
    run.signal(Signal::SIGTERM);
    // Long enough for a yaraus that dropped the attempt at once to have
    // exited, leaving the queued script to lease the id to nobody.
    thread::sleep(Duration::from_millis(500));
    server.sigcont();
    assert_eq!(run.wait(), 143, "{}", run.log());
    assert!(
        run.log()
            .contains("taken just as the wait ended; giving it back"),
        "{}",
        run.log()
    );
    assert_eq!(leased_ids(&server), Vec::<u64>::new(), "{}", run.log());
    assert!(!scratch.exists("ran"));
}
