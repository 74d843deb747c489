//! A Sentinel-managed group: yaraus finds the master through the sentinels,
//! and after the master is SIGKILLed and a replica promoted, finds the new
//! one (it asks the sentinels again on every dial and checks `ROLE`).

use super::*;
use common::pool::{NS, enc, init_pool, server_now};
use common::process::{Run, lock_cmd};
use common::scratch::Scratch;
use common::sentinel::{Sentinel, sentinel_url, wait_failover};
use common::{RedisServer, ServerOptions, wait_until};

fn group(replicas: usize) -> (RedisServer, Vec<RedisServer>, Vec<Sentinel>) {
    let master = RedisServer::start_with(ServerOptions {
        tcp: true,
        ..Default::default()
    });
    let replicas: Vec<RedisServer> = (0..replicas)
        .map(|_| {
            RedisServer::start_with(ServerOptions {
                tcp: true,
                replica_of: Some(&master),
                ..Default::default()
            })
        })
        .collect();
    for replica in &replicas {
        replica.wait_replica_synced(&master);
    }
    let sentinels = (0..3).map(|_| Sentinel::start(&master, 2)).collect();
    (master, replicas, sentinels)
}

/// The lease expiry score of `id` on `server`, in seconds.
fn expiry(server: &RedisServer, id: u64) -> f64 {
    server
        .query::<Option<f64>>(&["ZSCORE", &format!("{NS}:ids"), &enc(id)])
        .unwrap_or(0.0)
}

#[test]
fn a_run_keeps_its_id_across_a_sentinel_failover() {
    let (mut master, replicas, sentinels) = group(2);
    init_pool(&master, 1, 1);
    for replica in &replicas {
        replica.wait_replica_synced(&master);
    }
    let url = sentinel_url(&sentinels, NS);
    let scratch = Scratch::new();
    let child = scratch.script(
        "child.sh",
        "echo \"$YARAUS_WORKER_ID\" > \"$D/id\"\nwhile [ ! -e \"$D/go\" ]; do sleep 0.05; done\n",
    );
    // The lease (10 s) outlasts the failover (about 1-3 s) and the
    // reconfiguration of the other replica: the child must keep running
    // while yaraus finds the new master and renews there.
    let opts = [
        "--interval",
        "300ms",
        "--expire",
        "10s",
        "--delay",
        "0",
        "--timeout",
        "500ms",
        "--no-safeguards",
        "--min-replicas",
        "1",
    ];
    let mut run = Run::start(&url, &scratch, &opts, &["sh", &child]);
    assert_eq!(scratch.wait_line("id"), "1");
    // Confirmed by a replica before the child started (--min-replicas 1);
    // both have it once the next renewal is confirmed.
    let before = expiry(&replicas[0], 1).max(expiry(&replicas[1], 1));
    assert!(before > 0.0, "no replica has the lease");

    let old = master.port().unwrap();
    master.sigkill();
    let new = wait_failover(&sentinels, old, Duration::from_secs(30));
    let promoted = replicas
        .iter()
        .find(|r| r.port() == Some(new))
        .expect("a replica was promoted");
    // Renewals now reach the promoted replica, confirmed by the other one
    // once Sentinel points it at the new master: the expiry moves forward.
    wait_until(
        "a renewal on the new master",
        Duration::from_secs(20),
        || expiry(promoted, 1) > before + 0.5,
    );
    assert!(!run.exited(), "yaraus gave up: {}", run.log());
    scratch.touch("go");
    assert_eq!(run.wait(), 0, "{}", run.log());
    // Released on the new master: free from now on.
    let released = expiry(promoted, 1);
    assert!(released <= server_now(promoted), "{released}");
}

