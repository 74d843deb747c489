//! Creating a sequence, tied to the code: the model `seq_model::birth`
//! (the shipped rule, `Rules::SHIPPED`) walked beside three
//! `redis-server`s, each step run through the scripts the code runs
//! (`read.lua`, `propose.lua`, `transition.lua`, with `counter.lua` in
//! front, built by `yaraus::seq::script`), its keys spelled as the code
//! spells them (`names.rs`).
//!
//! # The tie
//!
//! * A node executing a request is the script of that request, with the
//!   arguments the code gives it: a marking read (`read.lua`, the mark's
//!   token), a proposal (`propose.lua`, one value), a preparation
//!   (`transition.lua` from the exact mark read to `creating:<id>`, the id
//!   `yaraus::seq::creation` gives the view), a settle (from
//!   `creating:<id>` to 0), a rollback (from the exact
//!   `creating:<ms>:<id>` read to `unborn:<token>:<id>`). Each must do
//!   what the model did.
//! * A read's decision is the code's verdict (`yaraus::seq::creation` and
//!   `stopped` on the states it counted) against the model's, and when
//!   that rolls back, the code's question to each prepared node (is its
//!   quarantine over?, `transition.lua` with `from` = `to`).
//! * Every request the model forgets because it can no longer change
//!   anything (`State::normalize`: a preparation whose mark is gone, a
//!   settle too late, a refused proposal...) is sent as the code would,
//!   and must write nothing: its answer and the keys after say so. This
//!   is what catches a script that writes where it should not: the walk
//!   itself only takes the requests that write.
//! * A node losing its data is a `FLUSHALL` of its server; a tick, an
//!   attempt and the other decisions run no script of their own (the
//!   requests they make the model forget are sent, as above).
//!
//! After each step the three keys, read back with `GET`, must be the
//! model's: missing, a counter, the exact mark, or prepared for the same
//! creation.
//!
//! # Time
//!
//! `transition.lua` reads the server's clock: a settle lands only on a
//! prepared state younger than its bound, a rollback (and its ripe
//! question) only on one at least its bound old. The model's clock is
//! abstract (ticks), and a walk takes milliseconds, so each call's bound
//! is chosen from the model's age of the node at that step: a settle the
//! model lets land gets hours (the server's age is milliseconds, below
//! it), one it forgets as too late gets zero (every age is at least
//! zero); a rollback or ripe question gets zero once the model says ripe,
//! hours before. The server's outcome is then the model's, and what is
//! checked is the direction of each comparison and the states they guard,
//! not the figures (`timing/sequence.rs` and the model check those). For
//! the same reason the age of a prepared state is not compared, only that
//! it carries the server's clock.
//!
//! # The walks, and what is left out
//!
//! From nothing (`FRESH`), and from a creation stopped half-way (`STUCK`,
//! aged to three ticks short of ripe first), with room for three and two
//! attempts: chosen runs first (`stories.rs`: each whole story, every
//! time), then the walks, paced (`guided.rs`) so that they reach settles,
//! late settles and rollbacks. The starts are written to the
//! servers as they are, prepared nodes with the server's clock.
//!
//! Not tied: which replies a round may count (the model's history of
//! each node) is the model's own bookkeeping, checked only through the
//! verdicts it leads to; the reader's and the creator's own clocks
//! (`create.rs` rolls back and settles only within a round lifetime of
//! the read) are Rust, not a script: the model's round lifetime stands
//! for them, and `tests/seq_creation/straggler.rs` checks the rollback's.

mod calls;
mod guided;
mod names;
mod stories;

use super::walk::replay_runs;
use super::{Nodes, Plan, Replay, walk};
use calls::{Allowed, Call, Reply, Script, plan};
use guided::{Guided, Pace};
use names::{Key, key_of, parse};
use std::collections::HashMap;
use yaraus::seq::script::{Propose, Read, Transition};
use yaraus::seq::{NodeState, SeqKeys, creation, stopped};
use yaraus_models::explorer::System;
use yaraus_models::seq_model::birth::{Event, FRESH, Model, Rules, STUCK, Start, State};
use yaraus_models::seq_model::{MAJORITY, N};

/// The model's answers to a step's calls, or the servers': one per call.
type Answer = Vec<(String, Reply)>;

struct Birth {
    model: Guided,
    what: &'static str,
    key: String,
    /// The exact prepared states the servers hold or held, by node and
    /// creation id: what a read returned, for a ripe question or a
    /// rollback (each node is prepared once per creation).
    exact: HashMap<(usize, String), String>,
    /// How many calls of each kind the servers answered, for the report.
    tally: HashMap<&'static str, usize>,
}

