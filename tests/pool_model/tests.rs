//! The cases: the shipped scripts break nothing within the bounds, the runs
//! that matter are reached, and each flaw is caught with a shortest run.

use super::{Bounds, Flaw, InitReply, Model, Reply, Violation, Who};
use crate::explorer::{self, System, check, guided};

/// Two clients on a pool of two ids that grows to three and shrinks to
/// one: every interleaving of seven steps.
const TWO: Bounds = Bounds {
    clients: 2,
    ids: 2,
    steps: 7,
};

/// Three clients on a pool of two: exhaustion, and one id changing hands
/// twice.
const THREE: Bounds = Bounds {
    clients: 3,
    ids: 2,
    steps: 5,
};

fn shipped(bounds: Bounds) -> Model {
    Model { bounds, flaw: None }
}

#[test]
fn the_shipped_scripts_keep_every_property() {
    for (name, bounds) in [("two clients", TWO), ("three clients", THREE)] {
        let m = shipped(bounds);
        let o = check(name, &m);
        explorer::assert_safe(name, &m, &o);
        // Not safe because nothing happens: as many leases in force as
        // clients.
        assert_eq!(o.most, bounds.clients as u32, "{name}");
    }
}

/// The first violation `flaw` leads to.
fn caught(flaw: Flaw) -> Violation {
    let m = Model {
        bounds: TWO,
        flaw: Some(flaw),
    };
    let o = check(&format!("{flaw:?}"), &m);
    o.violation.expect("the flaw is caught").0
}

#[test]
fn a_renewal_that_extends_another_clients_id_is_caught() {
    assert!(matches!(
        caught(Flaw::RenewAnyOwner),
        Violation::ForeignWrite { .. }
    ));
}

#[test]
fn a_release_that_frees_another_clients_id_is_caught() {
    assert!(matches!(
        caught(Flaw::ReleaseAnyOwner),
        Violation::ForeignWrite { .. }
    ));
}

#[test]
fn a_release_below_what_its_lease_found_is_caught() {
    assert_eq!(
        caught(Flaw::EndedBelowFound),
        Violation::RecordLowered { id: 1 }
    );
}

/// The reply of the last step of a guided run.
fn last_reply(m: &Model, steps: &[&str]) -> Reply {
    let (run, _) = guided(m, steps);
    let mut s = m.initial();
    let mut reply = None;
    for e in run {
        let (n, r) = m.step(&s, e).expect("the run replays");
        s = n;
        reply = Some(r);
    }
    reply.expect("a step")
}

#[test]
fn a_paused_holder_loses_its_id_and_its_release_is_refused() {
    let m = shipped(TWO);
    let steps = [
        "c0 leases id 1 (horizon 2, finds None), and pauses",
        "c1 leases id 2",
        "c1 releases id 2 (Ended(1))",
        "c1 leases id 1 (horizon 1",
        "c0's renewal is refused",
    ];
    let reply = last_reply(&m, &steps);
    assert_eq!(
        reply,
        Reply::Refused {
            owner: Some(Who::Client(1))
        }
    );
    let (_, s) = guided(&m, &[&steps[..], &["c0 tries to release id 1"]].concat());
    // c1's lease found c0's record, horizon 2, and keeps it.
    assert_eq!(
        s.slot(1).record.map(|r| (r.horizon, r.writer)),
        Some((2, 1))
    );
}

#[test]
fn a_shrink_takes_an_id_leased_after_its_decision() {
    // The decision found nothing leased beyond 1; c1 leases id 2 before
    // the removal, which takes it: c1 learns at its next renewal.
    let m = shipped(TWO);
    let reply = last_reply(
        &m,
        &[
            "c0 leases id 1",
            "an init to 1..=1 decides: Decided { recorded: true, leased: [] }",
            "c1 leases id 2 (horizon 1, finds None)",
            "that init removes its ids: Shrunk(1)",
            "c1's renewal is refused",
        ],
    );
    assert_eq!(reply, Reply::Refused { owner: None });
}

#[test]
fn an_unused_release_puts_the_record_back() {
    let m = shipped(TWO);
    let (_, s) = guided(
        &m,
        &[
            "c0 leases id 1 (horizon 1, finds None)",
            "c0 releases id 1 (Ended(2))",
            "c1 leases id 2 (horizon 2",
            "c1 releases id 2 (Unused)",
            "c0 leases id 1 (horizon 1, finds Some(Record { horizon: 2, writer: 0 }))",
            "c0 releases id 1 (Unused)",
        ],
    );
    assert_eq!(s.slot(2).record, None);
    assert_eq!(
        s.slot(1).record.map(|r| (r.horizon, r.writer)),
        Some((2, 0))
    );
}

/// One init decides 1..=2 to 1..=1; another grows the pool to 1..=3; then
/// the first sends its removal of id 2.
const RACE: [&str; 3] = [
    "an init to 1..=1 decides: Decided { recorded: true, leased: [] }",
    "init 1..=3: Resized { from: (1, 2), to: 3, added: 1, removed: 0 }",
    "that init removes its ids",
];

#[test]
fn a_removal_after_a_later_init_decided_is_refused_and_no_id_is_lost() {
    let m = shipped(TWO);
    assert_eq!(last_reply(&m, &RACE), Reply::Overtaken);
    let (_, s) = guided(&m, &RACE);
    assert_eq!(s.range, 3);
    assert!((1..=3).all(|id| s.slot(id).present), "{s:?}");
}

#[test]
fn a_removal_that_ignores_a_later_decision_is_caught() {
    assert_eq!(
        caught(Flaw::RemovalIgnoresRange),
        Violation::LostId { id: 2 }
    );
    // Yet an init run again puts id 2 back: it adds its whole range.
    let m = Model {
        bounds: TWO,
        flaw: Some(Flaw::RemovalIgnoresRange),
    };
    let again = [&RACE[..], &["init 1..=3"]].concat();
    assert_eq!(
        last_reply(&m, &again),
        Reply::Init(InitReply::Resized {
            from: (1, 3),
            to: 3,
            added: 1,
            removed: 0
        })
    );
}

/// The rule `init` had: the removal unchecked, and the pool measured by
/// its largest id alone, so that an id cut out of its middle is never
/// added again.
#[test]
fn an_init_measured_by_its_ends_loses_an_id_for_good_to_a_racing_removal() {
    let flaw = Flaw::RemovalIgnoresRangeAddsPastTheTop;
    assert_eq!(caught(flaw), Violation::LostId { id: 2 });
    let m = Model {
        bounds: TWO,
        flaw: Some(flaw),
    };
    let again = [&RACE[..], &["init 1..=3"]].concat();
    assert_eq!(
        last_reply(&m, &again),
        Reply::Init(InitReply::Resized {
            from: (1, 3),
            to: 3,
            added: 0,
            removed: 0
        })
    );
    let (_, s) = guided(&m, &again);
    assert!(!s.slot(2).present, "{s:?}");
}
