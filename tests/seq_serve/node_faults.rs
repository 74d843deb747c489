//! What routine faults of one node at a time do to a running `seq serve`:
//! nodes killed and restarted from their AOF one after the other, a node
//! restarted with another password, a node that stops keeping every write.
//! A majority stays up throughout, so every request must go on working;
//! the faulty node must show in `INFO health` and must not vote.

use super::*;

/// Waits until `INFO health` shows `node{i}` in `state`.
fn wait_for_node(serve: &Serve, i: usize, state: &str) {
    common::wait_until(
        &format!("INFO health node{i} state={state}"),
        common::EVENT,
        || {
            serve
                .health(&format!("node{i}"))
                .ends_with(&format!(",state={state}"))
        },
    );
}

/// How many clients `server` has, the one asking included.
fn clients(server: &RedisServer) -> u64 {
    server
        .info_field("clients", "connected_clients")
        .and_then(|n| n.parse().ok())
        .expect("connected_clients in INFO clients")
}

/// Restarts `server` from its files and waits until serve is connected to
/// it again (a client besides the one asking) and its probe finds it ok.
fn restart_and_reconnect(serve: &Serve, servers: &mut [RedisServer], i: usize) {
    servers[i].restart();
    common::wait_until(
        "serve connected to the restarted node",
        common::EVENT,
        || clients(&servers[i]) >= 2,
    );
    wait_for_node(serve, i, "ok");
}

/// What node `server` holds for the sequence `orders`.
fn held(server: &RedisServer) -> Option<String> {
    common::lock::get(server, KEY)
}

#[test]
fn get_and_incr_go_on_after_two_nodes_were_restarted_in_turn() {
    let mut servers = masters(3, true);
    let serve = Serve::start(&servers, &["--timeout", "1s"]);
    let mut c = serve.client();
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(1));
    assert_eq!(c.send(&["GET", "orders"]), bulk("1"));

    // Killed and restarted from the AOF, one after the other, a majority
    // up at every moment: every connection serve opened at start is dead.
    for i in [0, 1] {
        restart_and_reconnect(&serve, &mut servers, i);
    }
    // Ids may skip (a round cut short by the restart burns its own).
    let id = c.send(&["INCR", "orders"]).id().expect("an id");
    assert!(id > 1, "{id}");
    assert_eq!(c.send(&["GET", "orders"]), bulk(&id.to_string()));
    // Inside a transaction too.
    assert_eq!(c.send(&["MULTI"]), status("OK"));
    assert_eq!(c.send(&["GET", "orders"]), status("QUEUED"));
    assert_eq!(c.send(&["EXEC"]), Reply::Array(vec![bulk(&id.to_string())]));
}

#[test]
fn new_names_after_a_node_restart_do_not_add_connections_to_it() {
    let mut servers = masters(3, true);
    let serve = Serve::start(&servers, &["--timeout", "2s"]);
    let mut c = serve.client();
    assert_eq!(c.send(&["INCR", "first"]), Reply::Int(1));
    restart_and_reconnect(&serve, &mut servers, 2);
    assert_eq!(c.send(&["INCR", "first"]).id().map(|id| id > 1), Some(true));
    let before = clients(&servers[2]);

    // 2,000 names, each a sequencer of its own, pipelined.
    const NAMES: usize = 2_000;
    let mut pipeline = Vec::new();
    for n in 0..NAMES {
        let name = format!("name{n}");
        pipeline.extend_from_slice(
            format!("*2\r\n$4\r\nINCR\r\n${}\r\n{name}\r\n", name.len()).as_bytes(),
        );
    }
    c.raw(&pipeline);
    for n in 0..NAMES {
        assert_eq!(c.read(), Some(Reply::Int(1)), "reply {n}");
    }
    assert_eq!(
        clients(&servers[2]),
        before,
        "serve's connections to the restarted node grew with the names"
    );
}

#[test]
fn incr_goes_on_while_a_node_refuses_the_password() {
    let mut servers = masters(3, true);
    let serve = Serve::start(&servers, &["--timeout", "1s"]);
    let mut c = serve.client();
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(1));

    servers[2].restart_with(&["--requirepass", "another-password"]);
    wait_for_node(&serve, 2, "refused");
    assert_eq!(serve.health("ready"), "1");
    for n in 2..=4 {
        assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(n));
    }
    assert_eq!(c.send(&["GET", "orders"]), bulk("4"));
    assert!(
        serve.run.log().contains("does not vote (refused)"),
        "{}",
        serve.run.log()
    );
}

#[test]
fn a_node_that_stops_keeping_every_write_stops_voting_until_it_does_again() {
    let mut servers = masters(3, true);
    let serve = Serve::start(&servers, &["--timeout", "1s"]);
    let mut c = serve.client();
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(1));

    // Switched at run time.
    let _: String = servers[2].query(&["CONFIG", "SET", "appendfsync", "everysec"]);
    wait_for_node(&serve, 2, "not_durable");
    let frozen = held(&servers[2]);
    for n in 2..=4 {
        assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(n));
    }
    assert_eq!(held(&servers[2]), frozen, "a node that may forget voted");
    assert_eq!(held(&servers[0]).as_deref(), Some("4"));
    assert!(
        serve.run.log().contains("does not vote (not_durable)"),
        "{}",
        serve.run.log()
    );

    // Switched back: it votes again.
    let _: String = servers[2].query(&["CONFIG", "SET", "appendfsync", "always"]);
    wait_for_node(&serve, 2, "ok");
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(5));
    assert_eq!(held(&servers[2]).as_deref(), Some("5"));

    // Restarted so: found on the new connection.
    servers[2].restart_with(&["--appendfsync", "everysec"]);
    wait_for_node(&serve, 2, "not_durable");
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(6));
    assert_eq!(held(&servers[2]).as_deref(), Some("5"));
}
