//! Wake-ups instead of polls (src/claim/wake.rs): a release wakes a waiter
//! at once, and a lost wake-up costs only the fallback poll.
//!
//! No assertion here is timed. That the wake-up, not the poll, ended the
//! wait is shown by the hidden flag `--poll`, which sets the waiter's
//! fallback poll: at 30 s ([`LONG_POLL`]), a waiter that is done within
//! [`EVENT`] (20 s) was woken. How fast a hand-over is belongs to the
//! benchmark (`benches/handover.rs`).

use super::*;
use crate::lock_cli::common::EVENT;
use std::path::Path;

/// The hidden flag that makes the waiter's fallback poll 30 s.
pub(super) const LONG_POLL: [&str; 2] = ["--poll", "30s"];

/// Subscribers to `channel` on `server` (`PUBSUB NUMSUB`).
pub(super) fn subscribers(server: &RedisServer, channel: &str) -> i64 {
    let reply: (String, i64) = server.query(&["PUBSUB", "NUMSUB", channel]);
    reply.1
}

/// Waits until the waiter listens on every master.
fn wait_for_subscription(servers: &[RedisServer], channel: &str) {
    wait_until("the waiter to subscribe", EVENT, || {
        servers.iter().all(|s| subscribers(s, channel) >= 1)
    });
}

/// Waits for `child` to exit within [`EVENT`], killing it otherwise.
pub(super) fn exits_within_event(
    mut child: std::process::Child,
    what: &str,
) -> std::process::Output {
    let mut exited = false;
    let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_until(what, EVENT, || {
            exited = child.try_wait().unwrap().is_some();
            exited
        })
    }));
    if waited.is_err() {
        let _ = child.kill();
    }
    let output = child.wait_with_output().unwrap();
    assert!(
        waited.is_ok(),
        "{what}: not within {EVENT:?}; stderr:\n{}",
        stderr(&output)
    );
    output
}

/// A holder whose command runs until `go` exists, once it wrote `started`.
pub(super) fn holder(servers: &[RedisServer], name: &str, dir: &Path) -> std::process::Child {
    let (started, go) = (dir.join("started"), dir.join("go"));
    let child = start(lock_cmd(&all(servers)).args([name, "--", "sh", "-c"]).arg(
        crate::lock_cli::common::process::holds_until_go(&started, &go),
    ));
    wait_until("the holder's command to start", EVENT, || started.exists());
    child
}

#[test]
fn a_release_wakes_the_waiter_long_before_its_poll() {
    for n in [1, 3] {
        let servers = masters(n, n > 1);
        let dir = tempfile::tempdir().unwrap();
        let holding = holder(&servers, "woken", dir.path());
        let marker = dir.path().join("ran");
        let waiting = start(
            lock_cmd(&all(&servers))
                .args(LONG_POLL)
                .args(["woken", "--", "touch"])
                .arg(&marker),
        );
        wait_for_subscription(&servers, "yaraus:wake:woken");
        std::fs::write(dir.path().join("go"), "").unwrap();
        assert_code(&finish(holding), 0);
        // With a poll of 30 s, only the release's message can end the wait
        // within EVENT.
        let output = exits_within_event(waiting, "the woken waiter to take the lock");
        assert_code(&output, 0);
        assert!(
            marker.exists(),
            "{n} masters: the waiter's command did not run"
        );
        // Its subscription closed with the wait.
        wait_until("the subscription to close", EVENT, || {
            servers
                .iter()
                .all(|s| subscribers(s, "yaraus:wake:woken") == 0)
        });
    }
}

#[test]
fn a_lost_wake_up_costs_only_the_poll() {
    let servers = masters(1, false);
    let s = &servers[0];
    // Another tool's lock, freed by a raw DEL: nothing is published.
    s.cmd(&["SET", "unheard", "other", "PX", "600000"]);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let waiting = start(
        lock_cmd(&all(&servers))
            .args(["--poll", "300ms"])
            .args(["unheard", "--", "touch"])
            .arg(&marker),
    );
    wait_for_subscription(&servers, "yaraus:wake:unheard");
    s.cmd(&["DEL", "unheard"]);
    let output = exits_within_event(waiting, "the waiter to find the lock free by polling");
    assert_code(&output, 0);
    assert!(marker.exists());
}

