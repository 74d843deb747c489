//! `health` on a replicated pool server: a replica still waiting for its
//! first (full) sync is degraded, since a failover to it now loses the pool;
//! once it is online, all is well again.

use super::*;
use common::{ServerOptions, wait_until};
use std::time::Duration;

const EVENT: Duration = Duration::from_secs(20);

#[test]
fn a_replica_waiting_for_its_first_sync_is_degraded_and_online_is_ok() {
    // The copy waits 30 s for more replicas: the test sees the wait.
    let master = RedisServer::start_with(ServerOptions {
        tcp: true,
        extra_args: [
            "--repl-diskless-sync",
            "yes",
            "--repl-diskless-sync-delay",
            "30",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        ..Default::default()
    });
    let mut init = common::yaraus();
    init.args(["init", "--min", "1", "--max", "8", "--redis", &master.url()]);
    assert_code(&run(&mut init), 0);
    let replica = RedisServer::start_with(ServerOptions {
        tcp: true,
        replica_of: Some(&master),
        ..Default::default()
    });
    wait_until(
        "the master to list its replica in wait_bgsave",
        EVENT,
        || {
            master
                .info_field("replication", "slave0")
                .is_some_and(|s| s.contains("state=wait_bgsave"))
        },
    );
    let servers = std::slice::from_ref(&master);
    let (status, report) = health_json(servers, &[]);
    assert_eq!(status, 75, "{report}");
    assert_eq!(
        findings(&report),
        [(
            "degraded".to_string(),
            master.url(),
            "replica_not_in_sync".to_string()
        )]
    );
    let text = report["findings"][0]["text"].as_str().unwrap();
    assert!(text.contains("a failover to it now would lose"), "{text}");
    assert_eq!(report["pool"]["stats"]["unusing_ids"], 8, "{report}");
    assert_eq!(report["nodes"][0]["replicas"][0]["in_sync"], false);

    // The sync let go at once: the replica comes online, and all is well.
    let _: () = master.query(&["CONFIG", "SET", "repl-diskless-sync-delay", "0"]);
    let _: () = replica.query(&["REPLICAOF", "NO", "ONE"]);
    let port = master.port().unwrap().to_string();
    let _: () = replica.query(&["REPLICAOF", "127.0.0.1", &port]);
    wait_until("the replica to be online", EVENT, || {
        master
            .info_field("replication", "slave0")
            .is_some_and(|s| s.contains("state=online"))
    });
    let (status, report) = health_json(servers, &[]);
    assert_eq!(status, 0, "{report}");
    assert_eq!(report["nodes"][0]["replicas"][0]["in_sync"], true);
}
