//! The `timed` model (the quarantined repair as built) beside the servers.

use super::replies::{Key, Marks, Node, Reply};
use super::steer::Steered;
use crate::conformance::{Nodes, Replay};
use std::fmt;
use yaraus_models::explorer::System;
use yaraus_models::seq_model::timed::{
    Event, H_MISSING, H_RIPE, H_SPAN, HEAL_READ, IDLE, MARK, MARK_REQ, MISSING, Model, Msg,
    PROPOSE, PROPOSING, REPAIR, State, is_counter, key_text,
};
use yaraus_models::seq_model::{N, node_name, proposer_name};

/// What a step asks a node besides its own script: a live round's read,
/// or a request the model says changes nothing now.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Probe {
    /// read.lua, for process `by`'s live read; `heal`: a heal pass's first
    /// read, which also asks a marked node whether it is ripe.
    Read { node: u8, by: u8, heal: bool },
    /// A request in flight (or just forgotten by the model) that writes
    /// nothing, run now.
    Idle(Msg),
}

impl fmt::Debug for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Probe::Read { node, by, heal } => {
                let pass = if heal { "heal pass's " } else { "" };
                write!(f, "{}: {}'s {pass}read", node_name(node), proposer_name(by))
            }
            Probe::Idle(x) => {
                let what = match x.kind() {
                    PROPOSE => format!("proposal {}", x.val()),
                    MARK_REQ => "MARK".to_string(),
                    _ => format!("REPAIR of {} to {}", key_text(MARK + x.who()), x.val()),
                };
                write!(f, "{}: {what}", node_name(x.node()))
            }
        }
    }
}

/// A step's answers: the step's own script, and every probe's.
#[derive(Debug, PartialEq, Eq)]
pub struct Step {
    pub script: Option<Reply>,
    pub probes: Vec<(Probe, Vec<Reply>)>,
}

/// How often the walks reached what the planted mistakes need, printed
/// (and the first asserted) so that a plan that stops reaching them shows.
#[derive(Debug, Default)]
pub struct Reached {
    /// Repairs executed.
    pub repairs: usize,
    /// Proposals probed on a node already holding their value.
    pub equal_refusals: usize,
    /// Repairs probed on a node that holds a counter.
    pub repairs_over_counters: usize,
    /// Probes compared, in all.
    pub probes: usize,
}

pub struct Timed {
    model: Steered<Model>,
    key: String,
    marks: Marks,
    tokens: u64,
    pub reached: Reached,
}

