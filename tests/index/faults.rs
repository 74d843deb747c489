//! Faults: a frozen replica, a frozen server, clocks that disagree.

use crate::index::common::wait_until;
use crate::index::fleet::{Fleet, SETTLE, gone};
use nix::sys::signal::Signal;

/// A SIGSTOPped replica cannot stop its child itself: its watchdog does, at
/// the deadline; the others start under the smaller count only after that.
#[test]
fn a_frozen_replica_is_stopped_by_its_watchdog_and_rejoins() {
    let mut fleet = Fleet::new("frozen");
    for (tag, skew) in [("a", "0ms"), ("b", "150ms"), ("c", "300ms")] {
        fleet.add(tag, skew, &[]);
    }
    fleet.wait_converged(3);
    let child = fleet
        .events()
        .iter()
        .rev()
        .find(|e| e.start && e.tag == "b")
        .expect("b's child")
        .pid;
    fleet.replica("b").signal(Signal::SIGSTOP);
    wait_until("b's child stopped by its watchdog", SETTLE, || gone(child));
    let alive = fleet.wait_converged(2);
    assert!(alive.iter().all(|a| a.tag != "b"), "{alive:?}");

    fleet.replica("b").signal(Signal::SIGCONT);
    let alive = fleet.wait_converged(3);
    assert!(alive.iter().any(|a| a.tag == "b"), "{alive:?}");
    fleet.check();
}

/// Redis unreachable: every child is stopped once its tick is overdue, the
/// replicas live on, and the children start again when Redis is back.
#[test]
fn children_stop_while_redis_is_frozen_and_start_again_after() {
    let mut fleet = Fleet::new("outage");
    for (tag, skew) in [("a", "0ms"), ("b", "200ms")] {
        fleet.add(tag, skew, &[]);
    }
    fleet.wait_converged(2);
    fleet.server.sigstop();
    wait_until("every child stopped", SETTLE, || fleet.alive().is_empty());
    for (tag, run) in &mut fleet.replicas {
        assert!(!run.exited(), "replica {tag} exited:\n{}", run.log());
    }
    fleet.server.sigcont();
    fleet.wait_converged(2);
    fleet.check();
}

/// Three replicas whose clocks are 200 ms apart either way (libfaketime)
/// still agree.
#[test]
fn clocks_offset_by_200ms_either_way_still_converge() {
    let lib = crate::index::common::tools::faketime_library();
    let mut fleet = Fleet::new("skewed");
    for (tag, skew, offset) in [
        ("a", "0ms", "-0.2s"),
        ("b", "120ms", "+0s"),
        ("c", "240ms", "+0.2s"),
    ] {
        let env = [
            ("LD_PRELOAD", lib.as_str()),
            ("FAKETIME", offset),
            // Durations (tokio's timers, the watchdog's boot clock) stay real.
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
        ];
        fleet.add(tag, skew, &env);
    }
    fleet.wait_converged(3);
    // Two intervals later, still the same pairs: no transition from the skew.
    let settled = crate::index::fleet::monotonic();
    let key = "yaraus:index:{skewed}";
    let last = |f: &Fleet| -> u64 { f.server.query(&["HGET", key, "last"]) };
    let from = last(&fleet);
    wait_until("two more intervals", SETTLE, || last(&fleet) >= from + 2);
    for tag in ["a", "b", "c"] {
        assert_eq!(fleet.starts_since(tag, settled), 0, "{:?}", fleet.events());
    }
    fleet.check();
}
