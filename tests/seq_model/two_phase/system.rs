//! The `TwoPhase` model as a `System` for the explorer: the events possible
//! in a state (the decisions worth taking among them), and what each event
//! does, in words when narrated.

use super::step::eligible_under;
use super::*;
use crate::seq_model::explorer::{System, Violation, say};
use crate::seq_model::{MAJORITY, node_name, proposer_name};

/// The options of one node in a decision: R_NONE, then its history bits.
fn options(h: u64) -> Vec<u8> {
    let mut out = vec![R_NONE];
    let mut bits = h;
    while bits != 0 {
        out.push(bits.trailing_zeros() as u8);
        bits &= bits - 1;
    }
    out
}

/// The decisions worth taking for p: those whose outcome depends on every
/// reply counted (a reply left out was lost; its request may still arrive).
fn decisions(m: &TwoPhase, s: &State, p: usize, out: &mut Vec<Event>) {
    let pr = &s.p[p];
    let who = p as u8;
    out.push(Event::Decide(who, [R_NONE; N]));
    let opts: [Vec<u8>; N] = std::array::from_fn(|n| options(pr.hist[n]));
    if pr.phase == CREATING {
        if pr.hist.iter().all(|h| h & 1 << B_OK != 0) {
            out.push(Event::Decide(who, [B_OK; N]));
        }
        return;
    }
    for &a in &opts[0] {
        for &b in &opts[1] {
            for &c in &opts[2] {
                let codes = [a, b, c];
                if codes == [R_NONE; N] {
                    continue;
                }
                let worth = if pr.phase == READING {
                    let cells = codes.map(|x| {
                        if x == R_NONE {
                            MISSING
                        } else {
                            read_cell(m.base, x)
                        }
                    });
                    let holders = cells.iter().filter(|&&c| holder(c)).count();
                    let chosen = codes.iter().filter(|&&x| x != R_NONE).count();
                    (holders >= MAJORITY && holders == chosen)
                        || (holders < MAJORITY
                            && chosen == N
                            && eligible_under(m.creation_ids, &cells))
                } else {
                    let accepted = codes.iter().filter(|&&x| x == B_ACCEPTED).count();
                    accepted < MAJORITY || codes.iter().all(|&x| x == B_ACCEPTED || x == R_NONE)
                };
                if worth {
                    out.push(Event::Decide(who, codes));
                }
            }
        }
    }
}

impl System for TwoPhase {
    type State = State;
    type Event = Event;
    type Violation = Violation;

    fn rules(&self) -> String {
        match self.creation_ids {
            CreationIds::Greatest => "TwoPhase".to_string(),
            CreationIds::OfView => "TwoPhase (ids of views)".to_string(),
            CreationIds::Final => "TwoPhase (final rule)".to_string(),
        }
    }

    fn initial(&self) -> State {
        let idle = Proposer {
            calls: 0,
            in_call: false,
            rounds: 0,
            phase: IDLE,
            value: 0,
            floor: MISSING,
            start_max: 0,
            id: 0,
            view: [0; N],
            pending: 0,
            hist: [0; N],
        };
        let mut p = [idle; PROPOSERS];
        for (pr, floor) in p.iter_mut().zip(self.floors) {
            pr.floor = floor.unwrap_or(MISSING);
        }
        let mut s = State {
            nodes: self.initial,
            losses: u8::from(self.lost_before.is_some()),
            lost: self.lost_before.unwrap_or(NONE),
            tokens: 0,
            handed: self.handed_before.map_or(0, |v| self.handed_bit(v)),
            violation: None,
            p,
            len: 0,
            msgs: [EMPTY; CAP],
            views: [NO_VIEW; VIEWS],
            names: State::initial_names(0),
        };
        s.normalize(s.losses >= self.losses);
        s.names = State::initial_names(s.tokens);
        s
    }

    fn candidates(&self, s: &State, out: &mut Vec<Event>) {
        out.clear();
        for n in 0..N as u8 {
            out.push(Event::Lose(n));
        }
        for p in 0..PROPOSERS {
            out.push(Event::StartCall(p as u8));
            if s.p[p].phase != IDLE {
                decisions(self, s, p, out);
            }
        }
        let msgs = s.msgs();
        for (i, &x) in msgs.iter().enumerate() {
            if i > 0 && msgs[i - 1] == x {
                continue;
            }
            if x.kind == READ && x.a >= UNRANKED {
                // Under `OfView` the order of tokens plays no part: one
                // rank stands for all.
                let ranks = match self.creation_ids {
                    CreationIds::Greatest => s.tokens,
                    CreationIds::OfView | CreationIds::Final => 0,
                };
                for r in 0..=ranks {
                    out.push(Event::Execute(x, r));
                }
            } else {
                out.push(Event::Execute(x, 0));
            }
        }
    }

