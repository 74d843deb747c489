//! The scripts a step of the `birth` model stands for, and what the model
//! says each answers (`mod.rs` has the tie).
//!
//! A step plans its calls once, from the model's states before and after
//! it; the test compares the model's answers to them with the servers'.
//! The calls are the step's own write, if it makes one, and then a *probe*
//! for each request the step made the model forget (`State::normalize`:
//! it can no longer change anything), sent as the code would send it,
//! which must write nothing.

use super::names::{Key, creation_id, key_of, mark_text, naming, short, token};
use std::time::Duration;
use yaraus_models::seq_model::N;
use yaraus_models::seq_model::birth::state::{Verdict, read_keys, verdict};
use yaraus_models::seq_model::birth::{
    B_OK, Event, MISSING, Model, Msg, PREP, PREPARED, PREPARING, PROPOSE, PROPOSING, R_NONE, READ,
    READING, ROLLBACK, SETTLE, State, holder, unborn,
};

/// A bound the model's clock cannot reach: an age always below it.
pub const HOURS: Duration = Duration::from_secs(6 * 3600);

/// One script run on one node, its arguments spelled for the server.
#[derive(Clone, Debug)]
pub enum Script {
    /// read.lua, marking with this token.
    Read { token: String },
    /// propose.lua of one value.
    Propose { value: u64 },
    /// transition.lua: prepare, settle, ripe (`from` = `to`) or rollback.
    Transition {
        from: String,
        to: String,
        bound: Option<Duration>,
    },
    /// transition.lua from the exact prepared state of the creation `id`
    /// (`creating:<ms>:<id>`, the server's clock in it, as the read that
    /// found it returned it): a ripe question (`to` None: `to` = `from`)
    /// or a rollback.
    Undo {
        id: String,
        to: Option<String>,
        bound: Duration,
    },
    /// The code's verdict on a read (`creation`, `stopped`): no server.
    Verdict { read: [Option<Key>; N] },
}

/// What a script answered, or what the verdict allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Holds(u64),
    Lacks(Key),
    Accepted(u64),
    Refused(u64),
    NoCounter,
    /// transition.lua's 1: the key holds `to`.
    Done,
    /// transition.lua's 2: the quarantine is not over.
    NotRipe,
    /// transition.lua's 0, with what the key holds.
    Unchanged(Key),
    Allows(Allowed),
    /// An error, or a shape no script returns.
    Strange(String),
}

/// A read's verdict, in the code's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Allowed {
    Floor(u64),
    Create(String),
    RollBack(Vec<usize>),
    Nothing,
}

/// One call of a step: on which node, what, and the model's answer.
pub struct Call {
    pub node: usize,
    /// What kind of call, for the tally.
    pub kind: &'static str,
    pub label: String,
    pub script: Script,
    pub expect: Reply,
}

/// The calls of `e`, taken from `before` to `after`.
pub fn plan(m: &Model, before: &State, e: Event, after: &State) -> Vec<Call> {
    let names = naming(before, after);
    let mut calls = Vec::new();
    let mut pushed = Vec::new();
    let (mut executed, mut skip) = (None, None);
    match e {
        Event::Execute(x) => {
            calls.push(call(m, &names, before, x));
            executed = Some(x);
        }
        Event::Attempt(p) => pushed = attempt(before, usize::from(p)),
        Event::Decide(p, codes) => {
            let p = usize::from(p);
            let phase = before.p[p].phase;
            match phase {
                READING => {
                    let (keys, ripe) = read_keys(codes);
                    calls.extend(judge(m, &names, keys));
                    pushed = after_read(m, after, p, keys, ripe);
                    skip = Some(READ);
                }
                PREPARING if codes == [B_OK; N] => {
                    pushed = (0..N).map(|n| msg(SETTLE, n, before.p[p].id, 0)).collect();
                }
                PROPOSING => skip = Some(PROPOSE),
                _ => {}
            }
        }
        Event::Tick | Event::Lose(_) => {}
    }
    for x in forgotten(before, after, &pushed, executed, skip) {
        let mut probe = call(m, &names, after, x);
        probe.kind = match x.kind {
            READ => "forgotten read",
            PROPOSE => "forgotten proposal",
            PREP => "forgotten preparation",
            SETTLE => "forgotten settle",
            _ => "forgotten rollback",
        };
        calls.push(probe);
    }
    calls
}

