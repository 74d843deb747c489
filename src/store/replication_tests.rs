//! The parser against `INFO replication` texts copied from redis-server
//! 7.0 (the fields yaraus does not read cut short), with the server's
//! `\r\n` line ends: a master with an online replica, with one in each
//! step of a full sync, alone; a replica whose transfer is under way,
//! whose full sync has not begun, and whose master is gone.

use super::*;

const NODE: &str = "redis://127.0.0.1:17301/0";

/// The lines as the server sends them, each ended by `\r\n`.
fn sent(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\r\n")).collect()
}

fn parsed(lines: &[&str]) -> Replication {
    Replication::parse(NODE, &sent(lines)).unwrap()
}

/// After a write and a `WAIT 1`: the replica acknowledged everything up
/// to the `REPLCONF GETACK` the `WAIT` itself appended (50 bytes).
const MASTER_ONLINE: &[&str] = &[
    "# Replication",
    "role:master",
    "connected_slaves:1",
    "slave0:ip=127.0.0.1,port=17302,state=online,offset=101,lag=1",
    "master_failover_state:no-failover",
    "master_replid:2ec3585ede5d6ffb27520f9f27f9d344b1c1aa9d",
    "master_replid2:0000000000000000000000000000000000000000",
    "master_repl_offset:151",
    "second_repl_offset:-1",
    "repl_backlog_active:1",
    "repl_backlog_size:1048576",
    "repl_backlog_first_byte_offset:1",
    "repl_backlog_histlen:151",
];

/// A diskless sync held back by `repl-diskless-sync-delay`.
const MASTER_WAIT_BGSAVE: &[&str] = &[
    "# Replication",
    "role:master",
    "connected_slaves:1",
    "slave0:ip=127.0.0.1,port=17302,state=wait_bgsave,offset=0,lag=0",
    "master_failover_state:no-failover",
    "master_repl_offset:87",
    "second_repl_offset:-1",
];

/// A disk-based sync whose file is being sent to a SIGSTOPped replica.
const MASTER_SEND_BULK: &[&str] = &[
    "# Replication",
    "role:master",
    "connected_slaves:1",
    "slave0:ip=127.0.0.1,port=17304,state=send_bulk,offset=0,lag=0",
    "master_failover_state:no-failover",
    "master_repl_offset:14",
    "second_repl_offset:-1",
];

const MASTER_ALONE: &[&str] = &[
    "# Replication",
    "role:master",
    "connected_slaves:0",
    "master_failover_state:no-failover",
    "master_replid:64814af17a7d521cb84e386913befeb88d45b382",
    "master_replid2:0000000000000000000000000000000000000000",
    "master_repl_offset:0",
    "second_repl_offset:-1",
    "repl_backlog_active:0",
];

/// A replica receiving the master's copy (a disk-based sync whose copy
/// the master is still writing).
const REPLICA_TRANSFER: &[&str] = &[
    "# Replication",
    "role:slave",
    "master_host:127.0.0.1",
    "master_port:17303",
    "master_link_status:down",
    "master_last_io_seconds_ago:-1",
    "master_sync_in_progress:1",
    "slave_read_repl_offset:1",
    "slave_repl_offset:1",
    "master_sync_total_bytes:-1",
    "master_sync_read_bytes:0",
    "master_sync_left_bytes:-1",
    "master_sync_perc:-0.00",
    "master_sync_last_io_seconds_ago:0",
    "master_link_down_since_seconds:-1",
    "slave_priority:100",
    "slave_read_only:1",
    "replica_announced:1",
    "connected_slaves:0",
    "master_failover_state:no-failover",
    "master_repl_offset:0",
    "second_repl_offset:-1",
];

/// A replica whose master delays the diskless sync: not yet transferring.
const REPLICA_BEFORE_TRANSFER: &[&str] = &[
    "# Replication",
    "role:slave",
    "master_host:127.0.0.1",
    "master_port:17301",
    "master_link_status:down",
    "master_last_io_seconds_ago:-1",
    "master_sync_in_progress:0",
    "slave_read_repl_offset:1",
    "slave_repl_offset:1",
    "master_link_down_since_seconds:-1",
    "connected_slaves:0",
    "master_repl_offset:0",
];

/// A replica in sync whose master was killed 2 s before.
const REPLICA_MASTER_GONE: &[&str] = &[
    "# Replication",
    "role:slave",
    "master_host:127.0.0.1",
    "master_port:17303",
    "master_link_status:down",
    "master_last_io_seconds_ago:-1",
    "master_sync_in_progress:0",
    "slave_read_repl_offset:65",
    "slave_repl_offset:65",
    "master_link_down_since_seconds:2",
    "connected_slaves:0",
    "master_repl_offset:65",
];

#[test]
fn an_online_replica_with_its_unacknowledged_bytes() {
    let r = parsed(MASTER_ONLINE);
    assert_eq!(r.role, Role::Master);
    assert_eq!(r.offset, 151);
    assert_eq!(
        r.replicas,
        [Replica {
            address: "127.0.0.1:17302".into(),
            state: ReplicaState::Online,
            offset: 101,
            lag_bytes: 50,
            ack_age_s: Some(1),
        }]
    );
    assert!(r.all_online());
    assert_eq!(
        r.failover_risks(),
        [format!(
            "the replica 127.0.0.1:17302 of {NODE} has not acknowledged the last 50 bytes \
             of writes: a failover to it now could lose them"
        )]
    );
}

