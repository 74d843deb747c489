//! `yaraus lock` mutual exclusion against real redis-servers: twenty
//! concurrent holders whose children log their stay in the critical section,
//! with one master, three, and five while masters are killed and frozen; and
//! three masters with two down, where nobody may hold the lock.

use crate::common;

use common::lock::*;
use common::{RedisServer, wait_until};
use std::process::Child;
use std::time::Duration;

const HOLDERS: usize = 20;

/// Starts the twenty contenders for `name` on `servers`.
fn contenders(servers: &[&RedisServer], name: &str, log: &std::path::Path) -> Vec<Child> {
    (0..HOLDERS)
        .map(|_| {
            start(
                lock_cmd(servers)
                    .args(["--quiet", "--ttl", "3s", name, "--", "sh", "-c"])
                    .arg(critical_section(log)),
            )
        })
        .collect()
}

fn all_succeed(children: Vec<Child>) {
    for child in children {
        let output = finish(child);
        assert_code(&output, 0);
    }
}

#[test]
fn twenty_holders_never_overlap_on_one_master() {
    let servers = masters(1, false);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("critical.log");
    all_succeed(contenders(&all(&servers), "excl1", &log));
    assert_no_overlap(&log, HOLDERS);
    assert_eq!(get(&servers[0], "excl1"), None, "the lock is left behind");
}

#[test]
fn twenty_holders_never_overlap_on_three_masters() {
    let servers = masters(3, true);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("critical.log");
    all_succeed(contenders(&all(&servers), "excl3", &log));
    assert_no_overlap(&log, HOLDERS);
    for s in &servers {
        assert_eq!(
            get(s, "excl3"),
            None,
            "the lock is left behind on {}",
            s.url()
        );
    }
}

#[test]
fn twenty_holders_never_overlap_on_five_masters_while_one_is_killed_and_one_frozen() {
    let mut servers = masters(5, true);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("critical.log");
    let children = contenders(&all(&servers), "excl5", &log);

    // In the middle of the run: one master dies, another stops answering.
    wait_until(
        "a quarter of the holders to be done",
        PROCESS_TIMEOUT,
        || lines(&log).iter().filter(|l| l.starts_with("stop")).count() >= HOLDERS / 4,
    );
    servers[0].sigkill();
    servers[1].sigstop();
    assert!(
        lines(&log).iter().filter(|l| l.starts_with("stop")).count() < HOLDERS,
        "the faults came too late to matter"
    );
    all_succeed(children);
    servers[1].sigcont();

    assert_no_overlap(&log, HOLDERS);
    for s in &servers[2..] {
        assert_eq!(
            get(s, "excl5"),
            None,
            "the lock is left behind on {}",
            s.url()
        );
    }
    // The frozen master runs, once resumed, the requests that waited in its
    // socket: a stale SET may land there after its sender gave up. Nobody
    // holds such a key, and it expires with its ttl.
    wait_until(
        "a stale key on the resumed master to expire",
        Duration::from_secs(10),
        || get(&servers[1], "excl5").is_none(),
    );
}

#[test]
fn with_two_of_three_masters_down_nobody_holds_the_lock_and_waiters_give_up() {
    let mut servers = masters(3, true);
    servers[0].sigkill();
    servers[2].sigkill();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let children: Vec<Child> = (0..5)
        .map(|_| {
            start(
                lock_cmd(&all(&servers))
                    .args([
                        "--quiet", "--wait", "1s", "--ttl", "2s", "down", "--", "touch",
                    ])
                    .arg(&marker),
            )
        })
        .collect();
    for child in children {
        let output = finish(child);
        assert_code(&output, 69);
        let err = stderr(&output);
        let last = err.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("yaraus: cannot take the lock down")
                && last.contains("a majority (2) is needed")
                && last.contains("gave up after waiting 1s"),
            "{err}"
        );
    }
    assert!(!marker.exists(), "a command ran without the lock");
    // The live master holds no lock; at most the fencing counter moved (a
    // failed attempt's vote may burn numbers; they never repeat).
    let left: Vec<String> = servers[1].snapshot().into_keys().collect();
    assert!(
        left.iter().all(|k| k == "yaraus:fencing:down"),
        "the one live master kept {left:?}"
    );
    // The surviving master really is free: a raw SET NX takes it.
    assert_eq!(
        servers[1].query::<Option<String>>(&["SET", "down", "x", "NX", "PX", "1000"]),
        Some("OK".into())
    );
}
