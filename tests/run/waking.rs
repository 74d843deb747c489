//! Wake-ups for `run` on a full pool (src/claim/wake.rs): a released id
//! wakes a run waiting for one at once, on one server and on a Cluster of
//! three masters (sharded pub/sub), a release that publishes nothing
//! costs only the fallback poll, and the waiting runs are woken one at a
//! time, first come first served (wake-one).
//!
//! No assertion here is timed. That the wake-up, not the poll, ended the
//! wait is shown by the hidden flag `--poll`, which sets the waiter's
//! fallback poll: at 30 s, a waiter whose command runs within [`EVENT`]
//! (20 s) was woken.

use super::*;
use common::cluster::Cluster;

/// The hidden flag that makes the waiting run's fallback poll `POLL`.
fn polling(poll: &str) -> Vec<&str> {
    with(FAST, &["--poll", poll])
}

/// Subscribers to `channel` on `server`: plain (`PUBSUB NUMSUB`) or
/// sharded (`PUBSUB SHARDNUMSUB`).
fn subscribers(server: &RedisServer, channel: &str, sharded: bool) -> i64 {
    let what = if sharded { "SHARDNUMSUB" } else { "NUMSUB" };
    let reply: (String, i64) = server.query(&["PUBSUB", what, channel]);
    reply.1
}

/// A run holding the pool's only id until `$D/go` exists, once its command
/// started.
fn holder(url: &str, scratch: &Scratch) -> Run {
    let holder = Run::start(
        url,
        scratch,
        FAST,
        &[
            "sh",
            "-c",
            "touch \"$D/started\"; while [ ! -e \"$D/go\" ]; do sleep 0.01; done",
        ],
    );
    wait_until("the holder's command to start", EVENT, || {
        scratch.path("started").exists()
    });
    holder
}

/// A [`holder`]; then a run waiting for an id, with a fallback poll of
/// `poll`, once it listens on `channel` at `node`.
fn held_and_waiting(
    url: &str,
    scratch: &Scratch,
    node: &RedisServer,
    (channel, sharded): (&str, bool),
    poll: &str,
) -> (Run, Run) {
    let holder = holder(url, scratch);
    let cmd = run_cmd(
        url,
        scratch,
        &polling(poll),
        &["touch", &scratch.arg("ran")],
    );
    let waiter = Run::spawn(cmd, scratch);
    wait_until("the waiting run to subscribe", EVENT, || {
        subscribers(node, channel, sharded) >= 1
    });
    (holder, waiter)
}

#[test]
fn a_released_id_wakes_the_waiting_run_long_before_its_poll() {
    let check = |url: &str, node: &RedisServer, channel: (&str, bool)| {
        let scratch = Scratch::new();
        let (mut holder, mut waiter) = held_and_waiting(url, &scratch, node, channel, "30s");
        fs::write(scratch.path("go"), "").unwrap();
        assert_eq!(holder.wait(), 0, "{}", holder.log());
        // With a poll of 30 s, only the release's message can end the wait
        // within EVENT.
        assert_eq!(waiter.wait(), 0, "{}", waiter.log());
        assert!(
            scratch.path("ran").exists(),
            "{url}: its command did not run"
        );
        wait_until("the subscription to close", EVENT, || {
            subscribers(node, channel.0, channel.1) == 0
        });
    };
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    check(&server.url_ns(NS), &server, ("t:wake:t:ids", false));

    let cluster = Cluster::start(3);
    let url = cluster.url(NS);
    let out = common::yaraus()
        .args(["init", "--redis", &url, "--min", "1", "--max", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let channel = "t:wake:{t}:ids";
    check(&url, cluster.node_of(channel), (channel, true));
}

#[test]
fn a_release_that_publishes_nothing_costs_only_the_poll() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let scratch = Scratch::new();
    let (holder, mut waiter) = held_and_waiting(
        &server.url_ns(NS),
        &scratch,
        &server,
        ("t:wake:t:ids", false),
        "300ms",
    );
    // The holder frozen, its id freed by hand: nothing is published.
    holder.signal(Signal::SIGSTOP);
    server.cmd(&["ZADD", IDS, "XX", "0", &enc(1)]);
    assert_eq!(waiter.wait(), 0, "{}", waiter.log());
    assert!(scratch.path("ran").exists());
    holder.signal(Signal::SIGKILL);
}

/// Runs in the queue of the pool `t` on `server`, first first.
fn queued(server: &RedisServer) -> Vec<String> {
    server.query(&["ZRANGE", "t:queue:t:ids", "0", "-1"])
}

#[test]
fn runs_waiting_for_an_id_are_woken_one_at_a_time_in_the_order_they_came() {
    let server = RedisServer::start();
    init_pool(&server, 1, 1);
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    let mut holder = holder(&url, &scratch);
    let labels = ["a", "b", "c"];
    let mut waiters: Vec<Run> = labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let script = format!("echo {label} >> '{}'", scratch.arg("order"));
            let cmd = run_cmd(&url, &scratch, &polling("30s"), &["sh", "-c", &script]);
            let waiter = Run::spawn(cmd, &scratch);
            wait_until("the run to take its place in the queue", EVENT, || {
                queued(&server).len() == i + 1
            });
            waiter
        })
        .collect();
    fs::write(scratch.path("go"), "").unwrap();
    assert_eq!(holder.wait(), 0, "{}", holder.log());
    // Each release woke the next run only, long before its poll of 30 s.
    for waiter in &mut waiters {
        assert_eq!(waiter.wait(), 0, "{}", waiter.log());
    }
    assert_eq!(
        fs::read_to_string(scratch.path("order")).unwrap(),
        "a\nb\nc\n"
    );
    assert_eq!(queued(&server), Vec::<String>::new());
}
