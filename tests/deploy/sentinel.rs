//! A Sentinel-managed group: yaraus finds the master through the sentinels,
//! and after the master is SIGKILLed and a replica promoted, finds the new
//! one (it asks the sentinels again on every dial and checks `ROLE`).

use super::*;
use common::pool::{NS, enc, init_pool, server_now};
use common::process::Run;
use common::scratch::Scratch;
use common::sentinel::{Sentinel, sentinel_url, three_watching, wait_failover};
use common::{RedisServer, ServerOptions, wait_until};

/// A master with `replicas` replicas in sync, watched by three sentinels
/// (quorum 2).
pub fn group(replicas: usize) -> (RedisServer, Vec<RedisServer>, Vec<Sentinel>) {
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
    let sentinels = three_watching(&master, replicas.len());
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

/// Three `run`s started right after the master died, while Sentinel has
/// not promoted a replica yet, wait for the new master (they must not exit
/// 69 at once), and get their ids there.
#[test]
fn runs_started_during_a_failover_get_their_ids_from_the_new_master() {
    let (mut master, replicas, sentinels) = group(2);
    init_pool(&master, 1, 3);
    for replica in &replicas {
        replica.wait_replica_synced(&master);
    }
    let url = sentinel_url(&sentinels, NS);
    let scratch = Scratch::new();
    let old = master.port().unwrap();
    master.sigkill();
    // The lease outlasts the new master's time without a replica (renewals
    // need one): the test is about getting the ids.
    let opts = [
        "--interval",
        "300ms",
        "--expire",
        "1m",
        "--delay",
        "0",
        "--no-safeguards",
        "--min-replicas",
        "1",
        "--wait",
        "1m",
    ];
    // Each holds its id until told: three ids at once.
    let child = scratch.script(
        "child.sh",
        "echo \"$YARAUS_WORKER_ID\" >> \"$D/ids\"\nwhile [ ! -e \"$D/go\" ]; do sleep 0.05; done\n",
    );
    let mut runs: Vec<Run> = (0..3)
        .map(|_| Run::start(&url, &scratch, &opts, &["sh", &child]))
        .collect();
    let new = wait_failover(&sentinels, old, Duration::from_secs(30));
    wait_until("three ids held", Duration::from_secs(90), || {
        scratch
            .read("ids")
            .is_some_and(|ids| ids.lines().count() == 3)
    });
    scratch.touch("go");
    for run in &mut runs {
        wait_until("a run to end", Duration::from_secs(90), || run.exited());
        assert_eq!(run.wait(), 0, "{}", run.log());
    }
    let mut got: Vec<String> = scratch
        .read("ids")
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    got.sort();
    assert_eq!(got, ["1", "2", "3"]);
    assert!(replicas.iter().any(|r| r.port() == Some(new)));
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

/// A master name no sentinel knows is a mistake, not a failover: one line
/// at once, even from `run`, which waits forever for a failover to end.
#[test]
fn an_unknown_master_name_is_one_line_naming_it() {
    let (master, _replicas, sentinels) = group(1);
    let before = master.snapshot();
    let url = sentinel_url(&sentinels, NS).replace("/mymaster", "/nosuchmaster");
    for args in [&["stats"][..], &["run", "--", "true"]] {
        let out = run_yaraus(&[&["--redis", &url][..], args].concat(), &[], LIMIT);
        assert_eq!(out.code, Some(69), "{}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(out.stderr.contains("nosuchmaster"), "{}", out.stderr);
    }
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
