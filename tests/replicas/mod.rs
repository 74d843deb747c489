//! `Store::replication` against real masters and replicas: an online
//! replica and its byte lag, a replica held in its full sync by
//! `repl-diskless-sync-delay` (what a Sentinel failover would promote with
//! nothing in it), each replica read through its own URL, the master a
//! Sentinel group names before and after a failover, a Cluster's masters
//! told apart by key, and a user the ACL denies `INFO`.
//!
//! Every state is awaited from the servers' own `INFO`, never slept for;
//! the figures are compared with what the servers print.

use crate::common;

use common::cluster::Cluster;
use common::sentinel::{Sentinel, sentinel_url, wait_failover};
use common::{EVENT, RedisServer, ServerOptions, runtime, wait_until};
use yaraus::error::Error;
use yaraus::store::{ReplicaState, Replication, Role, Store, Target};
use yaraus::timing::Timeouts;

fn read(rt: &tokio::runtime::Runtime, url: &str, key: &str) -> yaraus::error::Result<Replication> {
    rt.block_on(async {
        let mut store = Store::connect(&Target::parse(url)?, Timeouts::default()).await?;
        store.replication(key).await
    })
}

fn tcp_master(extra: &[&str]) -> RedisServer {
    RedisServer::start_with(ServerOptions {
        tcp: true,
        extra_args: extra.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    })
}

fn replica_of(master: &RedisServer) -> RedisServer {
    RedisServer::start_with(ServerOptions {
        tcp: true,
        replica_of: Some(master),
        ..Default::default()
    })
}

fn offset_of(server: &RedisServer) -> u64 {
    let field = server.info_field("replication", "master_repl_offset");
    field
        .and_then(|v| v.parse().ok())
        .expect("master_repl_offset")
}

#[test]
fn an_online_replica_catches_up_and_a_stopped_one_lags() {
    let rt = runtime();
    let master = tcp_master(&[]);
    let replica = replica_of(&master);
    replica.wait_replica_synced(&master);
    let address = format!("127.0.0.1:{}", replica.port().unwrap());

    // WAIT waits for the writes of its own connection.
    let mut conn = master.conn();
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query(&mut conn)
        .unwrap();
    let written = offset_of(&master);
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(5000)
        .query(&mut conn)
        .unwrap();
    assert_eq!(acked, 1);
    let seen = read(&rt, &master.url(), "k").unwrap();
    assert_eq!(
        (&seen.role, seen.replicas.len()),
        (&Role::Master, 1),
        "{seen:?}"
    );
    let r = &seen.replicas[0];
    assert_eq!(
        (r.address.as_str(), &r.state),
        (address.as_str(), &ReplicaState::Online)
    );
    assert!(
        r.offset >= written,
        "WAIT returned before the ack of {written}: {seen:?}"
    );
    assert_eq!(r.lag_bytes, seen.offset - r.offset, "{seen:?}");
    assert!(r.ack_age_s.is_some(), "{seen:?}");
    assert!(seen.all_online());
    // The WAIT's own GETACK is acknowledged by the replica's next ack.
    wait_until("the replica to acknowledge every byte", EVENT, || {
        read(&rt, &master.url(), "k").unwrap().replicas[0].lag_bytes == 0
    });
    assert!(
        read(&rt, &master.url(), "k")
            .unwrap()
            .failover_risks()
            .is_empty()
    );

    // Its own URL reads the replica's side: its link to this master.
    let own = read(&rt, &replica.url(), "k").unwrap();
    let master_address = format!("127.0.0.1:{}", master.port().unwrap());
    let up = Role::Replica {
        master: master_address,
        link_up: true,
        sync_in_progress: false,
    };
    assert_eq!((&own.role, own.replicas.len()), (&up, 0), "{own:?}");

    // A frozen replica acknowledges nothing written after it stopped.
    replica.sigstop();
    let _: () = master.query(&["SET", "k", "a value written while it is stopped"]);
    let seen = read(&rt, &master.url(), "k").unwrap();
    let r = &seen.replicas[0];
    assert!(r.offset < offset_of(&master) && r.lag_bytes > 0, "{seen:?}");
    assert_eq!(
        seen.failover_risks(),
        [format!(
            "the replica {address} of {} has not acknowledged the last {} bytes of writes: \
             a failover to it now could lose them",
            master.url(),
            r.lag_bytes
        )]
    );
    replica.sigcont();
}

#[test]
fn a_replica_held_in_its_full_sync_would_lose_every_key() {
    let rt = runtime();
    // The copy waits 30 s for more replicas: the test sees the wait.
    let master = tcp_master(&[
        "--repl-diskless-sync",
        "yes",
        "--repl-diskless-sync-delay",
        "30",
    ]);
    let _: () = master.query(&["SET", "pool", "what a failover must not lose"]);
    let replica = replica_of(&master);
    let address = format!("127.0.0.1:{}", replica.port().unwrap());
    wait_until(
        "the master to list its replica in wait_bgsave",
        EVENT,
        || {
            master
                .info_field("replication", "slave0")
                .is_some_and(|s| s.contains("state=wait_bgsave"))
        },
    );

    let seen = read(&rt, &master.url(), "pool").unwrap();
    assert_eq!(seen.replicas.len(), 1, "{seen:?}");
    let r = &seen.replicas[0];
    assert_eq!(r.address, address);
    assert_eq!(r.state, ReplicaState::FullSync("wait_bgsave".into()));
    assert_eq!((r.offset, r.lag_bytes, r.ack_age_s), (0, seen.offset, None));
    assert!(!seen.all_online());
    assert_eq!(
        seen.failover_risks(),
        [format!(
            "the replica {address} of {} is waiting for a full sync (wait_bgsave): a failover \
             to it now would lose every key it lacks, all of them if it started empty",
            master.url()
        )]
    );
    let empty: i64 = replica.query(&["DBSIZE"]);
    assert_eq!(empty, 0, "the replica holds nothing yet");

    // Its own URL: the link to its master is down, a sync as Redis says.
    let own = read(&rt, &replica.url(), "pool").unwrap();
    let in_progress = replica.info_field("replication", "master_sync_in_progress");
    let down = Role::Replica {
        master: format!("127.0.0.1:{}", master.port().unwrap()),
        link_up: false,
        sync_in_progress: in_progress.as_deref() == Some("1"),
    };
    assert_eq!(own.role, down, "{own:?}");
}

