//! The index model's events, each as the script invocation the code makes
//! for it (see `mod.rs` for the map and the choices).

use super::held::Held;
use crate::conformance::{Nodes, Replay};
use std::collections::BTreeMap;
use std::time::Duration;
use yaraus::index::script;
use yaraus::index::{IndexKeys, Pair};
use yaraus::timing::index::Timing;
use yaraus_models::index_model::model::{self as m, Event, Fate, Model, Reply, State, Store};

/// What a step's script answers, in the code's words.
#[derive(Debug, PartialEq)]
pub enum Answer {
    /// tick.lua counted the tick: the replica's rank in n, the pair it
    /// brings, whether the replica joined transition[n], and its size.
    Counted {
        rank: u64,
        pair: Option<Pair>,
        settled: bool,
        confirmations: u64,
    },
    /// tick.lua refused: interval `last` had begun (the seal).
    Sealed { last: u64 },
    /// confirm.lua: the size of transition[m], or none when the replica
    /// took no part in m-1.
    Confirmed(Option<u64>),
    /// The barrier's read at a start: |transition[m]|, and the replicas
    /// it must reach (the code: the pair's count, from the tick's reply).
    Barrier { have: u64, need: u64 },
    /// A reply the code does not know, or an error.
    Unknown(String),
}

impl Answer {
    /// The kind of answer, to show what a walk went through.
    pub fn kind(&self) -> &'static str {
        match self {
            Answer::Counted { pair: None, .. } => "tick counted, no pair",
            Answer::Counted { settled: false, .. } => "tick counted, pair changed",
            Answer::Counted { .. } => "tick counted, settled",
            Answer::Sealed { .. } => "tick sealed",
            Answer::Confirmed(Some(_)) => "confirmed",
            Answer::Confirmed(None) => "confirm of no part",
            Answer::Barrier { have, need } if have >= need => "barrier passed",
            Answer::Barrier { .. } => "barrier short",
            Answer::Unknown(_) => "unknown",
        }
    }
}

/// The tie: the model, and the arguments every invocation shares.
pub struct IndexReplay {
    model: Model,
    label: String,
    keys: IndexKeys,
    timing: Timing,
    /// clients[r]: replica r's client id.
    clients: Vec<String>,
    /// How many answers of each kind the scripts gave.
    pub seen: BTreeMap<&'static str, usize>,
}

impl IndexReplay {
    /// `interval`: the interval the code sends, long enough that no key
    /// expires during the test.
    pub fn new(model: Model, label: &str, interval: Duration) -> IndexReplay {
        let timing = Timing::new(interval, Some(Duration::ZERO), None).expect("a valid timing");
        let clients = (0..model.replicas).map(m::replica_name).collect();
        IndexReplay {
            model,
            label: label.to_string(),
            keys: IndexKeys::new("conformance", "index").expect("a valid name"),
            timing,
            clients,
            seen: BTreeMap::new(),
        }
    }

    /// The tick r sends for n while holding `holding`.
    fn tick(&self, nodes: &mut Nodes, r: usize, n: u8, holding: Option<m::Pair>) -> Answer {
        let invocation = script::Tick {
            keys: &self.keys,
            number: n.into(),
            interval_ms: self.timing.interval_ms(),
            client: &self.clients[r],
            holding: holding.map(code_pair),
            keep_ms: self.timing.keep_ms(),
        }
        .invocation();
        match invocation.invoke::<Vec<u64>>(nodes.conn(0)) {
            Ok(reply) => match reply.as_slice() {
                [1, rank, previous, count, confirmations, settled] => Answer::Counted {
                    rank: *rank,
                    pair: Pair::from_reply(*previous, *count),
                    settled: *settled == 1,
                    confirmations: *confirmations,
                },
                [2, last] => Answer::Sealed { last: *last },
                _ => Answer::Unknown(format!("{reply:?}")),
            },
            Err(e) => Answer::Unknown(e.to_string()),
        }
    }

    fn confirm(&self, nodes: &mut Nodes, r: usize, m: u8) -> Answer {
        let invocation = script::Confirm {
            keys: &self.keys,
            number: m.into(),
            client: &self.clients[r],
            keep_ms: self.timing.keep_ms(),
        }
        .invocation();
        match invocation.invoke::<i64>(nodes.conn(0)) {
            Ok(n) => Answer::Confirmed(u64::try_from(n).ok()),
            Err(e) => Answer::Unknown(e.to_string()),
        }
    }