    fn apply(&self, s: &State, e: Event, log: Option<&mut String>) -> Option<State> {
        if s.violation.is_some() {
            return None;
        }
        let describe = log.is_some();
        let mut s = *s;
        let text = match e {
            Event::Lose(n) => {
                let nu = usize::from(n);
                let back = s.lost == NONE || holder(s.nodes[usize::from(s.lost)]);
                if s.losses >= self.losses || s.nodes[nu] == MISSING || !back {
                    return None;
                }
                if self.frozen == Some(n) {
                    return None;
                }
                s.nodes[nu] = MISSING;
                s.losses += 1;
                s.lost = n;
                if self.loss_resets_connections {
                    s.retain(|_, x| x.node != n);
                    for pr in &mut s.p {
                        pr.pending &= !(1 << n);
                    }
                }
                s.touch(self, nu);
                say!(describe, "{} loses its data (key MISSING)", node_name(n))
            }
            Event::Execute(x, r) => {
                let n = usize::from(x.node);
                let c = s.nodes[n];
                let i = s.msgs().iter().position(|&y| y == x)?;
                let writes = match x.kind {
                    READ => c == MISSING && (x.a >= UNRANKED || r == 0) && r <= s.tokens,
                    PROPOSE => holder(c) && c < x.a && r == 0,
                    _ => c == x.a && x.a != x.b && r == 0,
                };
                if !writes || self.frozen == Some(x.node) {
                    return None;
                }
                s.remove_at(i);
                let (new, bit) = match x.kind {
                    READ => {
                        let t = if x.a >= UNRANKED {
                            s.rank(x.a - UNRANKED, r)
                        } else {
                            x.a
                        };
                        let new = mark(t);
                        (new, read_bit(self.base, new))
                    }
                    PROPOSE => (x.a, B_ACCEPTED),
                    _ => (x.b, B_OK),
                };
                s.nodes[n] = new;
                if x.who != NONE {
                    let pr = &mut s.p[usize::from(x.who)];
                    pr.pending &= !(1 << n);
                    pr.hist[n] = 1 << bit;
                }
                s.touch(self, n);
                if describe {
                    describe_execute(self, &s, x, c, new)
                } else {
                    String::new()
                }
            }
            Event::StartCall(p) => {
                let pu = usize::from(p);
                let start_max = self.max_handed(&s);
                let pr = &mut s.p[pu];
                if pr.phase != IDLE || pr.calls >= self.calls {
                    return None;
                }
                let gave_up = pr.in_call;
                pr.in_call = true;
                pr.calls += 1;
                pr.rounds = 0;
                pr.start_max = start_max;
                let calls = pr.calls;
                let first = s.next_round(self, pu, describe);
                say!(
                    describe,
                    "{}{} starts call {calls} (highest value handed out so far: {start_max}); {first}",
                    if gave_up { "gives up its call; " } else { "" },
                    proposer_name(p),
                )
            }
            Event::Decide(p, codes) => {
                let pu = usize::from(p);
                let pr = &s.p[pu];
                if pr.phase == IDLE {
                    return None;
                }
                for (n, &code) in codes.iter().enumerate() {
                    if code != R_NONE && (code > 63 || pr.hist[n] & 1 << code == 0) {
                        return None;
                    }
                }
                s.decide(self, pu, codes, describe)
            }
        };
        s.normalize(s.losses >= self.losses);
        if let Some(out) = log {
            *out = text;
        }
        Some(s)
    }

    fn canon(&self, s: State) -> State {
        if !self.symmetric() {
            return s;
        }
        let mut t = s.mirrored();
        t.normalize(t.losses >= self.losses);
        s.min(t)
    }

    fn violation(&self, s: &State) -> Option<Violation> {
        s.violation
    }

    fn counted_name(&self) -> &'static str {
        "values handed out in a run"
    }

    fn counted(&self, s: &State) -> u32 {
        s.handed.count_ones() - u32::from(self.handed_before.is_some())
    }

    fn goal(&self, s: &State) -> bool {
        self.goal.is_some_and(|g| g(s))
    }

    fn limit(&self) -> usize {
        self.limit
    }

    fn start(&self) -> String {
        let s = self.initial();
        format!(
            "start: keys {}, handed out before: {}",
            self.show(&s),
            self.handed_before
                .map_or("nothing".to_string(), |v| v.to_string())
        )
    }

    fn show(&self, s: &State) -> String {
        let keys = s.nodes.map(|c| s.cell_text(c)).join(", ");
        if s.tokens >= 2 && self.creation_ids == CreationIds::Greatest {
            format!("[{keys}] ({})", s.order_text())
        } else {
            format!("[{keys}]")
        }
    }
}

/// A write, in words (the state after it, the key before it).
fn describe_execute(m: &TwoPhase, s: &State, x: Msg, before: u8, after: u8) -> String {
    let from = if x.who == NONE {
        "a".to_string()
    } else {
        format!("{}'s", proposer_name(x.who))
    };
    let request = match x.kind {
        READ => format!("{from} READ (token {})", s.token_name(token(after))),
        PROPOSE => format!("{from} proposal {}", x.a),
        _ => format!("{from} CAS({} -> {})", s.cell_text(x.a), s.cell_text(x.b)),
    };
    let _ = m;
    format!(
        "{} executes {request}: {} -> {}",
        node_name(x.node),
        s.cell_text(before),
        s.cell_text(after)
    )
}
