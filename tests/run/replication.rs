//! Replication: WAIT for a majority of the replicas.

use super::*;

fn master_and_replica() -> (RedisServer, RedisServer) {
    let master = RedisServer::start_with(ServerOptions {
        tcp: true,
        ..Default::default()
    });
    let replica = RedisServer::start_with(ServerOptions {
        replica_of: Some(&master),
        ..Default::default()
    });
    init_pool(&master, 1, 2);
    replica.wait_replica_synced(&master);
    (master, replica)
}

#[test]
fn with_a_replica_the_lease_is_replicated_before_the_child_starts() {
    let (master, replica) = master_and_replica();
    let scratch = Scratch::new();
    // The child looks at the replica itself the moment it starts.
    let child = scratch.script(
        "child.sh",
        r#"echo "$YARAUS_WORKER_ID" > "$D/id"
while [ ! -e "$D/go" ]; do sleep 0.05; done
"#,
    );
    let mut run = Run::start(&master.url_ns(NS), &scratch, FAST, &["sh", &child]);
    let id: u64 = scratch.wait_line("id").parse().unwrap();
    let (client, _) = run.lease().unwrap();
    // WAIT returned before the child started, so the replica has it already.
    assert_leased_to(&replica, id, &client);
    scratch.touch("go");
    assert_eq!(run.wait(), 0, "{}", run.log());
    assert_released(&master, id, &client);
}

#[test]
fn a_promoted_replica_does_not_hand_out_the_ids_its_dead_master_leased() {
    let (mut master, replica) = master_and_replica();
    let scratch = Scratch::new();
    let opts = &with(&timings("3s", "300ms"), &["--timeout", "300ms"]);
    let child = scratch.script(
        "child.sh",
        "echo \"$YARAUS_WORKER_ID\" >> \"$D/ids\"\nexec sleep 1000\n",
    );
    let mut a = Run::start(&master.url_ns(NS), &scratch, opts, &["sh", &child]);
    let mut b = Run::start(&master.url_ns(NS), &scratch, opts, &["sh", &child]);
    scratch.wait_lines("ids", 2);

    // The master dies; its replica is promoted in its place.
    master.sigkill();
    replica.promote();

    // Both leases were confirmed by the replica before the children started,
    // so the new master still has them, and a newcomer finds no free id.
    assert_eq!(leased_ids(&replica), vec![1, 2]);
    let (code, newcomer) = run_to_end(
        &replica.url_ns(NS),
        &scratch,
        &with(opts, &["--wait", "500ms"]),
        &["touch", &scratch.arg("newcomer-ran")],
    );
    assert_eq!(code, 75, "{}", newcomer.log());
    assert!(!scratch.exists("newcomer-ran"));

    // The old holders cannot reach their master: they kill their children at
    // their local deadline.
    assert_eq!(a.wait(), 124, "{}", a.log());
    assert_eq!(b.wait(), 124, "{}", b.log());
}

