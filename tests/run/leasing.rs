//! Leasing: distinct ids, exhaustion, order, release.

use super::*;

#[test]
fn fifty_concurrent_runs_hold_pairwise_distinct_ids() {
    const N: usize = 50;
    let (server, scratch) = fresh_pool(1, 1023);
    let url = server.url_ns(NS);
    // Each child records what it holds, then waits (holding it) for the barrier.
    let worker = scratch.script(
        "worker.sh",
        r#"echo "$YARAUS_WORKER_ID $YARAUS_CLIENT_ID" > "$D/held.$$.tmp"
mv "$D/held.$$.tmp" "$D/held.$$"
while [ ! -e "$D/barrier" ]; do sleep 0.2; done
"#,
    );
    // Long expiry: the property is distinctness, not renewal under load.
    let opts = [
        "--interval",
        "500ms",
        "--expire",
        "30s",
        "--kill-after",
        "1s",
        "--delay",
        "0",
        "--no-safeguards",
    ];
    let mut runs: Vec<Run> = (0..N)
        .map(|_| Run::start(&url, &scratch, &opts, &["sh", &worker]))
        .collect();

    let held_files = || -> Vec<String> {
        fs::read_dir(scratch.dir())
            .expect("read scratch")
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.starts_with("held.") && !n.ends_with(".tmp"))
            .collect()
    };
    wait_until(
        "all 50 children to record their id",
        Duration::from_secs(60),
        || {
            if let Some(r) = runs.iter_mut().find_map(|r| r.exited().then_some(r)) {
                panic!("{} exited early:\n{}", r.name, r.log());
            }
            held_files().len() >= N
        },
    );

    // All 50 children are alive now, each holding what it recorded.
    let mut held: BTreeMap<u64, String> = BTreeMap::new();
    let mut clients = BTreeSet::new();
    for file in held_files() {
        let line = scratch.wait_line(&file);
        let (id, client) = line.split_once(' ').expect("'id client'");
        let id: u64 = id.parse().expect("numeric id");
        assert!(
            held.insert(id, client.to_string()).is_none(),
            "id {id} is held by two children at once"
        );
        assert!(
            clients.insert(client.to_string()),
            "client id {client} given twice"
        );
    }
    assert!(runs.iter_mut().all(|r| !r.exited()), "a run ended early");
    // A fresh pool has every score at 0: the 50 smallest ids go first.
    assert_eq!(
        held.keys().copied().collect::<Vec<_>>(),
        (1..=N as u64).collect::<Vec<_>>()
    );
    for (&id, client) in &held {
        assert_leased_to(&server, id, client);
    }

    scratch.touch("barrier");
    for run in &mut runs {
        assert_eq!(run.wait(), 0, "{}", run.log());
    }
    for (&id, client) in &held {
        assert_released(&server, id, client);
    }
    assert!(leased_ids(&server).is_empty());
}

#[test]
fn exhausted_pool_with_wait_exits_75_and_leaves_the_pool_alone() {
    let server = RedisServer::start();
    init_pool(&server, 1, 2);
    hold_by_hand(&server, 1, "other-1", 3600.0);
    hold_by_hand(&server, 2, "other-2", 3600.0);
    let before = pool_keys(&server);
    let scratch = Scratch::new();

    let (code, run) = run_to_end(
        &server.url_ns(NS),
        &scratch,
        &with(FAST, &["--wait", "300ms"]),
        &["touch", &scratch.arg("ran")],
    );
    assert_eq!(code, 75, "{}", run.log());
    assert!(
        run.last_line().starts_with("yaraus: no id is free"),
        "{}",
        run.log()
    );
    // It waited and retried before giving up.
    assert!(run.log().contains("retrying in"), "{}", run.log());
    assert!(stat(&server, "get_id_no_available_id") >= 2);
    assert!(!scratch.exists("ran"), "the command ran without an id");
    assert_eq!(pool_keys(&server), before);
}

