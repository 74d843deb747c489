//! A network partition between some holders and the master: every client
//! dials the master through a proxy of its own ([`common::proxy`]), and the
//! test cuts the proxies of some holders (two id holders and one lock
//! holder): their connections close, new ones are blackholed.
//!
//! The partitioned holders cannot renew; their children must be gone by
//! their local deadline, before the master's expiry (design point 4), and
//! the clients still connected take the ids and the lock once the master
//! has expired them. Then the partition heals and the cut clients, whose
//! yaraus exited 124 and were started again, wait for an id like the rest.

use super::child::now_ns;
use super::common::RedisServer;
use super::common::ServerOptions;
use super::common::pool::init_pool;
use super::common::proxy::Proxy;
use super::figures::{Budget, Report, assert_no_overlap};
use super::harness::{Fleet, serial};
use super::*;

#[test]
fn partitioned_holders_lose_their_children_by_the_deadline_and_others_take_over() {
    let _serial = serial();
    let master = RedisServer::start_with(ServerOptions {
        tcp: true,
        ..ServerOptions::default()
    });
    init_pool(&master, 1, IDS);
    let port = master.port().expect("tcp");
    let clients = RUN_CLIENTS + LOCKS.len() * LOCK_CLIENTS_EACH;
    let proxies: Vec<Proxy> = (0..clients).map(|_| Proxy::start(port)).collect();
    let mut specs = run_specs(|k| proxies[k].url_ns(POOL_NS), &[]);
    specs.extend(lock_specs(
        specs.len(),
        |k| vec![proxies[k].url_ns(POOL_NS)],
        &[],
    ));
    let mut fleet = Fleet::start(&specs, &resources(true), GRACE);

    let budget = Budget::new(2);
    let mut report = Report::new("partition");
    while budget.more(report.trials) {
        let holders = fleet.wait_all_held();
        // Two of the three id holders and one lock holder lose the network;
        // three run clients and a contender of each lock keep it.
        let ids: Vec<_> = holders
            .values()
            .filter(|l| l.res.starts_with("id:"))
            .collect();
        let lock = holders
            .values()
            .find(|l| l.res.starts_with("lock:"))
            .expect("a lock holder");
        let victims: Vec<_> = ids.iter().take(2).copied().chain([lock]).cloned().collect();
        let victim_pids: Vec<i32> = victims.iter().map(|l| l.pid).collect();
        let fault = now_ns();
        for v in &victims {
            proxies[v.client].cut();
            report.faults += 1;
        }
        expect_dead_an_expiry_after(&mut fleet, "partitioned", &victim_pids, fault);
        report
            .recoveries
            .push(fleet.wait_recovered(fault, &victim_pids));
        for v in &victims {
            proxies[v.client].heal();
        }
        report.trials += 1;
    }
    let outcome = fleet.finish();
    report.print(&outcome);
    assert_no_overlap("partition", &outcome);
}
