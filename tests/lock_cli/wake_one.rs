//! Wake-one (src/claim/wake.rs): where a release frees room for one, it
//! wakes the first waiter of the claim's queue, and only that one; a waiter
//! that has gone is passed over; each place a semaphore frees wakes a
//! waiter of its own.
//!
//! As in `wake.rs`, nothing is timed: every waiter's fallback poll is 30 s
//! (the hidden flag `--poll`), so a waiter done within `EVENT` was woken
//! by a message. How many refused attempts each policy costs is measured by
//! the herd benchmark (`benches/herd.rs`).

use super::wake::{LONG_POLL, exits_within_event, holder, subscribers};
use super::*;
use crate::lock_cli::common::EVENT;

/// Places in `queue` on `server`, first first.
fn queued(server: &RedisServer, queue: &str) -> Vec<String> {
    server.query(&["ZRANGE", queue, "0", "-1"])
}

/// Starts a waiter for `name` whose command appends `label` to `order`,
/// and waits until it has its place in the queue on every master.
fn queued_waiter(
    servers: &[RedisServer],
    args: &[&str],
    label: &str,
    order: &std::path::Path,
    queue: &str,
    place: usize,
) -> std::process::Child {
    let child = start(
        lock_cmd(&all(servers))
            .args(LONG_POLL)
            .args(args)
            .args(["--", "sh", "-c", &format!("echo {label} >> \"$0\"")])
            .arg(order),
    );
    wait_until("the waiter to take its place in the queue", EVENT, || {
        servers.iter().all(|s| queued(s, queue).len() == place + 1)
    });
    child
}

#[test]
fn waiters_are_woken_one_at_a_time_in_the_order_they_came() {
    for n in [1, 3] {
        let servers = masters(n, n > 1);
        let dir = tempfile::tempdir().unwrap();
        let order = dir.path().join("order");
        let holding = holder(&servers, "fifo", dir.path());
        let labels = ["a", "b", "c", "d"];
        let waiters: Vec<_> = labels
            .iter()
            .enumerate()
            .map(|(i, label)| {
                queued_waiter(&servers, &["fifo"], label, &order, "yaraus:queue:fifo", i)
            })
            .collect();
        std::fs::write(dir.path().join("go"), "").unwrap();
        assert_code(&finish(holding), 0);
        for (waiter, label) in waiters.into_iter().zip(labels) {
            let output = exits_within_event(waiter, &format!("waiter {label} to be woken"));
            assert_code(&output, 0);
        }
        // Every release woke the next waiter only: woken together, they
        // would race, and the order would be anyone's.
        assert_eq!(
            std::fs::read_to_string(&order).unwrap(),
            "a\nb\nc\nd\n",
            "{n} masters"
        );
        // Each left the queue when it took the lock.
        for s in &servers {
            assert_eq!(queued(s, "yaraus:queue:fifo"), Vec::<String>::new());
        }
    }
}

#[test]
fn a_waiter_that_has_gone_is_passed_over() {
    let servers = masters(1, false);
    let s = &servers[0];
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    let queue = "yaraus:queue:gone";
    let holding = holder(&servers, "gone", dir.path());
    let mut first = queued_waiter(&servers, &["gone"], "first", &order, queue, 0);
    let second = queued_waiter(&servers, &["gone"], "second", &order, queue, 1);
    let place = queued(s, queue)[0].clone();
    let channel = format!("yaraus:wake:gone:{place}");
    assert_eq!(subscribers(s, &channel), 1, "the first waiter listens");
    // Killed while it waits: its place stays in the queue, but nobody
    // listens on its channel any more.
    first.kill().unwrap();
    first.wait().unwrap();
    wait_until("the killed waiter's subscription to close", EVENT, || {
        subscribers(s, &channel) == 0
    });
    assert_eq!(queued(s, queue).len(), 2);
    std::fs::write(dir.path().join("go"), "").unwrap();
    assert_code(&finish(holding), 0);
    // The release found nobody on the first place's channel, dropped it,
    // and woke the second, long before its poll.
    let output = exits_within_event(second, "the second waiter to be woken");
    assert_code(&output, 0);
    assert_eq!(std::fs::read_to_string(&order).unwrap(), "second\n");
    assert_eq!(queued(s, queue), Vec::<String>::new());
}

#[test]
fn each_place_a_semaphore_frees_wakes_a_waiter_of_its_own() {
    let servers = masters(1, false);
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    let queue = "yaraus:queue:sem";
    let args = ["--limit", "2", "sem"];
    // Two holders whose commands run until `go`.
    let holders: Vec<_> = ["one", "two"]
        .iter()
        .map(|h| {
            let (started, go) = (dir.path().join(h), dir.path().join("go"));
            let child = start(
                lock_cmd(&all(&servers))
                    .args(args)
                    .args(["--", "sh", "-c"])
                    .arg(crate::lock_cli::common::process::holds_until_go(
                        &started, &go,
                    )),
            );
            wait_until("the holder's command to start", EVENT, || started.exists());
            child
        })
        .collect();
    let mut waiters: Vec<_> = ["a", "b"]
        .iter()
        .enumerate()
        .map(|(i, label)| queued_waiter(&servers, &args, label, &order, queue, i))
        .collect();
    // The first waiter is stopped: woken, it cannot take its place before
    // the second release, which must then wake the second waiter, not the
    // first again (woken twice, one waiter would leave the other place
    // free until its neighbour's poll).
    let first = Pid::from_raw(waiters[0].id() as i32);
    kill(first, Signal::SIGSTOP).unwrap();
    std::fs::write(dir.path().join("go"), "").unwrap();
    for h in holders {
        assert_code(&finish(h), 0);
    }
    let second = waiters.pop().unwrap();
    let output = exits_within_event(second, "the second waiter to be woken");
    assert_code(&output, 0);
    assert_eq!(std::fs::read_to_string(&order).unwrap(), "b\n");
    kill(first, Signal::SIGCONT).unwrap();
    let output = exits_within_event(waiters.pop().unwrap(), "the first waiter, continued");
    assert_code(&output, 0);
    assert_eq!(std::fs::read_to_string(&order).unwrap(), "b\na\n");
}

#[test]
fn a_queue_key_of_another_type_is_left_alone_and_everyone_is_woken() {
    let servers = masters(1, false);
    let s = &servers[0];
    // Somebody else's key where the queue would be.
    s.cmd(&["SET", "yaraus:queue:odd", "theirs"]);
    let dir = tempfile::tempdir().unwrap();
    let holding = holder(&servers, "odd", dir.path());
    let marker = dir.path().join("ran");
    let waiting = start(
        lock_cmd(&all(&servers))
            .args(LONG_POLL)
            .args(["odd", "--", "touch"])
            .arg(&marker),
    );
    wait_until("the waiter to subscribe", EVENT, || {
        subscribers(s, "yaraus:wake:odd") >= 1
    });
    std::fs::write(dir.path().join("go"), "").unwrap();
    assert_code(&finish(holding), 0);
    // Nobody could queue: the release woke every listener on the lock's
    // channel, long before the waiter's poll.
    let output = exits_within_event(waiting, "the waiter to be woken");
    assert_code(&output, 0);
    assert!(marker.exists());
    assert_eq!(s.query::<String>(&["GET", "yaraus:queue:odd"]), "theirs");
}
