//! Chosen runs of the `birth` model, replayed beside the random walks so
//! that every test run goes through each whole story at least once: two
//! creators finishing one creation together, a loss during a creation,
//! and a stopped creation rolled back and created afresh. Each is written
//! as picks (the first enabled event of a kind), not as the model's
//! events, so that it reads as the story it tells.

use yaraus_models::explorer::System;
use yaraus_models::seq_model::birth::{
    Event, Model, PREP, PROPOSE, R_NONE, READ, ROLLBACK, SETTLE, State,
};

/// One step of a story.
#[derive(Clone, Copy, Debug)]
enum Pick {
    Tick,
    Lose(u8),
    Attempt(u8),
    /// A request of this kind reaching this node.
    Execute(u8, u8),
    /// A decision of this process counting a reply from every node.
    Decide(u8),
}

use Pick::{Attempt, Decide, Execute, Lose, Tick};

/// The run the picks make in `m`.
fn story(m: &Model, picks: &[Pick]) -> Vec<Event> {
    let mut s: State = m.initial();
    let mut run = Vec::new();
    let mut candidates = Vec::new();
    for &pick in picks {
        m.candidates(&s, &mut candidates);
        let chosen = candidates.iter().copied().find(|&e| {
            let fits = match (pick, e) {
                (Tick, Event::Tick) => true,
                (Lose(n), Event::Lose(k)) | (Attempt(n), Event::Attempt(k)) => n == k,
                (Execute(kind, n), Event::Execute(x)) => x.kind == kind && x.node == n,
                (Decide(p), Event::Decide(q, codes)) => p == q && !codes.contains(&R_NONE),
                _ => false,
            };
            fits && m.apply(&s, e, None).is_some()
        });
        let e = chosen.unwrap_or_else(|| panic!("{pick:?} is not possible after {run:?}"));
        s = m.apply(&s, e, None).unwrap();
        run.push(e);
    }
    run
}

fn each_node(kind: u8) -> [Pick; 3] {
    [Execute(kind, 0), Execute(kind, 1), Execute(kind, 2)]
}

/// From nothing: P1 and P2 read the same marks and create one sequence
/// together (the second's preparations and settles find their work
/// done), then each hands out a value.
pub fn together(m: &Model) -> Vec<Event> {
    let picks = [
        &[Attempt(0), Attempt(1)][..],
        &each_node(READ),
        &[Decide(0), Decide(1)],
        &each_node(PREP),
        &[Decide(0), Decide(1)],
        &each_node(SETTLE),
        &[Attempt(0), Decide(0)],
        &each_node(PROPOSE),
        &[Decide(0), Attempt(1), Decide(1)],
        &each_node(PROPOSE),
        &[Decide(1)],
    ];
    story(m, &picks.concat())
}

/// From nothing: node 2 loses its data once prepared; the creator had
/// its answer, settles nodes 1 and 3 (the settle to node 2 finds it
/// empty), and a reader marks node 2 and hands out 1 from the others.
pub fn loss_during_creation(m: &Model) -> Vec<Event> {
    let picks = [
        &[Attempt(0)][..],
        &each_node(READ),
        &[Decide(0)],
        &each_node(PREP),
        &[Lose(1), Decide(0)],
        &each_node(SETTLE)[..1],
        &[Execute(SETTLE, 2), Attempt(1), Execute(READ, 1), Decide(1)],
        &[Execute(PROPOSE, 0), Execute(PROPOSE, 2), Decide(1)],
    ];
    story(m, &picks.concat())
}

/// From a stopped creation: once ripe, a read rolls it back, the next
/// creates afresh, and 1 is handed out.
pub fn rolled_back(m: &Model) -> Vec<Event> {
    let picks = [
        &[Tick; 7][..],
        &[
            Attempt(0),
            Decide(0),
            Execute(ROLLBACK, 1),
            Execute(ROLLBACK, 2),
        ],
        &[Attempt(0), Decide(0)],
        &each_node(PREP),
        &[Decide(0)],
        &each_node(SETTLE),
        &[Attempt(0), Decide(0)],
        &each_node(PROPOSE),
        &[Decide(0)],
    ];
    story(m, &picks.concat())
}