impl Birth {
    fn new(model: Guided, what: &'static str) -> Birth {
        Birth {
            model,
            what,
            key: SeqKeys::new("yaraus").counter("birth").unwrap(),
            exact: HashMap::new(),
            tally: HashMap::new(),
        }
    }

    fn exact_state(&self, n: usize, id: &str) -> String {
        self.exact
            .get(&(n, id.to_string()))
            .cloned()
            .unwrap_or_else(|| format!("creating:0:{id}"))
    }

    fn run(&self, nodes: &mut Nodes, call: &Call) -> Reply {
        let key = self.key.as_str();
        let invocation = match &call.script {
            Script::Read { token } => Read { key, mark: token }.invocation(),
            Script::Propose { value } => Propose {
                key,
                first: *value,
                last: *value,
            }
            .invocation(),
            Script::Transition { from, to, bound } => Transition {
                key,
                from,
                to,
                bound: *bound,
            }
            .invocation(),
            Script::Undo { id, to, bound } => {
                let from = self.exact_state(call.node, id);
                let to = to.clone().unwrap_or_else(|| from.clone());
                Transition {
                    key,
                    from: &from,
                    to: &to,
                    bound: Some(*bound),
                }
                .invocation()
            }
            Script::Verdict { read } => return Reply::Allows(self.code_verdict(read)),
        };
        let answer = invocation.invoke::<redis::Value>(nodes.conn(call.node));
        reply(&call.script, answer)
    }

    /// What the code's view allows from these answers (`View::verdict`).
    fn code_verdict(&self, read: &[Option<Key>; N]) -> Allowed {
        let states: Vec<NodeState> = (0..N)
            .filter_map(|n| {
                Some(match read[n].as_ref()? {
                    Key::Counter(v) => NodeState::Counter(*v),
                    Key::Prepared(id) => NodeState::Lacks(self.exact_state(n, id)),
                    Key::Mark(text) | Key::Other(text) => NodeState::Lacks(text.clone()),
                    Key::Missing => NodeState::Lacks(String::new()),
                })
            })
            .collect();
        let held: Vec<u64> = states
            .iter()
            .filter_map(|s| match s {
                NodeState::Counter(v) => Some(*v),
                NodeState::Lacks(_) => None,
            })
            .collect();
        if held.len() >= MAJORITY {
            return Allowed::Floor(held.into_iter().max().unwrap_or(0));
        }
        if states.len() < N {
            return Allowed::Nothing;
        }
        if let Some(id) = creation(&states) {
            return Allowed::Create(id);
        }
        match stopped(&states, MAJORITY) {
            Some(prepared) => Allowed::RollBack(prepared.into_iter().map(|(i, _)| i).collect()),
            None => Allowed::Nothing,
        }
    }
}

/// A script's answer, in the model's words.
fn reply(script: &Script, answer: redis::RedisResult<redis::Value>) -> Reply {
    let items = match answer {
        Ok(redis::Value::Array(items)) => items,
        Ok(other) => return Reply::Strange(format!("{other:?}")),
        Err(e) => return Reply::Strange(e.to_string()),
    };
    let texts: Vec<String> = items
        .iter()
        .map(|v| match v {
            redis::Value::Int(i) => i.to_string(),
            redis::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
            other => format!("{other:?}"),
        })
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let counter = |v: &str| v.parse::<u64>().ok();
    let said = match (script, texts.as_slice()) {
        (Script::Read { .. }, ["1", v]) => counter(v).map(Reply::Holds),
        (Script::Read { .. }, ["0", state]) => Some(Reply::Lacks(parse(Some(state)))),
        (Script::Propose { .. }, ["1", v]) => counter(v).map(Reply::Accepted),
        (Script::Propose { .. }, ["0", v]) => counter(v).map(Reply::Refused),
        (Script::Propose { .. }, ["2"]) => Some(Reply::NoCounter),
        (Script::Transition { .. } | Script::Undo { .. }, ["1"]) => Some(Reply::Done),
        (Script::Transition { .. } | Script::Undo { .. }, ["2", _]) => Some(Reply::NotRipe),
        (Script::Transition { .. } | Script::Undo { .. }, ["0", state]) => {
            Some(Reply::Unchanged(parse(Some(state))))
        }
        _ => None,
    };
    said.unwrap_or_else(|| Reply::Strange(format!("{texts:?}")))
}

