//! The `counters` model under its rule `Quarantine`, its votes only,
//! beside the servers (the module doc of `mod.rs` says why not its
//! repair).

use super::replies::{Key, Marks, Node, Reply};
use super::steer::Steered;
use crate::conformance::{Nodes, Replay};
use std::fmt;
use yaraus_models::explorer::System;
use yaraus_models::seq_model::counters::{
    Event, H_MISSING_READY, H_MISSING_WAITING, H_SPAN, IDLE, MISSING, Model, Msg, PROPOSE,
    PROPOSING, Rules, SET, State,
};
use yaraus_models::seq_model::{N, node_name, proposer_name};

/// What a step asks a node besides its own script (see `timed.rs`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Probe {
    /// read.lua, read-only, for proposer `by`'s live read.
    Read { node: u8, by: u8 },
    /// A proposal in flight (or just forgotten by the model) that writes
    /// nothing, run now.
    Idle(Msg),
}

impl fmt::Debug for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Probe::Read { node, by } => {
                write!(f, "{}: {}'s read", node_name(node), proposer_name(by))
            }
            Probe::Idle(x) => write!(f, "{}: proposal {}", node_name(x.node()), x.val()),
        }
    }
}

/// A step's answers: the step's own script, and every probe's.
#[derive(Debug, PartialEq, Eq)]
pub struct Step {
    pub script: Option<Reply>,
    pub probes: Vec<(Probe, Reply)>,
}

pub struct Votes {
    model: Steered<Model>,
    key: String,
    /// No marks in this model: every key is a counter or missing.
    marks: Marks,
}

impl Votes {
    pub fn new(model: Model, key: String) -> Votes {
        assert!(
            model.rules == Rules::Quarantine && model.repairs == 0,
            "the votes of Quarantine only: its repair is no shipped script"
        );
        Votes {
            model: Steered { model, fruitful },
            key,
            marks: Marks::default(),
        }
    }

    fn m(&self) -> &Model {
        &self.model.model
    }

    fn node<'a>(&'a self, nodes: &'a mut Nodes, n: u8) -> Node<'a> {
        Node {
            conn: nodes.conn(usize::from(n)),
            key: &self.key,
            marks: &self.marks,
        }
    }

    /// Every live read, and every proposal in flight or forgotten in this
    /// step that the model says changes nothing.
    fn probes(&self, before: &State, e: Event, after: &State) -> Vec<Probe> {
        if after.violation.is_some() {
            return Vec::new();
        }
        let mut probes = Vec::new();
        for (p, pr) in after.p.iter().enumerate() {
            if pr.phase != IDLE && pr.phase != PROPOSING {
                probes.extend((0..N as u8).map(|n| Probe::Read {
                    node: n,
                    by: p as u8,
                }));
            }
        }
        let idle = in_flight(after)
            .into_iter()
            .filter(|&x| self.m().apply(after, Event::Execute(x), None).is_none());
        probes.extend(
            idle.chain(forgotten(self.m(), before, e, after))
                .map(Probe::Idle),
        );
        probes.sort_unstable();
        probes.dedup();
        probes
    }

    /// What the model says a probe answers in `s`: a read, from its own
    /// `note`; a proposal that changes nothing, by propose.lua's contract.
    fn foresee(&self, s: &State, probe: Probe) -> Reply {
        match probe {
            Probe::Read { node, by } => {
                let (n, p) = (usize::from(node), usize::from(by));
                let mut t = *s;
                t.p[p].hist[n] = 0;
                t.note(self.m(), p, n);
                let bit = t.p[p].hist[n];
                let counters = bit & ((1 << H_SPAN) - 1);
                if counters != 0 {
                    Reply::Holds(u64::from(self.m().base) + u64::from(counters.trailing_zeros()))
                } else if bit & (H_MISSING_READY | H_MISSING_WAITING) != 0 {
                    Reply::Lacks(Key::Missing)
                } else {
                    Reply::Odd("the model records no reply".to_string())
                }
            }
            Probe::Idle(x) => match s.nodes[usize::from(x.node())] {
                MISSING => Reply::NoVote,
                c if c >= x.val() => Reply::Refused(u64::from(c)),
                _ => Reply::Writes("a proposal above the counter"),
            },
        }
    }