#[test]
fn a_waiting_run_gets_the_id_a_holder_releases() {
    let (server, scratch) = fresh_pool(1, 1);
    let url = server.url_ns(NS);
    let holder_sh = scratch.script(
        "holder.sh",
        r#"echo "$YARAUS_WORKER_ID" > "$D/holder"
while [ ! -e "$D/go" ]; do sleep 0.05; done
"#,
    );
    let mut holder = Run::start(&url, &scratch, FAST, &["sh", &holder_sh]);
    assert_eq!(scratch.wait_line("holder"), "1");

    let mut waiter = Run::start(
        &url,
        &scratch,
        &with(FAST, &["--wait", "20s"]),
        &["sh", "-c", r#"echo "$YARAUS_WORKER_ID" > "$D/waiter""#],
    );
    waiter.wait_log("retrying in");
    assert!(!scratch.exists("waiter"));

    scratch.touch("go");
    assert_eq!(holder.wait(), 0);
    assert_eq!(waiter.wait(), 0, "{}", waiter.log());
    assert_eq!(scratch.wait_line("waiter"), "1");
}

#[test]
fn expired_ids_are_reused_oldest_free_first_smallest_on_ties() {
    let (server, scratch) = fresh_pool(1, 12);
    let url = server.url_ns(NS);
    // Everything leased to ghosts for an hour, except four expired leases:
    // B11 expired first; A9 and B10 at the same moment (the tie goes to 9,
    // the smaller id, although "A9" and "B10" differ in length); A2 last.
    for id in 1..=12 {
        hold_by_hand(&server, id, &format!("ghost-{id}"), 3600.0);
    }
    let now = server_now(&server);
    for (id, ago) in [(11, 200.0), (9, 100.0), (10, 100.0), (2, 50.0)] {
        server.cmd(&["ZADD", IDS, &(now - ago).to_string(), &enc(id)]);
    }

    let mut got = Vec::new();
    for round in 0..5 {
        let (code, run) = run_to_end(&url, &scratch, FAST, &["sh", "-c", "echo <> > got"]);
        assert_eq!(code, 0, "{}", run.log());
        let (client, id) = run.lease().expect("lease line");
        assert_eq!(scratch.wait_line("got"), id.to_string());
        if round == 0 {
            // The expired lease of ghost-11 now belongs to us.
            assert_released(&server, 11, &client);
        }
        got.push(id);
        fs::remove_file(scratch.path("got")).unwrap();
    }
    // A release makes an id the most recently freed: 11 comes back last.
    assert_eq!(got, [11, 9, 10, 2, 11]);
    assert_eq!(
        leased_ids(&server).into_iter().collect::<BTreeSet<_>>(),
        BTreeSet::from([1, 3, 4, 5, 6, 7, 8, 12]),
        "the ghosts' live leases were left alone"
    );
}

#[test]
fn id_is_released_at_exit_and_the_exit_code_is_passed_through() {
    let (server, scratch) = fresh_pool(1, 3);
    let url = server.url_ns(NS);
    let child = scratch.script(
        "child.sh",
        r#"echo "$YARAUS_WORKER_ID $YARAUS_CLIENT_ID" > "$D/who"
while [ ! -e "$D/go" ]; do sleep 0.05; done
exit 42
"#,
    );
    let mut run = Run::start(&url, &scratch, FAST, &["sh", &child]);
    let who = scratch.wait_line("who");
    let (id, client) = who.split_once(' ').unwrap();
    let id: u64 = id.parse().unwrap();
    assert_eq!(run.lease(), Some((client.to_string(), id)));
    assert_leased_to(&server, id, client);

    scratch.touch("go");
    assert_eq!(run.wait(), 42);
    assert_released(&server, id, client);
    assert!(
        run.last_line().ends_with(&format!("releasing id {id}...")),
        "{}",
        run.log()
    );

    for code in [0, 1, 3, 99, 123] {
        let (got, run) = run_to_end(&url, &scratch, FAST, &["sh", "-c", &format!("exit {code}")]);
        assert_eq!(got, code, "{}", run.log());
        let (client, id) = run.lease().unwrap();
        assert_released(&server, id, &client);
    }
    assert!(leased_ids(&server).is_empty());
}

#[test]
fn exec_failures_exit_127_and_126_and_release_the_id() {
    let (server, scratch) = fresh_pool(1, 2);
    let url = server.url_ns(NS);
    fs::write(scratch.path("not-executable"), "#!/bin/sh\necho hi\n").unwrap();
    fs::create_dir(scratch.path("a-directory")).unwrap();

    for (command, want) in [
        ("yaraus-test-no-such-command".to_string(), 127),
        (scratch.arg("missing-file"), 127),
        (scratch.arg("not-executable"), 126),
        (scratch.arg("a-directory"), 126),
    ] {
        let (code, run) = run_to_end(&url, &scratch, FAST, &[&command, "<>"]);
        assert_eq!(code, want, "{command}: {}", run.log());
        let last = run.last_line();
        assert!(
            last.starts_with(&format!("yaraus: cannot run '{command}'")),
            "{last}"
        );
        if want == 127 {
            assert!(last.contains("not found"), "{last}");
        }
        let (client, id) = run.lease().expect("the id was leased first");
        assert_released(&server, id, &client);
        assert!(
            leased_ids(&server).is_empty(),
            "{command}: an id stayed leased"
        );
    }
}
