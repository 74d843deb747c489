//! Readiness: `INFO health` says whether a majority of the nodes answers
//! (and keeps every write), following nodes frozen (SIGSTOP), killed and
//! brought back, while `PING` keeps answering `PONG` (liveness).

use super::*;

fn wait_for_ready(serve: &Serve, ready: &str) {
    common::wait_until(
        &format!("INFO health ready:{ready}"),
        Duration::from_secs(20),
        || serve.health("ready") == ready,
    );
}

#[test]
fn readiness_follows_the_majority_and_ping_stays_pong() {
    let mut servers = masters(3, true);
    let serve = Serve::start(&servers, &["--timeout", "1s"]);
    wait_for_ready(&serve, "1");
    assert_eq!(serve.health("nodes_ok"), "3");
    assert_eq!(serve.health("majority"), "2");
    assert!(serve.health("node0").ends_with(",state=ok"));
    // Creating a sequence needs every node: before any is frozen.
    let mut c = serve.client();
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(1));

    // One frozen: still ready (2 of 3), and ids still come.
    servers[2].sigstop();
    common::wait_until("node2 down", Duration::from_secs(20), || {
        serve.health("node2").ends_with(",state=down")
    });
    assert_eq!(serve.health("ready"), "1");
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(2));

    // Two frozen: not ready, INCR fails, PING is PONG.
    servers[1].sigstop();
    wait_for_ready(&serve, "0");
    assert!(serve.health("nodes_ok").parse::<u32>().unwrap() <= 1);
    assert_eq!(c.send(&["PING"]), status("PONG"));
    assert!(c.send(&["INCR", "orders"]).error().starts_with("ERR"));
    assert!(
        serve.run.log().contains("seq serve: not ready"),
        "{}",
        serve.run.log()
    );

    servers[1].sigcont();
    servers[2].sigcont();
    wait_for_ready(&serve, "1");
    assert_eq!(
        c.send(&["INCR", "orders"]).id().map(|id| id > 1),
        Some(true)
    );

    // Killed and restarted from their AOF: the same.
    servers[0].sigkill();
    servers[1].sigkill();
    wait_for_ready(&serve, "0");
    assert_eq!(c.send(&["PING"]), status("PONG"));
    servers[0].restart();
    servers[1].restart();
    wait_for_ready(&serve, "1");
    assert!(c.send(&["INCR", "orders"]).id().is_some());
    assert!(
        serve.run.log().contains("seq serve: ready"),
        "{}",
        serve.run.log()
    );
}