impl Replay for Birth {
    type Model = Guided;
    type Answer = Answer;
    type Projection = [Key; N];

    fn name(&self) -> String {
        format!("birth ({})", self.what)
    }

    fn model(&self) -> &Guided {
        &self.model
    }

    fn nodes(&self) -> usize {
        N
    }

    fn setup(&mut self, nodes: &mut Nodes, initial: &State) {
        self.exact.clear();
        for n in 0..N {
            let text = match key_of(initial, n, initial.nodes[n]) {
                Key::Missing => continue,
                Key::Counter(v) => v.to_string(),
                Key::Mark(text) | Key::Other(text) => text,
                Key::Prepared(id) => {
                    let (s, us): (u64, u64) = redis::cmd("TIME").query(nodes.conn(n)).unwrap();
                    format!("creating:{}:{id}", s * 1000 + us / 1000)
                }
            };
            let _: () = redis::cmd("SET")
                .arg(&self.key)
                .arg(text)
                .query(nodes.conn(n))
                .unwrap();
        }
    }

    fn expected(&self, before: &State, e: Event, after: &State) -> Option<Answer> {
        let calls = plan(&self.model.model, before, e, after);
        (!calls.is_empty()).then(|| calls.into_iter().map(|c| (c.label, c.expect)).collect())
    }

    fn perform(&mut self, nodes: &mut Nodes, before: &State, e: Event) -> Option<Answer> {
        let after = self
            .model
            .apply(before, e, None)
            .expect("a step of the run");
        if let Event::Lose(n) = e {
            let _: () = redis::cmd("FLUSHALL")
                .query(nodes.conn(usize::from(n)))
                .unwrap();
        }
        let calls = plan(&self.model.model, before, e, &after);
        (!calls.is_empty()).then(|| {
            calls
                .iter()
                .map(|c| {
                    *self.tally.entry(c.kind).or_default() += 1;
                    (c.label.clone(), self.run(nodes, c))
                })
                .collect()
        })
    }

    fn project(&self, s: &State) -> [Key; N] {
        std::array::from_fn(|n| key_of(s, n, s.nodes[n]))
    }

    fn observe(&mut self, nodes: &mut Nodes) -> [Key; N] {
        std::array::from_fn(|n| {
            let held: Option<String> = redis::cmd("GET")
                .arg(&self.key)
                .query(nodes.conn(n))
                .unwrap();
            let key = parse(held.as_deref());
            if let (Key::Prepared(id), Some(text)) = (&key, held) {
                self.exact.insert((n, id.clone()), text);
            }
            key
        })
    }
}

/// The walks of `plan`, after the chosen runs `stories` makes.
fn check(model: Guided, what: &'static str, plan: Plan, stories: &[fn(&Model) -> Vec<Event>]) {
    let mut birth = Birth::new(model, what);
    let runs: Vec<Vec<Event>> = stories.iter().map(|f| f(&birth.model.model)).collect();
    let steps = replay_runs(&mut birth, &runs) + walk(&mut birth, plan);
    let mut tally: Vec<_> = birth.tally.into_iter().collect();
    tally.sort();
    eprintln!("conformance birth ({what}): {steps} steps compared; calls: {tally:?}");
    assert!(steps > 0, "nothing compared");
}

/// The shipped rule, with room for a creation, a rollback and proposals
/// in one run.
fn shipped(start: Start) -> Model {
    Model {
        attempts: [3, 2],
        ..Model::new(Rules::SHIPPED, start)
    }
}

#[test]
fn conformance_birth_from_nothing() {
    let stories: [fn(&Model) -> Vec<Event>; 2] = [stories::together, stories::loss_during_creation];
    for (pace, depth, stories) in [(Pace::PROMPT, 5, &stories[..]), (Pace::LATE, 0, &[])] {
        let model = Guided {
            model: shipped(FRESH),
            lead: Vec::new(),
            pace,
        };
        let plan = Plan {
            depth,
            transitions: depth.min(4),
            walks: 80,
            steps: 60,
        };
        check(model, "from nothing", plan, stories);
    }
}

#[test]
fn conformance_birth_of_a_stopped_creation() {
    // Three ticks short of ripe: the walks see it unripe, then ripe.
    let model = Guided {
        model: shipped(STUCK),
        lead: vec![Event::Tick; 4],
        pace: Pace::PROMPT,
    };
    let plan = Plan {
        depth: 7,
        transitions: 7,
        walks: 80,
        steps: 60,
    };
    check(
        model,
        "a creation stopped half-way",
        plan,
        &[stories::rolled_back],
    );
}