    /// Runs the script of `e`, if it has one.
    fn run(&self, nodes: &mut Nodes, before: &State, e: Event) -> Option<Answer> {
        let reps = &before.reps;
        match e {
            Event::Tick(w, n, fate) if fate != Fate::RequestLost => {
                let holding = reps[w as usize].child.map(|c| c.pair);
                Some(self.tick(nodes, w.into(), n, holding))
            }
            Event::Execute(w) => {
                let tick = reps[w as usize].tick;
                Some(self.tick(nodes, w.into(), tick.n, tick.holding))
            }
            Event::Stray(w, i) => {
                let st = reps[w as usize].strays[i as usize].expect("the stray exists");
                Some(self.tick(nodes, w.into(), st.n, st.holding))
            }
            Event::Confirm(w, m) => Some(self.confirm(nodes, w.into(), m)),
            Event::Start(w) => Some(self.barrier(nodes, before, w.into())),
            _ => None,
        }
    }

    /// The code's barrier read before a start under tick m: SCARD of
    /// transition[m] (`Index::confirmations`), against the pair's count.
    fn barrier(&self, nodes: &mut Nodes, before: &State, r: usize) -> Answer {
        let (pair, _, basis) = self
            .model
            .can_start(before, r)
            .expect("the start is enabled");
        let have: u64 = redis::cmd("SCARD")
            .arg(self.keys.transition(basis.n.into()))
            .query(nodes.conn(0))
            .expect("SCARD");
        Answer::Barrier {
            have,
            need: pair.replicas.into(),
        }
    }
}

/// The model's pair as the code's.
fn code_pair(p: m::Pair) -> Pair {
    Pair {
        index: p.index.into(),
        replicas: p.replicas.into(),
    }
}

/// The model's tick script on a copy of its store, in the code's words. The
/// model's `settled` also holds for a replica holding nothing and given no
/// pair; the script says 1 only when it joined transition[n] (which the
/// model does for a settled reply with a pair), and that is what the code
/// acts on.
fn model_tick(store: &Store, r: usize, n: u8, holding: Option<m::Pair>) -> Answer {
    let mut store = *store;
    match store.tick(r, n, holding, true) {
        Reply::Refused => Answer::Sealed {
            last: store.last.into(),
        },
        Reply::Ok { pair, settled } => Answer::Counted {
            rank: store.who[n as usize][r].into(),
            pair: pair.map(code_pair),
            settled: settled && pair.is_some(),
            confirmations: store.transition[n as usize].count_ones().into(),
        },
    }
}

impl Replay for IndexReplay {
    type Model = Model;
    type Answer = Answer;
    type Projection = Held;

    fn name(&self) -> String {
        format!("index ({})", self.label)
    }

    fn model(&self) -> &Model {
        &self.model
    }

    fn nodes(&self) -> usize {
        1
    }

    /// The model starts from an empty store: nothing to write.
    fn setup(&mut self, _nodes: &mut Nodes, _initial: &State) {}

    fn expected(&self, before: &State, e: Event, after: &State) -> Option<Answer> {
        let reps = &before.reps;
        match e {
            Event::Tick(w, n, fate) if fate != Fate::RequestLost => {
                let holding = reps[w as usize].child.map(|c| c.pair);
                Some(model_tick(&before.store, w.into(), n, holding))
            }
            Event::Execute(w) => {
                let tick = reps[w as usize].tick;
                Some(model_tick(&before.store, w.into(), tick.n, tick.holding))
            }
            Event::Stray(w, i) => {
                let st = reps[w as usize].strays[i as usize].expect("the stray exists");
                Some(model_tick(&before.store, w.into(), st.n, st.holding))
            }
            Event::Confirm(w, m) => {
                let took_part = before.store.who[m as usize - 1][w as usize] != 0;
                let size = after.store.transition[m as usize].count_ones();
                Some(Answer::Confirmed(took_part.then_some(size.into())))
            }
            Event::Start(w) => {
                let (_, _, basis) = self.model.can_start(before, w.into())?;
                let m = basis.n as usize;
                Some(Answer::Barrier {
                    have: before.store.transition[m].count_ones().into(),
                    need: before.store.count[m - 1].into(),
                })
            }
            _ => None,
        }
    }

    fn perform(&mut self, nodes: &mut Nodes, before: &State, e: Event) -> Option<Answer> {
        let answer = self.run(nodes, before, e)?;
        *self.seen.entry(answer.kind()).or_default() += 1;
        Some(answer)
    }

    fn project(&self, s: &State) -> Held {
        Held::of(&s.store, self.timing.interval_ms())
    }

    fn observe(&mut self, nodes: &mut Nodes) -> Held {
        Held::read(nodes.conn(0), &self.keys, &self.clients)
    }
}