impl Timed {
    pub fn new(model: Model, key: String) -> Timed {
        Timed {
            model: Steered { model, fruitful },
            key,
            marks: Marks::default(),
            tokens: 0,
            reached: Reached::default(),
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

    fn after(&self, before: &State, e: Event) -> State {
        self.model
            .apply(before, e, None)
            .expect("the walk takes steps the model allows")
    }

    /// The probes after `e`: every live read, and every request in flight
    /// or forgotten in this step that the model says changes nothing.
    fn probes(&self, before: &State, e: Event, after: &State) -> Vec<Probe> {
        if after.violation.is_some() {
            return Vec::new();
        }
        let mut probes = Vec::new();
        for (p, pr) in after.p.iter().enumerate() {
            if pr.phase != IDLE && pr.phase != PROPOSING {
                for n in 0..N as u8 {
                    let heal = pr.phase == HEAL_READ;
                    let by = p as u8;
                    probes.push(Probe::Read { node: n, by, heal });
                }
            }
        }
        let idle = in_flight(after).into_iter().filter(|&x| {
            self.model
                .model
                .apply(after, Event::Execute(x), None)
                .is_none()
        });
        probes.extend(
            idle.chain(forgotten(self.m(), before, e, after))
                .map(Probe::Idle),
        );
        probes.sort_unstable();
        probes.dedup();
        probes
    }

    /// What the model says a probe answers in `s`.
    fn foresee(&self, s: &State, probe: Probe) -> Vec<Reply> {
        match probe {
            Probe::Read { node, by, heal } => self.foresee_read(s, node, by, heal),
            Probe::Idle(x) => vec![self.foresee_idle(s, x)],
        }
    }

    /// A read's reply, from the model's own `note` (the reply the node
    /// gives the live round now).
    fn foresee_read(&self, s: &State, n: u8, p: u8, heal: bool) -> Vec<Reply> {
        let (n, p) = (usize::from(n), usize::from(p));
        let mut t = *s;
        t.p[p].hist[n] = 0;
        t.note(self.m(), p, n);
        let bit = t.p[p].hist[n];
        let counters = bit & ((1 << H_SPAN) - 1);
        if counters != 0 {
            let held = u64::from(self.m().base) + u64::from(counters.trailing_zeros());
            return vec![Reply::Holds(held)];
        }
        if bit & H_MISSING != 0 {
            return vec![Reply::Lacks(Key::Missing)];
        }
        let k = s.nodes[n];
        let lacks = Reply::Lacks(key(k));
        if !heal || !(MARK..MISSING).contains(&k) {
            return vec![lacks];
        }
        // The note of a quarantined mark is no reply: the code's `ripe`
        // request says how long is left.
        if bit & (H_RIPE << (k - MARK)) != 0 {
            vec![lacks, Reply::Ripe(key(k))]
        } else {
            vec![lacks, Reply::Quarantined]
        }
    }

    /// The reply of a request that writes nothing, by the scripts'
    /// contracts, from the key the model gives the node.
    fn foresee_idle(&self, s: &State, x: Msg) -> Reply {
        let n = usize::from(x.node());
        let k = s.nodes[n];
        match x.kind() {
            PROPOSE if is_counter(k) && k >= x.val() => Reply::Refused(u64::from(k)),
            PROPOSE if is_counter(k) => Reply::Writes("a proposal above the counter"),
            PROPOSE => Reply::NoVote,
            MARK_REQ if k == MISSING => Reply::Writes("a mark of a missing key"),
            MARK_REQ => Reply::Else(key(k)),
            _ if k == MARK + x.who() && s.ripe(self.m(), n) => {
                Reply::Writes("a repair of its ripe mark")
            }
            _ if k == MARK + x.who() => Reply::Quarantined,
            _ => Reply::Else(key(k)),
        }
    }

    /// Runs a probe on its node, in `s` (for the quarantine argument).
    fn ask(&mut self, nodes: &mut Nodes, s: &State, probe: Probe) -> Vec<Reply> {
        self.reached.probes += 1;
        let m = self.m();
        match probe {
            Probe::Read { node, heal, .. } => {
                let ripe = s.ripe(m, usize::from(node));
                let mut at = self.node(nodes, node);
                let (reply, text) = at.read();
                if heal && text.starts_with("healing:") {
                    vec![reply, at.ripe(&text, ripe)]
                } else {
                    vec![reply]
                }
            }
            Probe::Idle(x) => {
                self.count_reached(s, x);
                vec![self.request(nodes, s, x)]
            }
        }
    }

    fn count_reached(&mut self, s: &State, x: Msg) {
        let k = s.nodes[usize::from(x.node())];
        match x.kind() {
            PROPOSE if k == x.val() => self.reached.equal_refusals += 1,
            REPAIR if is_counter(k) => self.reached.repairs_over_counters += 1,
            _ => {}
        }
    }

    /// Runs request `x` on its node, as the code sends it.
    fn request(&mut self, nodes: &mut Nodes, s: &State, x: Msg) -> Reply {
        let n = usize::from(x.node());
        // A repair is sent only for a mark read ripe, and ripeness only
        // grows: a mark the node no longer holds is ripe.
        let ripe = x.kind() == REPAIR && (s.nodes[n] != MARK + x.who() || s.ripe(self.m(), n));
        let mark = self.marks.text(x.who());
        self.tokens += 1;
        let token = format!("{:032x}", self.tokens);
        let mut at = self.node(nodes, x.node());
        match x.kind() {
            PROPOSE => at.propose(u64::from(x.val())),
            MARK_REQ => at.mark(&token).0,
            _ => at.repair(&mark, u64::from(x.val()), ripe),
        }
    }
}

impl Replay for Timed {
    type Model = Steered<Model>;
    type Answer = Step;
    type Projection = [Key; N];

    fn name(&self) -> String {
        format!("the quarantined repair ({:?})", self.m().rules)
    }

    fn model(&self) -> &Steered<Model> {
        &self.model
    }

    fn nodes(&self) -> usize {
        N
    }

    fn setup(&mut self, nodes: &mut Nodes, initial: &State) {
        self.marks.clear();
        for (n, &k) in initial.nodes.iter().enumerate() {
            assert!(is_counter(k), "the model starts from holders");
            let _: () = redis::cmd("SET")
                .arg(&self.key)
                .arg(k)
                .query(nodes.conn(n))
                .expect("SET");
        }
    }

    fn expected(&self, before: &State, e: Event, after: &State) -> Option<Step> {
        let script = match e {
            Event::Execute(x) => Some(match x.kind() {
                PROPOSE => Reply::Accepted(u64::from(x.val())),
                MARK_REQ => Reply::Marked(key(after.nodes[usize::from(x.node())])),
                _ => Reply::Repaired(u64::from(x.val())),
            }),
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
        let after = self.after(before, e);
        let script = match e {
            Event::Lose(n) => {
                let _: () = redis::cmd("FLUSHALL")
                    .query(nodes.conn(usize::from(n)))
                    .expect("FLUSHALL");
                None
            }
            Event::Execute(x) if x.kind() == MARK_REQ => {
                self.tokens += 1;
                let token = format!("{:032x}", self.tokens);
                let (reply, text) = self.node(nodes, x.node()).mark(&token);
                if !text.is_empty() {
                    // The mark is named after the loss that emptied the node.
                    self.marks.register(before.losses - 1, &text);
                }
                Some(match reply {
                    Reply::Marked(_) => Reply::Marked(self.marks.key(&text)),
                    other => other,
                })
            }
            Event::Execute(x) => {
                if x.kind() == REPAIR {
                    self.reached.repairs += 1;
                }
                Some(self.request(nodes, before, x))
            }
            _ => None,
        };
        let probes = self.probes(before, e, &after);
        let probes = probes
            .into_iter()
            .map(|p| (p, self.ask(nodes, &after, p)))
            .collect();
        Some(Step { script, probes })
    }

    fn project(&self, s: &State) -> [Key; N] {
        s.nodes.map(key)
    }

    fn observe(&mut self, nodes: &mut Nodes) -> [Key; N] {
        std::array::from_fn(|n| self.node(nodes, n as u8).get())
    }
}

/// Whether `e` does something a walk should favour: anything but a
/// decision that ends its pass or call having sent nothing.
pub fn fruitful(_: &Model, s: &State, e: Event, after: &State) -> bool {
    let p = match e {
        Event::Decide(p, _) => p,
        Event::Execute(x) => return x.kind() != REPAIR,
        _ => return true,
    };
    let sends = |s: &State| in_flight(s).iter().filter(|x| x.kind() != PROPOSE).count();
    after.p[usize::from(p)].phase != IDLE || after.handed != s.handed || sends(after) > sends(s)
}

/// The model's key, in the replies' words.
fn key(k: u8) -> Key {
    match k {
        MISSING => Key::Missing,
        k if k >= MARK => Key::Mark(k - MARK),
        k => Key::Counter(u64::from(k)),
    }
}

fn in_flight(s: &State) -> Vec<Msg> {
    s.msgs[..usize::from(s.len)].to_vec()
}

/// The requests the model forgot in step `e` (it keeps only those that
/// may still change a node): gone from `after` without being executed
/// or counted. A proposal's round ending changes only whose it is, so
/// proposals are compared without it.
fn forgotten(m: &Model, before: &State, e: Event, after: &State) -> Vec<Msg> {
    let unowned = |x: Msg| if x.kind() == PROPOSE { x.stale() } else { x };
    let mut gone: Vec<Msg> = match e {
        Event::Decide(p, codes) => {
            // What the decision sent and counted, before the model forgets.
            let mut sent = *before;
            sent.decide(m, usize::from(p), codes, false);
            in_flight(&sent)
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
    let mut gone: Vec<Msg> = gone.into_iter().map(unowned).collect();
    gone.sort_unstable();
    for x in in_flight(after).into_iter().map(unowned) {
        if let Ok(at) = gone.binary_search(&x) {
            gone.remove(at);
        }
    }
    gone
}