#[test]
fn a_lock_through_sentinel_is_on_the_replica_before_the_command_starts() {
    let (_master, replicas, sentinels) = group(1);
    let replica = &replicas[0];
    let url = sentinel_url(&sentinels, NS);
    let scratch = Scratch::new();
    let out = run_yaraus(
        &[
            "lock",
            "--redis",
            &url,
            "--min-replicas",
            "1",
            "nightly",
            "--",
            "sh",
            "-c",
            &format!(
                "redis-cli -p {} GET nightly > {}",
                replica.port().unwrap(),
                scratch.arg("seen")
            ),
        ],
        &[],
        LIMIT,
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let seen = scratch.read("seen").unwrap_or_default();
    assert!(!seen.trim().is_empty(), "the replica had no lock: {seen:?}");
}

/// Issue 12 saw waiting lock clients find the lock "held by" their own pid
/// for seconds while no command ran. The cause: an attempt whose write
/// reached the master and a replica, but fewer replicas than
/// `--min-replicas`, is given back on the master after that replica was
/// promoted; the new master keeps the attempt's token until its ttl. Here
/// that happens on purpose: C is stopped (so `WAIT 2` falls short), and B
/// is promoted while the first attempt waits for it. The client must clear
/// its own leftover token once it reaches B, not wait out its ttl (60 s,
/// beyond `--wait`).
#[test]
fn a_given_back_token_that_reached_the_promoted_replica_does_not_hold_the_lock() {
    let (master, replicas, sentinels) = group(2);
    let (b, c) = (&replicas[0], &replicas[1]);
    c.sigstop();
    // So that the failover below can only choose B.
    wait_until("Sentinel to call C down", Duration::from_secs(20), || {
        sentinels[0]
            .replica_flags(c.port().unwrap())
            .is_some_and(|f| f.contains("s_down"))
    });
    let url = sentinel_url(&sentinels, NS);
    let scratch = Scratch::new();
    let opts = [
        "--min-replicas",
        "2",
        "--timeout",
        "5s",
        "--ttl",
        "60s",
        "--wait",
        "45s",
    ];
    let ran = scratch.arg("ran");
    let cmd = lock_cmd(&url, &scratch, "nightly", &opts, &["touch", &ran]);
    let mut lock = Run::spawn(cmd, &scratch);
    // The first attempt's token is on the master and on B; the client
    // waits (5 s × ¾) for a second replica that cannot confirm it.
    wait_until(
        "the first attempt's token on B",
        Duration::from_secs(20),
        || b.query::<Option<String>>(&["GET", "nightly"]).is_some(),
    );
    sentinels[0].failover();
    let promoted = std::panic::catch_unwind(|| {
        wait_failover(&sentinels, master.port().unwrap(), Duration::from_secs(30))
    });
    let new = promoted.unwrap_or_else(|e| {
        eprintln!("--- sentinel log:\n{}", sentinels[0].log());
        std::panic::resume_unwind(e)
    });
    assert_eq!(Some(new), b.port(), "C was stopped: B is promoted");
    c.sigcont();
    // Up to its --wait, and a margin: the outcome is the test, not the time.
    wait_until("the lock client to end", Duration::from_secs(90), || {
        lock.exited()
    });
    assert_eq!(lock.wait(), 0, "{}", lock.log());
    assert!(scratch.exists("ran"), "{}", lock.log());
}

#[test]
fn an_unknown_master_name_is_one_line_naming_it() {
    let (master, _replicas, sentinels) = group(1);
    let before = master.snapshot();
    let url = sentinel_url(&sentinels, NS).replace("/mymaster", "/nosuchmaster");
    let out = run_yaraus(&["stats", "--redis", &url], &[], LIMIT);
    assert_eq!(out.code, Some(69), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("nosuchmaster"), "{}", out.stderr);
    assert_eq!(master.snapshot(), before);
}

#[test]
fn a_user_from_acl_rules_finds_the_master_through_sentinel() {
    let (master, replicas, sentinels) = group(1);
    let url = sentinel_url(&sentinels, NS);
    let rules = create_user(
        &[&master, &replicas[0]],
        &[
            "--redis",
            &url,
            "--min-replicas",
            "1",
            "--redis-user",
            "app",
            "acl-rules",
            "init",
            "run",
        ],
    );
    // ROLE checks the master; --min-replicas needs WAIT but no INFO.
    assert!(
        rules.contains("+role") && rules.contains("+wait"),
        "{rules}"
    );
    assert!(!rules.contains("info"), "{rules}");
    user_inits_and_gets_id_1(&url, &["--min-replicas", "1"]);
}