#[test]
fn an_online_replica_that_acknowledged_everything_is_no_risk() {
    let caught_up: Vec<&str> = MASTER_ONLINE
        .iter()
        .map(|l| match *l {
            "master_repl_offset:151" => "master_repl_offset:101",
            other => other,
        })
        .collect();
    let r = parsed(&caught_up);
    assert_eq!(r.replicas[0].lag_bytes, 0);
    assert_eq!(r.replicas[0].failover_loss(), None);
    assert!(r.failover_risks().is_empty());
}

#[test]
fn a_replica_waiting_for_its_copy_would_lose_every_key() {
    for (lines, state, port) in [
        (MASTER_WAIT_BGSAVE, "wait_bgsave", 17302),
        (MASTER_SEND_BULK, "send_bulk", 17304),
    ] {
        let r = parsed(lines);
        let replica = &r.replicas[0];
        assert_eq!(replica.state, ReplicaState::FullSync(state.into()));
        assert_eq!(replica.offset, 0);
        assert_eq!(replica.lag_bytes, r.offset);
        assert_eq!(replica.ack_age_s, None, "Redis's lag=0 means nothing here");
        assert!(!r.all_online());
        assert_eq!(
            r.failover_risks(),
            [format!(
                "the replica 127.0.0.1:{port} of {NODE} is waiting for a full sync ({state}): \
                 a failover to it now would lose every key it lacks, all of them if it \
                 started empty"
            )]
        );
    }
}

#[test]
fn a_master_alone_lists_no_replica() {
    let r = parsed(MASTER_ALONE);
    assert_eq!((&r.role, r.offset, r.replicas.len()), (&Role::Master, 0, 0));
    assert!(r.all_online());
    assert!(r.failover_risks().is_empty());
}

#[test]
fn a_replica_tells_its_link_and_its_sync() {
    for (lines, port, sync_in_progress, offset) in [
        (REPLICA_TRANSFER, 17303, true, 0),
        (REPLICA_BEFORE_TRANSFER, 17301, false, 0),
        (REPLICA_MASTER_GONE, 17303, false, 65),
    ] {
        let r = parsed(lines);
        assert_eq!(
            r.role,
            Role::Replica {
                master: format!("127.0.0.1:{port}"),
                link_up: false,
                sync_in_progress,
            }
        );
        assert_eq!((r.offset, r.replicas.len()), (offset, 0));
    }
}

#[test]
fn several_replicas_an_unknown_state_and_ipv6_in_their_order() {
    let r = parsed(&[
        "role:master",
        "connected_slaves:3",
        "slave0:ip=::1,port=7001,state=online,offset=90,lag=0",
        "slave1:ip=10.0.0.2,port=7002,state=wait_bgsave,offset=0,lag=0",
        "slave2:ip=10.0.0.3,port=7003,state=catching_up,offset=0,lag=0",
        "master_repl_offset:100",
    ]);
    let seen: Vec<(&str, &ReplicaState)> = r
        .replicas
        .iter()
        .map(|x| (x.address.as_str(), &x.state))
        .collect();
    assert_eq!(
        seen,
        [
            ("[::1]:7001", &ReplicaState::Online),
            (
                "10.0.0.2:7002",
                &ReplicaState::FullSync("wait_bgsave".into())
            ),
            ("10.0.0.3:7003", &ReplicaState::Other("catching_up".into())),
        ]
    );
    assert_eq!(r.failover_risks().len(), 3);
    assert!(r.failover_risks()[2].contains("is in the state catching_up, not online"));
}

#[test]
fn a_text_it_cannot_read_is_an_error_naming_the_fault() {
    let fails = |lines: &[&str]| Replication::parse(NODE, &sent(lines)).unwrap_err();
    assert_eq!(fails(&["role:master"]), "no master_repl_offset");
    assert_eq!(fails(&["master_repl_offset:0"]), "no role");
    assert_eq!(
        fails(&["role:sentinel", "master_repl_offset:0"]),
        "role:sentinel is neither master nor slave"
    );
    assert_eq!(
        fails(&["role:slave", "master_port:1", "master_repl_offset:0"]),
        "a replica without master_host"
    );
    assert_eq!(
        fails(&["role:master", "master_repl_offset:x"]),
        "master_repl_offset:x is not a count"
    );
    assert_eq!(
        fails(&[
            "role:master",
            "slave0:ip=10.0.0.2,state=online,offset=0,lag=0",
            "master_repl_offset:0"
        ]),
        "no port= in the replica entry 'ip=10.0.0.2,state=online,offset=0,lag=0'"
    );
}

#[test]
fn only_slave_and_a_number_name_a_replica() {
    assert!(is_replica_field("slave0") && is_replica_field("slave12"));
    assert!(!is_replica_field("slave") && !is_replica_field("slave_repl_offset"));
    assert!(!is_replica_field("slave_read_only") && !is_replica_field("slave_priority"));
}
