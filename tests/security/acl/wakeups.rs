//! Waiters woken by a release as the user: a `lock` waiter and a `run`
//! waiting for an id, and a user made from the rules printed before queues
//! of waiters existed, which still waits, is woken and releases.

use super::{as_user, denied, servers_with_user, spawn_as_user};
use crate::security::USER_PASSWORD;
use crate::security::common::RedisServer;

/// Waits until `waiter` (woken, with a fallback poll of 30 s) exits,
/// within `EVENT`, and asserts it succeeded; kills it otherwise.
fn woken_within_event(mut waiter: std::process::Child, what: &str) {
    use crate::security::common::{EVENT, wait_until};
    let woken = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_until(what, EVENT, || waiter.try_wait().unwrap().is_some())
    }));
    if woken.is_err() {
        let _ = waiter.kill();
    }
    let output = waiter.wait_with_output().unwrap();
    assert!(
        woken.is_ok() && output.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_waiter_restricted_by_acl_rules_is_woken_by_a_release() {
    use crate::security::common::{EVENT, wait_until};
    let (servers, urls, rules) = servers_with_user(
        1,
        false,
        "ns",
        &["acl-rules", "--lock-prefix", "locks:", "lock"],
    );
    assert!(
        rules.contains("&ns:wake:locks:*") && rules.contains("+subscribe"),
        "{rules}"
    );
    let one = &servers[0];
    let mut conn = as_user(one);
    assert!(
        denied(&mut conn, &["PUBLISH", "ns:wake:other", ""]),
        "a channel outside the locks' wake channels"
    );
    let dir = tempfile::tempdir().unwrap();
    let (started, go) = (dir.path().join("started"), dir.path().join("go"));
    let spawn = |args: &[&str]| spawn_as_user(&urls, args);
    let holder_script = crate::common::process::holds_until_go(&started, &go);
    let mut holder = spawn(&["lock", "--prefix", "locks:", "job", "-c", &holder_script]);
    wait_until("the holder's command", EVENT, || started.exists());
    // A fallback poll of 30 s (the hidden flag): only a wake-up ends the
    // wait within EVENT.
    let waiter = spawn(&[
        "lock", "--prefix", "locks:", "--poll", "30s", "job", "--", "true",
    ]);
    wait_until("the waiter to subscribe as the user", EVENT, || {
        let (_, n): (String, i64) = one.query(&["PUBSUB", "NUMSUB", "ns:wake:locks:job"]);
        n >= 1
    });
    std::fs::write(&go, "").unwrap();
    assert!(holder.wait().unwrap().success());
    woken_within_event(waiter, "the waiter, woken, to take the lock");
}

#[test]
fn a_run_restricted_by_acl_rules_is_woken_by_a_release() {
    use crate::security::common::{EVENT, wait_until};
    let (servers, urls, rules) = servers_with_user(1, false, "ns", &["acl-rules", "init", "run"]);
    assert!(
        rules.contains("&ns:wake:ns:ids ") && rules.contains("+subscribe"),
        "the pool's one channel: {rules}"
    );
    let one = &servers[0];
    assert!(
        denied(&mut as_user(one), &["PUBLISH", "ns:wake:ns:idsX", ""]),
        "a channel beside the pool's"
    );
    let dir = tempfile::tempdir().unwrap();
    let (started, go) = (dir.path().join("started"), dir.path().join("go"));
    let spawn = |args: &[&str]| spawn_as_user(&urls, args);
    let init = spawn(&["init", "--min", "1", "--max", "1"]);
    assert!(init.wait_with_output().unwrap().status.success());
    let fast = ["run", "--no-safeguards", "--delay", "0"];
    let script = crate::common::process::holds_until_go(&started, &go);
    let holder = spawn(&[&fast[..], &["--", "sh", "-c", &script]].concat());
    wait_until("the holder's command", EVENT, || started.exists());
    // A fallback poll of 30 s (the hidden flag): only a wake-up ends the
    // wait within EVENT.
    let waiter = spawn(&[&fast[..], &["--poll", "30s", "--", "true"]].concat());
    wait_until("the waiting run to subscribe as the user", EVENT, || {
        let (_, n): (String, i64) = one.query(&["PUBSUB", "NUMSUB", "ns:wake:ns:ids"]);
        n >= 1
    });
    std::fs::write(&go, "").unwrap();
    assert!(holder.wait_with_output().unwrap().status.success());
    woken_within_event(waiter, "the waiting run, woken, to lease the id");
}

/// Makes the user on `servers` again from `rules` as a yaraus without
/// queues of waiters printed them: no queue keys, no waiters' own channels
/// beside the pool's (`&NS:wake:NS:ids:*`).
fn as_before_queues(servers: &[RedisServer], rules: &str) -> String {
    let old: Vec<&str> = rules
        .split_whitespace()
        .filter(|t| !t.contains(":queue:") && !t.ends_with(":ids:*"))
        .collect();
    let password = format!(">{USER_PASSWORD}");
    for s in servers {
        let mut args = old.clone();
        args.push(&password);
        assert_eq!(s.query::<String>(&args), "OK");
    }
    old.join(" ")
}

#[test]
fn a_user_made_from_the_rules_before_queues_still_waits_is_woken_and_releases() {
    use crate::security::common::{EVENT, wait_until};
    let (servers, urls, rules) = servers_with_user(
        1,
        false,
        "ns",
        &[
            "acl-rules",
            "--lock-prefix",
            "locks:",
            "init",
            "run",
            "lock",
        ],
    );
    let old = as_before_queues(&servers, &rules);
    assert!(
        !old.contains("queue") && old.contains("&ns:wake:ns:ids"),
        "{old}"
    );
    let one = &servers[0];
    assert!(denied(&mut as_user(one), &["ZCARD", "ns:queue:locks:job"]));
    let dir = tempfile::tempdir().unwrap();
    let (started, go) = (dir.path().join("started"), dir.path().join("go"));
    let spawn = |args: &[&str]| spawn_as_user(&urls, args);
    let init = spawn(&["init", "--min", "1", "--max", "1"]);
    assert!(init.wait_with_output().unwrap().status.success());
    let holds = crate::common::process::holds_until_go(&started, &go);
    let fast = ["run", "--no-safeguards", "--delay", "0"];
    // A lock and a run, each held while another waits with a fallback poll
    // of 30 s (the hidden flag): only a wake-up ends the wait within EVENT.
    // (holder, waiter, the channel it listens on)
    type Case<'a> = (Vec<&'a str>, Vec<&'a str>, &'a str);
    let cases: [Case; 2] = [
        (
            vec!["lock", "--prefix", "locks:", "job", "-c", &holds],
            vec![
                "lock", "--prefix", "locks:", "--poll", "30s", "job", "--", "true",
            ],
            "ns:wake:locks:job",
        ),
        (
            [&fast[..], &["--", "sh", "-c", &holds]].concat(),
            [&fast[..], &["--poll", "30s", "--", "true"]].concat(),
            "ns:wake:ns:ids",
        ),
    ];
    for (holding, waiting, channel) in cases {
        let _ = std::fs::remove_file(&go);
        let _ = std::fs::remove_file(&started);
        let holder = spawn(&holding);
        wait_until("the holder's command", EVENT, || started.exists());
        let waiter = spawn(&waiting);
        wait_until("the waiter to subscribe as the user", EVENT, || {
            let (_, n): (String, i64) = one.query(&["PUBSUB", "NUMSUB", channel]);
            n >= 1
        });
        std::fs::write(&go, "").unwrap();
        // The release named the queue, was refused by the ACL, and freed
        // without it, saying so once.
        let released = holder.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&released.stderr).into_owned();
        assert!(released.status.success(), "{said}");
        assert!(
            said.contains("denies this user the queue of waiters"),
            "{said}"
        );
        woken_within_event(
            waiter,
            &format!("the waiter on {channel}, woken, to take its claim"),
        );
    }
}