#[test]
fn a_waiter_through_sentinel_is_woken_too() {
    use crate::lock_cli::common::ServerOptions;
    use crate::lock_cli::common::sentinel::{Sentinel, sentinel_url};
    let master = RedisServer::start_with(ServerOptions {
        tcp: true,
        ..ServerOptions::default()
    });
    let sentinels = [Sentinel::start(&master, 1)];
    let url = sentinel_url(&sentinels, "sn");
    let dir = tempfile::tempdir().unwrap();
    let (started, go) = (dir.path().join("started"), dir.path().join("go"));
    let lock = |more: &[&str]| {
        let mut cmd = crate::lock_cli::common::yaraus();
        cmd.args(["--redis", &url, "lock", "watched"]).args(more);
        cmd
    };
    let holding = start(lock(&["--", "sh", "-c"]).arg(
        crate::lock_cli::common::process::holds_until_go(&started, &go),
    ));
    wait_until("the holder's command to start", EVENT, || started.exists());
    let waiting = start(&mut lock(&[&LONG_POLL[..], &["--", "true"]].concat()));
    wait_for_subscription(std::slice::from_ref(&master), "sn:wake:watched");
    std::fs::write(&go, "").unwrap();
    assert_code(&finish(holding), 0);
    let output = exits_within_event(waiting, "the waiter through Sentinel to be woken");
    assert_code(&output, 0);
}

#[test]
fn a_waiter_on_a_cluster_is_woken_by_the_sharded_publish() {
    use crate::lock_cli::common::cluster::Cluster;
    let cluster = Cluster::start(3);
    let url = cluster.url("cl");
    let channel = "cl:wake:{sharded}";
    let node = cluster.node_of(channel);
    let dir = tempfile::tempdir().unwrap();
    let (started, go) = (dir.path().join("started"), dir.path().join("go"));
    let lock = |more: &[&str]| {
        let mut cmd = crate::lock_cli::common::yaraus();
        cmd.args(["--redis", &url, "lock", "sharded"]).args(more);
        cmd
    };
    let holding = start(lock(&["--", "sh", "-c"]).arg(
        crate::lock_cli::common::process::holds_until_go(&started, &go),
    ));
    wait_until("the holder's command to start", EVENT, || started.exists());
    let waiting = start(&mut lock(&[&LONG_POLL[..], &["--", "true"]].concat()));
    wait_until("the waiter to subscribe on the lock's shard", EVENT, || {
        let (_, n): (String, i64) = node.query(&["PUBSUB", "SHARDNUMSUB", channel]);
        n >= 1
    });
    std::fs::write(&go, "").unwrap();
    assert_code(&finish(holding), 0);
    // With a poll of 30 s, only the SPUBLISH can end the wait within EVENT.
    let output = exits_within_event(waiting, "the waiter on the cluster to be woken");
    assert_code(&output, 0);
}

#[test]
fn a_waiter_whose_subscription_is_cut_subscribes_again() {
    let servers = masters(1, false);
    let s = &servers[0];
    let dir = tempfile::tempdir().unwrap();
    let holding = holder(&servers, "cut", dir.path());
    let waiting = start(
        lock_cmd(&all(&servers))
            .args(LONG_POLL)
            .args(["cut", "--", "true"]),
    );
    wait_for_subscription(&servers, "yaraus:wake:cut");
    // As a master that restarts or dies in a failover would: its
    // subscribed connection goes.
    let killed: i64 = s.query(&["CLIENT", "KILL", "TYPE", "pubsub"]);
    assert_eq!(killed, 1);
    // Subscribed again at once, not after its poll of 30 s.
    wait_for_subscription(&servers, "yaraus:wake:cut");
    std::fs::write(dir.path().join("go"), "").unwrap();
    assert_code(&finish(holding), 0);
    let output = exits_within_event(waiting, "the waiter subscribed again to be woken");
    assert_code(&output, 0);
}

#[test]
fn a_waiter_without_wakeups_never_subscribes_and_takes_the_lock_by_polling() {
    let servers = masters(1, false);
    let s = &servers[0];
    let dir = tempfile::tempdir().unwrap();
    let holding = holder(&servers, "polled", dir.path());
    let before = scripts_run(s);
    let waiting = start(
        lock_cmd(&all(&servers))
            .args(["--wakeups", "off", "--poll", "100ms"])
            .args(["polled", "--", "true"]),
    );
    // A waiter subscribes after its first refused attempt, before its
    // second: after three, one that wakes would listen.
    wait_until("the waiter to be refused three times", EVENT, || {
        scripts_run(s) >= before + 3
    });
    assert_eq!(subscribers(s, "yaraus:wake:polled"), 0);
    std::fs::write(dir.path().join("go"), "").unwrap();
    assert_code(&finish(holding), 0);
    let output = exits_within_event(waiting, "the polling waiter to take the lock");
    assert_code(&output, 0);
}
