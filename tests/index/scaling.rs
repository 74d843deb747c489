//! A fleet that grows and shrinks: convergence, exactly one restart per
//! change, and the checker.

use crate::index::fleet::{Fleet, monotonic};

#[test]
fn five_converge_a_sixth_joins_and_a_sigkilled_one_leaves() {
    let mut fleet = Fleet::new("scale");
    let tags = ["a", "b", "c", "d", "e"];
    for (i, tag) in tags.iter().enumerate() {
        fleet.add(tag, &format!("{}ms", i * 80), &[]);
    }
    fleet.wait_converged(5);

    let joined = monotonic();
    fleet.add("f", "400ms", &[]);
    let alive = fleet.wait_converged(6);
    assert!(alive.iter().any(|a| a.tag == "f"), "{alive:?}");
    for tag in tags {
        assert_eq!(
            fleet.starts_since(tag, joined),
            1,
            "replica {tag} restarted once for the sixth: {:?}",
            fleet.events()
        );
    }

    // A SIGKILLed supervisor's child dies with it (the watchdog), and the
    // others close the gap, each restarting once.
    let killed = monotonic();
    fleet.sigkill("c");
    let alive = fleet.wait_converged(5);
    assert!(alive.iter().all(|a| a.tag != "c"), "{alive:?}");
    for tag in ["a", "b", "d", "e", "f"] {
        assert_eq!(
            fleet.starts_since(tag, killed),
            1,
            "replica {tag} restarted once for the loss of c: {:?}",
            fleet.events()
        );
    }
    fleet.check();
}
