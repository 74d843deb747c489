//! The Redis nodes behind the server: concurrent clients and two servers
//! on the same nodes stay unique and ordered, a node killed and restarted
//! from its AOF, two of three frozen, and nodes that do not persist every
//! write.

use super::*;

#[test]
fn fifty_concurrent_clients_get_unique_ids_in_real_time_order_in_shared_rounds() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let calls = hammer(&[serve.port], 50, 100);
    assert_eq!(calls.len(), 5000);
    assert_unique_and_ordered(&calls);
    let rounds = serve.stat("orders", "rounds");
    assert!(
        serve.stat("orders", "batch_max") > 1.0,
        "no round answered two requests"
    );
    assert!(
        rounds < 5000.0,
        "{rounds} rounds for 5000 ids: no group commit"
    );
    // INCRBY blocks are consecutive and never overlap another id.
    let mut c = serve.client();
    let last = c.send(&["INCRBY", "orders", "100"]).id().unwrap();
    assert!(calls.iter().all(|call| call.id < last - 99));
}

#[test]
fn two_servers_on_the_same_nodes_stay_unique_and_ordered() {
    let servers = masters(3, true);
    let a = Serve::start(&servers, &[]);
    let b = Serve::start(&servers, &[]);
    // Every client alternates between the two, so that order is checked
    // across servers too.
    let calls = hammer(&[a.port, b.port], 16, 60);
    assert_eq!(calls.len(), 16 * 60);
    assert_unique_and_ordered(&calls);
}

#[test]
fn a_node_killed_and_restarted_from_its_aof_mid_run_never_repeats_nor_steps_back() {
    let mut servers = masters(3, true);
    let serve = Serve::start(&servers, &["--timeout", "2s"]);
    let done = Arc::new(AtomicBool::new(false));
    let served = Arc::new(AtomicU64::new(0));
    let calls = Arc::new(Mutex::new(Vec::new()));
    let clients: Vec<_> = (0..10)
        .map(|_| {
            let (done, served, calls, port) =
                (done.clone(), served.clone(), calls.clone(), serve.port);
            thread::spawn(move || {
                let mut c = Client::connect(port);
                let mut mine = Vec::new();
                while !done.load(Ordering::Relaxed) {
                    let start = Instant::now();
                    let reply = c.send(&["INCR", "orders"]);
                    if let Some(id) = reply.id() {
                        mine.push(Call {
                            start,
                            end: Instant::now(),
                            id,
                        });
                        served.fetch_add(1, Ordering::Relaxed);
                    }
                }
                calls.lock().unwrap().extend(mine);
            })
        })
        .collect();
    let wait_for_more = |n: u64| {
        let target = served.load(Ordering::Relaxed) + n;
        common::wait_until("more ids", Duration::from_secs(60), || {
            served.load(Ordering::Relaxed) >= target
        });
    };
    wait_for_more(300);
    servers[0].sigkill();
    wait_for_more(300);
    servers[0].restart();
    wait_for_more(300);
    servers[1].sigkill();
    wait_for_more(300);
    servers[1].restart();
    wait_for_more(300);
    done.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    let calls = calls.lock().unwrap();
    assert_unique_and_ordered(&calls);
    let highest = calls.iter().map(|c| c.id).max().unwrap();
    let mut c = serve.client();
    assert!(c.send(&["INCR", "orders"]).id().unwrap() > highest);
}

#[test]
fn two_of_three_frozen_give_errors_within_the_timeout_never_an_id() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &["--timeout", "1s"]);
    let mut c = serve.client();
    let before = c.send(&["INCR", "orders"]).id().unwrap();
    servers[1].sigstop();
    servers[2].sigstop();
    for _ in 0..2 {
        let started = Instant::now();
        let reply = c.send(&["INCR", "orders"]);
        let took = started.elapsed();
        let e = reply.error();
        assert!(e.starts_with("ERR cannot hear from a majority"), "{e}");
        // The contract is --timeout; the margin is for a loaded machine.
        assert!(took < Duration::from_millis(2500), "{took:?}");
    }
    assert!(c.send(&["GET", "orders"]).error().starts_with("ERR"));
    assert_eq!(
        c.send(&["PING"]),
        status("PONG"),
        "the server stopped serving"
    );
    servers[1].sigcont();
    servers[2].sigcont();
    let after = c.send(&["INCR", "orders"]).id().unwrap();
    assert!(after > before, "{after} after {before}");
    assert!(serve.stat("orders", "failed_rounds") >= 2.0);
}

#[test]
fn nodes_that_do_not_persist_every_write_are_refused_at_start_unless_allowed() {
    let servers = masters(3, false);
    let mut cmd = common::yaraus();
    cmd.args(["seq", "serve", "--listen", "127.0.0.1:0"]);
    for s in &servers {
        cmd.arg("--redis").arg(s.url());
    }
    let out = cmd.output().expect("yaraus seq serve");
    assert_eq!(out.status.code(), Some(125));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("appendfsync") && err.contains("--allow-volatile"),
        "{err}"
    );
    let serve = Serve::start(&servers, &["--allow-volatile"]);
    assert_eq!(serve.client().send(&["INCR", "orders"]), Reply::Int(1));
    assert_eq!(
        serve.client().send(&["CONFIG", "GET", "appendonly"]),
        Reply::Array(vec![bulk("appendonly"), bulk("unknown")])
    );
}