#[test]
fn with_a_stopped_replica_the_acquisition_is_released_and_retried() {
    let (master, replica) = master_and_replica();
    let url = master.url_ns(NS);
    let scratch = Scratch::new();
    replica.sigstop();

    // With --min-replicas 1, within --wait: every attempt is released
    // again, and the last failure is reported as it is: Redis not available
    // as required (69), not as a full pool (75).
    let (code, run) = run_to_end(
        &url,
        &scratch,
        &with(
            FAST,
            &["--timeout", "300ms", "--wait", "1s", "--min-replicas", "1"],
        ),
        &["touch", &scratch.arg("ran")],
    );
    assert_eq!(code, 69, "{}", run.log());
    let log = run.log();
    assert!(
        log.matches("of the 1 replicas needed confirmed it (--min-replicas 1); released it")
            .count()
            >= 2,
        "{log}"
    );
    // The id of the last attempt depends on how many fit in the second.
    let last = run.last_line();
    assert!(
        last.starts_with("yaraus: leased id ") && last.contains(" but only 0 of the 1 replicas"),
        "{log}"
    );
    assert!(
        !scratch.exists("ran"),
        "the command ran on an unreplicated id"
    );
    assert!(leased_ids(&master).is_empty(), "an id was left leased");

    // Without --wait it keeps trying, and succeeds once the replica is back.
    let mut run = Run::start(
        &url,
        &scratch,
        &with(FAST, &["--timeout", "300ms", "--min-replicas", "1"]),
        &["sh", "-c", r#"echo "$YARAUS_WORKER_ID" > "$D/id""#],
    );
    run.wait_log("released it; waiting for a free id");
    assert!(!scratch.exists("id"));
    replica.sigcont();
    assert_eq!(run.wait(), 0, "{}", run.log());
    // Which of the two ids: the least recently used one, so it depends on
    // how many attempts were released before the replica came back. The
    // child must have been given the id the run says it leased.
    let log = run.log();
    let leased = log
        .lines()
        .find_map(|l| {
            l.split_once("client id: ")
                .and_then(|(_, r)| r.split_once(", id: "))
        })
        .map(|(_, id)| id.trim().to_string())
        .unwrap_or_else(|| panic!("no lease in the log: {log}"));
    assert!(leased == "1" || leased == "2", "{log}");
    assert_eq!(scratch.wait_line("id"), leased, "{log}");
}

#[test]
fn a_replica_stopped_mid_run_gets_the_child_killed_at_the_deadline() {
    let (master, replica) = master_and_replica();
    let scratch = Scratch::new();
    let child = scratch.script(
        "child.sh",
        r#"trap 'exit 0' TERM
echo $$ > "$D/pid"
while :; do sleep 0.05; done
"#,
    );
    let mut run = Run::start(
        &master.url_ns(NS),
        &scratch,
        &with(FAST, &["--timeout", "300ms", "--min-replicas", "1"]),
        &["sh", &child],
    );
    let pid = read_pid(&scratch, "pid");
    replica.sigstop();
    assert_eq!(run.wait(), 124, "{}", run.log());
    assert!(!alive(pid));
    let log = run.log();
    assert!(
        log.contains(
            "renewed, but only 0 of the 1 replicas needed confirmed it (--min-replicas 1)"
        ),
        "{log}"
    );
    assert!(log.contains("no renewal succeeded"), "{log}");
    replica.sigcont();
}

#[test]
fn without_min_replicas_a_shortfall_is_logged_and_counted_not_fatal() {
    let (master, replica) = master_and_replica();
    let scratch = Scratch::new();
    replica.sigstop();
    let (code, run) = run_to_end(
        &master.url_ns(NS),
        &scratch,
        &with(FAST, &["--timeout", "300ms"]),
        &["touch", &scratch.arg("ran")],
    );
    assert_eq!(code, 0, "{}", run.log());
    assert!(scratch.exists("ran"));
    let log = run.log();
    assert!(
        log.contains("leased id 1, but only 0 of the 1 replicas needed confirmed it"),
        "{log}"
    );
    assert!(log.contains("wait_shortfall"), "{log}");
    assert!(stat(&master, "wait_shortfall") >= 1, "not counted");
    replica.sigcont();
}

#[test]
fn min_replicas_above_the_connected_count_fails_and_leaves_no_id_leased() {
    let master = RedisServer::start_with(ServerOptions {
        tcp: true,
        ..Default::default()
    });
    init_pool(&master, 1, 2);
    let scratch = Scratch::new();
    let (code, run) = run_to_end(
        &master.url_ns(NS),
        &scratch,
        &with(FAST, &["--wait", "300ms", "--min-replicas", "1"]),
        &["touch", &scratch.arg("ran")],
    );
    assert_eq!(code, 69, "{}", run.log());
    assert!(!scratch.exists("ran"));
    assert!(
        run.log()
            .contains("only 0 of the 1 replicas needed confirmed it (--min-replicas 1)"),
        "{}",
        run.log()
    );
    // Each attempt leased an id and released it again.
    assert!(leased_ids(&master).is_empty());
}