#[test]
fn through_sentinel_the_master_it_names_now_is_read() {
    let rt = runtime();
    let master = tcp_master(&[]);
    let replica = replica_of(&master);
    replica.wait_replica_synced(&master);
    let (old, new) = (master.port().unwrap(), replica.port().unwrap());
    // Only the failover the test asks for: a loaded machine must not make one.
    let sentinel = Sentinel::start_with(&master, 1, std::time::Duration::from_secs(30));
    // It promotes a replica only once it has read the replica's INFO.
    wait_until("the sentinel to see the replica's link up", EVENT, || {
        replica_link(&sentinel, new).as_deref() == Some("ok")
    });
    let url = sentinel_url(std::slice::from_ref(&sentinel), "t");
    let listed =
        |r: Replication| -> Vec<String> { r.replicas.into_iter().map(|x| x.address).collect() };
    let seen = read(&rt, &url, "k").unwrap();
    assert_eq!(seen.role, Role::Master);
    assert_eq!(listed(seen), [format!("127.0.0.1:{new}")]);

    sentinel.failover();
    assert_eq!(
        wait_failover(std::slice::from_ref(&sentinel), old, EVENT),
        new
    );
    // Made a replica of the promoted one at once (Sentinel would, after
    // its next look at it, up to 10 s later), the old master is listed.
    let _: () = master.query(&["REPLICAOF", "127.0.0.1", &new.to_string()]);
    wait_until("the promoted master to list the old one", EVENT, || {
        read(&rt, &url, "k").is_ok_and(|r| listed(r) == [format!("127.0.0.1:{old}")])
    });
}

/// The `master-link-status` the sentinel last read from the replica on
/// `port` (`SENTINEL REPLICAS`).
fn replica_link(sentinel: &Sentinel, port: u16) -> Option<String> {
    let client = redis::Client::open(format!("redis://{}", sentinel.address())).ok()?;
    let mut conn = client.get_connection().ok()?;
    let replicas: Vec<std::collections::HashMap<String, String>> = redis::cmd("SENTINEL")
        .arg("REPLICAS")
        .arg(common::sentinel::MASTER_NAME)
        .query(&mut conn)
        .ok()?;
    let port = port.to_string();
    let replica = replicas
        .into_iter()
        .find(|r| r.get("port") == Some(&port))?;
    replica.get("master-link-status").cloned()
}

#[test]
fn in_a_cluster_the_master_of_the_key_is_read() {
    let rt = runtime();
    let cluster = Cluster::start(2);
    // Two keys whose slots two different masters serve.
    let key_of = |i: usize| {
        (0..100)
            .map(|n| format!("k{n}"))
            .find(|k| std::ptr::eq(cluster.node_of(k), &cluster.nodes[i]))
            .expect("a key of each master")
    };
    let (replicated, alone) = (key_of(0), key_of(1));
    let master = &cluster.nodes[0];
    let replica = RedisServer::start_with(ServerOptions {
        tcp: true,
        extra_args: ["--cluster-enabled", "yes"].map(String::from).to_vec(),
        ..Default::default()
    });
    let port = master.port().unwrap().to_string();
    let _: redis::Value = replica.query(&["CLUSTER", "MEET", "127.0.0.1", &port]);
    let id: String = master.query(&["CLUSTER", "MYID"]);
    wait_until("the new node to know the master", EVENT, || {
        let nodes: String = replica.query(&["CLUSTER", "NODES"]);
        nodes.contains(&id)
    });
    let _: redis::Value = replica.query(&["CLUSTER", "REPLICATE", &id]);
    wait_until("the master to list its replica", EVENT, || {
        master
            .info_field("replication", "connected_slaves")
            .as_deref()
            == Some("1")
    });

    let url = cluster.url("t");
    let seen = read(&rt, &url, &replicated).unwrap();
    let address = format!("127.0.0.1:{}", replica.port().unwrap());
    assert_eq!(seen.replicas.len(), 1, "{seen:?}");
    assert_eq!(seen.replicas[0].address, address);
    assert!(
        seen.node
            .ends_with(&format!("(the master of {replicated})")),
        "{seen:?}"
    );
    let other = read(&rt, &url, &alone).unwrap();
    assert_eq!(
        (&other.role, other.replicas.len()),
        (&Role::Master, 0),
        "{other:?}"
    );
}

#[test]
fn a_user_denied_info_is_refused_naming_the_grant() {
    let rt = runtime();
    let master = tcp_master(&[]);
    let _: () = master.query(&[
        "ACL", "SETUSER", "noinfo", "on", ">pw", "~*", "+@all", "-info",
    ]);
    let port = master.port().unwrap();
    let url = format!("redis://noinfo:pw@127.0.0.1:{port}/0");
    match read(&rt, &url, "k") {
        Err(Error::Refused(message)) => {
            assert!(message.contains("`+info|replication`"), "{message}");
            assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
        }
        other => panic!("expected a refusal naming +info|replication, got {other:?}"),
    }
}