fn msg(kind: u8, n: usize, a: u8, b: u8) -> Msg {
    Msg {
        kind,
        node: n as u8,
        who: 0,
        a,
        b,
    }
}

/// The requests an attempt sends.
fn attempt(s: &State, p: usize) -> Vec<Msg> {
    let floor = s.p[p].floor;
    (0..N)
        .map(|n| match floor {
            MISSING => msg(READ, n, 0, 0),
            f => msg(PROPOSE, n, f + 1, 0),
        })
        .collect()
}

/// The verdict on the keys read, the model's (with every prepared node
/// ripe: the code asks that apart) against the code's; and, when it rolls
/// back, the code's question to each prepared node: is it ripe?
fn judge(m: &Model, s: &State, keys: [u8; N]) -> Vec<Call> {
    let read: [Option<Key>; N] =
        std::array::from_fn(|n| (keys[n] != MISSING).then(|| key_of(s, n, keys[n])));
    let allowed = match verdict(&m.rules, keys, u8::MAX) {
        Verdict::Floor(f) => Allowed::Floor(u64::from(f)),
        Verdict::Create => Allowed::Create(creation_id(s, intern_of(s, keys))),
        Verdict::Rollback(mask) => {
            Allowed::RollBack((0..N).filter(|n| mask & 1 << n != 0).collect())
        }
        Verdict::Adopt(_) | Verdict::Nothing => Allowed::Nothing,
    };
    let mut calls = vec![Call {
        node: N,
        kind: "verdict",
        label: format!("the verdict on {read:?}"),
        script: Script::Verdict { read },
        expect: Reply::Allows(allowed.clone()),
    }];
    if let Allowed::RollBack(nodes) = allowed {
        for n in nodes {
            let x = keys[n] - PREPARED;
            let script = Script::Undo {
                id: creation_id(s, x),
                to: None,
                bound: ripe_bound(m, s, n),
            };
            calls.push(Call {
                node: n,
                kind: "ripe question",
                label: format!("node {}: is X{} ripe", n + 1, x + 1),
                script,
                expect: reply(m, s, n, Ask::Ripe(x)),
            });
        }
    }
    calls
}

/// The slot of the view `keys` (all marks) in `s`.
fn intern_of(s: &State, keys: [u8; N]) -> u8 {
    s.views
        .iter()
        .position(|v| *v == keys)
        .expect("a creation's view is interned") as u8
}

/// The requests a read's decision sends (`State::decide_read`).
fn after_read(m: &Model, t: &State, p: usize, keys: [u8; N], ripe: u8) -> Vec<Msg> {
    match verdict(&m.rules, keys, ripe) {
        Verdict::Floor(f) => (0..N).map(|n| msg(PROPOSE, n, f + 1, 0)).collect(),
        Verdict::Create => {
            let id = t.p[p].id;
            assert_eq!(t.p[p].phase, PREPARING, "a creation prepares");
            (0..N).map(|n| msg(PREP, n, keys[n], id)).collect()
        }
        Verdict::Rollback(mask) => (0..N)
            .filter(|n| mask & 1 << n != 0)
            .map(|n| msg(ROLLBACK, n, keys[n] - PREPARED, 0))
            .collect(),
        Verdict::Adopt(x) => (0..N).map(|n| msg(SETTLE, n, x, 0)).collect(),
        Verdict::Nothing => Vec::new(),
    }
}

/// The requests in flight before, or sent by the step, that are neither
/// the one executed nor in flight after: the model forgot them (`skip`:
/// a kind the step takes out itself, as replies it counted).
fn forgotten(
    s: &State,
    t: &State,
    pushed: &[Msg],
    executed: Option<Msg>,
    skip: Option<u8>,
) -> Vec<Msg> {
    let id = |x: &Msg| (x.kind, x.node, x.a, x.b);
    let mut left: Vec<Msg> = s.msgs[..usize::from(s.len)].to_vec();
    left.extend_from_slice(pushed);
    for gone in executed.iter().chain(&t.msgs[..usize::from(t.len)]) {
        if let Some(i) = left.iter().position(|x| id(x) == id(gone)) {
            left.swap_remove(i);
        }
    }
    left.retain(|x| Some(x.kind) != skip);
    left.sort_by_key(id);
    left
}