    fn ask(&self, nodes: &mut Nodes, probe: Probe) -> Reply {
        match probe {
            Probe::Read { node, .. } => self.node(nodes, node).read().0,
            Probe::Idle(x) => self.node(nodes, x.node()).propose(u64::from(x.val())),
        }
    }
}

impl Replay for Votes {
    type Model = Steered<Model>;
    type Answer = Step;
    type Projection = [Key; N];

    fn name(&self) -> String {
        format!("the votes ({:?})", self.m().rules)
    }

    fn model(&self) -> &Steered<Model> {
        &self.model
    }

    fn nodes(&self) -> usize {
        N
    }

    fn setup(&mut self, nodes: &mut Nodes, initial: &State) {
        for (n, &c) in initial.nodes.iter().enumerate() {
            if c != MISSING {
                let _: () = redis::cmd("SET")
                    .arg(&self.key)
                    .arg(c)
                    .query(nodes.conn(n))
                    .expect("SET");
            }
        }
    }

    fn expected(&self, before: &State, e: Event, after: &State) -> Option<Step> {
        let script = match e {
            Event::Execute(x) => Some(Reply::Accepted(u64::from(x.val()))),
            _ => None,
        };
        let probes = self.probes(before, e, after);
        let probes = probes.into_iter().map(|p| (p, self.foresee(after, p)));
        Some(Step {
            script,
            probes: probes.collect(),
        })
    }

    fn perform(&mut self, nodes: &mut Nodes, before: &State, e: Event) -> Option<Step> {
        let after = self
            .m()
            .apply(before, e, None)
            .expect("the walk takes steps the model allows");
        let script = match e {
            Event::Lose(n) => {
                let _: () = redis::cmd("FLUSHALL")
                    .query(nodes.conn(usize::from(n)))
                    .expect("FLUSHALL");
                None
            }
            Event::Execute(x) => {
                assert_eq!(x.kind(), PROPOSE, "no repair, so no SET if missing");
                Some(self.node(nodes, x.node()).propose(u64::from(x.val())))
            }
            _ => None,
        };
        let probes = self.probes(before, e, &after);
        let probes = probes.into_iter().map(|p| (p, self.ask(nodes, p)));
        Some(Step {
            script,
            probes: probes.collect(),
        })
    }

    fn project(&self, s: &State) -> [Key; N] {
        s.nodes.map(|c| match c {
            MISSING => Key::Missing,
            c => Key::Counter(u64::from(c)),
        })
    }

    fn observe(&mut self, nodes: &mut Nodes) -> [Key; N] {
        std::array::from_fn(|n| self.node(nodes, n as u8).get())
    }
}

/// Anything but a decision that ends its call having handed nothing out,
/// or an expiry: those end a story rather than move it on.
fn fruitful(_: &Model, s: &State, e: Event, after: &State) -> bool {
    match e {
        Event::Decide(p, _) => after.p[usize::from(p)].phase != IDLE || after.handed != s.handed,
        Event::Expire(..) => false,
        _ => true,
    }
}

fn in_flight(s: &State) -> Vec<Msg> {
    s.msgs[..usize::from(s.len)].to_vec()
}

/// The proposals the model forgot in step `e`, as in `timed.rs`. An
/// expiry also spends the proposals it saw MISSING: probing them again
/// finds the key still missing, since nothing sets a lost key here.
fn forgotten(m: &Model, before: &State, e: Event, after: &State) -> Vec<Msg> {
    let mut gone: Vec<Msg> = match e {
        Event::Decide(p, codes) => {
            let mut decided = *before;
            decided.decide(m, usize::from(p), codes, false);
            in_flight(&decided)
        }
        _ => in_flight(before),
    };
    if let Event::Execute(x) = e {
        let at = gone
            .iter()
            .position(|&y| y == x)
            .expect("executed from flight");
        gone.swap_remove(at);
    }
    let mut gone: Vec<Msg> = gone.into_iter().map(Msg::stale).collect();
    gone.sort_unstable();
    for x in in_flight(after).into_iter().map(Msg::stale) {
        if let Ok(at) = gone.binary_search(&x) {
            gone.remove(at);
        }
    }
    debug_assert!(gone.iter().all(|x| x.kind() != SET));
    gone
}