/// What a call asks of its node, in the model's terms.
#[derive(Clone, Copy)]
enum Ask {
    Read,
    Propose(u8),
    Prepare { mark: u8, x: u8 },
    Settle(u8),
    Ripe(u8),
    Rollback(u8),
}

/// Request x as the code sends it, and the model's answer in `s`.
fn call(m: &Model, names: &State, s: &State, x: Msg) -> Call {
    let n = usize::from(x.node);
    let id = |x: u8| creation_id(names, x);
    let (ask, label, script) = match x.kind {
        READ => {
            let token = token(n, s.gens[n]);
            let label = format!("read, marking {token}");
            (Ask::Read, label, Script::Read { token })
        }
        PROPOSE => {
            let value = u64::from(x.a);
            (
                Ask::Propose(x.a),
                format!("propose {value}"),
                Script::Propose { value },
            )
        }
        PREP => {
            let from = mark_text(names, n, x.a);
            let label = format!("prepare {from} for X{} ({})", x.b + 1, short(&id(x.b)));
            let to = format!("creating:{}", id(x.b));
            let script = Script::Transition {
                from,
                to,
                bound: None,
            };
            (Ask::Prepare { mark: x.a, x: x.b }, label, script)
        }
        SETTLE => {
            let prepared = PREPARED + x.a;
            let settles = s.nodes[n] == prepared && s.settles(m, n);
            let bound = Some(if settles { HOURS } else { Duration::ZERO });
            let label = format!("settle X{} ({}) to 0", x.a + 1, short(&id(x.a)));
            let from = format!("creating:{}", id(x.a));
            let script = Script::Transition {
                from,
                to: "0".into(),
                bound,
            };
            (Ask::Settle(x.a), label, script)
        }
        _ => {
            let to = format!("unborn:{}:{}", token(n, s.gens[n]), id(x.a));
            let label = format!("roll X{} ({}) back", x.a + 1, short(&id(x.a)));
            let bound = ripe_bound(m, s, n);
            let script = Script::Undo {
                id: id(x.a),
                to: Some(to),
                bound,
            };
            (Ask::Rollback(x.a), label, script)
        }
    };
    let kind = match x.kind {
        READ => "read",
        PROPOSE => "proposal",
        PREP => "preparation",
        SETTLE => "settle",
        _ => "rollback",
    };
    Call {
        node: n,
        kind,
        label: format!("node {}: {label}", n + 1),
        script,
        expect: reply(m, s, n, ask),
    }
}

/// The rollback's and the ripe question's bound: none left once the model
/// says ripe, hours before.
fn ripe_bound(m: &Model, s: &State, n: usize) -> Duration {
    if s.ripe(m, n) { Duration::ZERO } else { HOURS }
}

/// What node n answers `ask` in `s`, by the model.
fn reply(m: &Model, s: &State, n: usize, ask: Ask) -> Reply {
    let k = s.nodes[n];
    let held = || key_of(s, n, k);
    let counter = holder(k).then_some(u64::from(k));
    match ask {
        Ask::Read => match (k, counter) {
            (MISSING, _) => Reply::Lacks(key_of(s, n, unborn(0, s.gens[n]))),
            (_, Some(v)) => Reply::Holds(v),
            _ => Reply::Lacks(held()),
        },
        Ask::Propose(a) => match counter {
            Some(v) if v < u64::from(a) => Reply::Accepted(u64::from(a)),
            Some(v) => Reply::Refused(v),
            None => Reply::NoCounter,
        },
        Ask::Prepare { mark, x } if k == mark || k == PREPARED + x => Reply::Done,
        Ask::Settle(x) if k == PREPARED + x && s.settles(m, n) => Reply::Done,
        Ask::Settle(_) if counter == Some(0) => Reply::Done,
        Ask::Ripe(x) | Ask::Rollback(x) if k == PREPARED + x => {
            if s.ripe(m, n) {
                Reply::Done
            } else {
                Reply::NotRipe
            }
        }
        _ => Reply::Unchanged(held()),
    }
}
