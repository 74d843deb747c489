//! The steps of the `birth` model: what each event does, the events
//! possible in a state, and the model as a `System` for the explorer.

use super::state::{Verdict, read_keys, verdict};
use super::*;
use crate::seq_model::explorer::{System, say};
use crate::seq_model::in_flight::InFlight;
use crate::seq_model::{MAJORITY, proposer_name};

impl State {
    pub fn apply(&self, m: &Model, e: Event, log: Option<&mut String>) -> Option<State> {
        if self.violation.is_some() {
            return None;
        }
        let describe = log.is_some();
        let mut s = *self;
        let text = match e {
            Event::Tick => {
                let expired = s.tick(m);
                if s == *self {
                    return None;
                }
                let what = (0..PROPOSERS as u8)
                    .filter(|p| expired & (1 << p) != 0)
                    .map(|p| say!(describe, "; {}'s round expires", proposer_name(p)))
                    .collect::<String>();
                say!(describe, "-- tick --{what}")
            }
            Event::Lose(n) => {
                let nu = usize::from(n);
                let others = s.lost & !(1 << n);
                if s.losses >= m.losses || s.nodes[nu] == MISSING || (m.minority && others != 0) {
                    return None;
                }
                s.nodes[nu] = MISSING;
                s.age[nu] = 0;
                s.lost |= 1 << n;
                s.losses += 1;
                s.touch(m, nu);
                say!(describe, "{} loses its data", name(nu))
            }
            Event::Execute(x) => s.execute(m, x, describe)?,
            Event::Attempt(p) => {
                let pu = usize::from(p);
                let pr = &mut s.p[pu];
                if pr.phase != IDLE || pr.attempts >= m.attempts[pu] {
                    return None;
                }
                pr.attempts += 1;
                if pr.floor == MISSING {
                    s.start_round(m, pu, READING, false);
                    say!(describe, "{} reads every node", proposer_name(p))
                } else {
                    let v = pr.floor + 1;
                    assert!(v < VALUES, "values outgrew the model");
                    pr.value = v;
                    s.start_round(m, pu, PROPOSING, false);
                    say!(describe, "{} proposes {v}", proposer_name(p))
                }
            }
            Event::Decide(p, codes) => {
                let pu = usize::from(p);
                if s.p[pu].phase == IDLE {
                    return None;
                }
                for (n, &c) in codes.iter().enumerate() {
                    if !s.options(pu, n).contains(&c) {
                        return None;
                    }
                }
                s.decide(m, pu, codes, describe)
            }
        };
        s.normalize(m);
        if let Some(out) = log {
            *out = text;
        }
        Some(s)
    }

    fn execute(&mut self, m: &Model, x: Msg, describe: bool) -> Option<String> {
        let n = usize::from(x.node);
        let k = self.nodes[n];
        let new = match x.kind {
            READ if k == MISSING => {
                self.gens[n] += 1;
                unborn(0, self.gens[n] - 1)
            }
            PROPOSE if holder(k) && k < x.a => x.a,
            PREP if k == x.a => PREPARED + x.b,
            SETTLE if k == PREPARED + x.a && self.settles(m, n) => 0,
            ROLLBACK if k == PREPARED + x.a && self.ripe(m, n) => {
                self.gens[n] += 1;
                unborn(x.a + 1, self.gens[n] - 1)
            }
            _ => return None,
        };
        if !self.remove(x) {
            return None;
        }
        let before = say!(describe, "{}", node_text(self, n));
        self.nodes[n] = new;
        self.age[n] = 0;
        if holder(new) {
            self.lost &= !(1 << n);
        }
        match x.kind {
            SETTLE => self.mixed |= self.rolled & (1 << x.a) != 0,
            ROLLBACK => {
                self.rolled |= 1 << x.a;
                self.mixed |= self.nodes.iter().any(|&k| holder(k));
            }
            _ => {}
        }
        if x.kind == PROPOSE && x.who != NONE {
            let pr = &mut self.p[usize::from(x.who)];
            pr.accepted |= 1 << n;
            pr.pending &= !(1 << n);
            pr.hist[n] = 0;
        }
        self.touch(m, n);
        let what = match x.kind {
            READ => "READ marks",
            PROPOSE => "accepts a proposal",
            PREP => "PREPARE",
            SETTLE => "SETTLE",
            _ => "ROLLBACK",
        };
        let late = if x.who == NONE && x.kind != SETTLE && x.kind != ROLLBACK {
            " (late)"
        } else {
            ""
        };
        Some(say!(
            describe,
            "{} executes {what}{late}: {before} -> {}",
            name(n),
            key_text(new)
        ))
    }

    fn decide(&mut self, m: &Model, p: usize, codes: [u8; N], describe: bool) -> String {
        let pr = self.p[p];
        let who = proposer_name(p as u8);
        let shown = (0..N)
            .filter(|&n| describe && codes[n] != R_NONE)
            .map(|n| format!("{} {}", name(n), code_text(pr.phase, codes[n], pr.value)))
            .collect::<Vec<_>>()
            .join(", ");
        let head = say!(
            describe,
            "{who} decides (age {}), counting [{shown}]",
            pr.age
        );
        let outcome = match pr.phase {
            READING => self.decide_read(m, p, codes, describe),
            PREPARING => {
                self.end_round(p);
                if codes.iter().all(|&c| c == B_OK) {
                    for n in 0..N as u8 {
                        self.push(Msg {
                            kind: SETTLE,
                            node: n,
                            who: NONE,
                            a: pr.id,
                            b: 0,
                        });
                    }
                    say!(describe, "every node prepared: sends SETTLE to each")
                } else {
                    say!(describe, "not every node prepared: gives up")
                }
            }
            _ => self.decide_proposal(p, pr, codes, describe),
        };
        say!(describe, "{head}: {outcome}")
    }

    fn decide_read(&mut self, m: &Model, p: usize, codes: [u8; N], describe: bool) -> String {
        let (keys, ripe) = read_keys(codes);
        for (n, &c) in codes.iter().enumerate() {
            if c != R_NONE {
                let read = Msg {
                    kind: READ,
                    node: n as u8,
                    who: p as u8,
                    a: 0,
                    b: 0,
                };
                self.remove(read);
            }
        }
        let age = self.p[p].age;
        self.end_round(p);
        let verdict = verdict(&m.rules, keys, ripe);
        if age > round_ticks() && !matches!(verdict, Verdict::Rollback(_)) {
            return say!(
                describe,
                "past its lifetime: decides nothing but a rollback"
            );
        }
        match verdict {
            Verdict::Floor(f) => {
                self.p[p].floor = f;
                self.p[p].value = f + 1;
                self.start_round(m, p, PROPOSING, false);
                say!(describe, "floor {f}; proposes {}", f + 1)
            }
            Verdict::Create => {
                let id = self.intern(keys);
                self.p[p].id = id;
                self.p[p].age = age;
                self.start_round(m, p, PREPARING, m.rules.creator_bound);
                say!(describe, "every node a mark: PREPARE X{} on each", id + 1)
            }
            Verdict::Adopt(x) => {
                for n in 0..N as u8 {
                    self.push(Msg {
                        kind: SETTLE,
                        node: n,
                        who: NONE,
                        a: x,
                        b: 0,
                    });
                }
                say!(describe, "X{} prepared everywhere: SETTLE on each", x + 1)
            }
            Verdict::Rollback(mask) => {
                for n in (0..N).filter(|n| mask & (1 << n) != 0) {
                    self.push(Msg {
                        kind: ROLLBACK,
                        node: n as u8,
                        who: NONE,
                        a: keys[n] - PREPARED,
                        b: 0,
                    });
                }
                say!(describe, "sends ROLLBACK to every prepared node")
            }
            Verdict::Nothing => say!(describe, "nothing allowed: the attempt fails"),
        }
    }

    fn decide_proposal(&mut self, p: usize, pr: Proc, codes: [u8; N], describe: bool) -> String {
        let (mut accepted, mut voters, mut none) = (0, 0, false);
        let observe = |f: &mut u8, c: u8| {
            if *f == MISSING || c > *f {
                *f = c;
            }
        };
        for (n, &c) in codes.iter().enumerate() {
            match c {
                R_NONE => continue,
                R_ACCEPTED => {
                    accepted += 1;
                    voters += 1;
                    continue;
                }
                B_NONE => none = true,
                c => {
                    voters += 1;
                    observe(&mut self.p[p].floor, c);
                }
            }
            self.remove(Msg {
                kind: PROPOSE,
                node: n as u8,
                who: p as u8,
                a: pr.value,
                b: 0,
            });
        }
        self.end_round(p);
        let v = pr.value;
        if accepted > 0 {
            observe(&mut self.p[p].floor, v);
        }
        if accepted >= MAJORITY {
            let bit = 1 << v;
            if self.handed & bit != 0 {
                self.violation = Some(Violation::Duplicate(v));
            }
            self.handed |= bit;
            return say!(describe, "HANDS OUT {v}");
        }
        if voters < MAJORITY && none {
            self.p[p].floor = MISSING;
        }
        say!(describe, "no majority accepted {v}")
    }
}

fn code_text(phase: u8, c: u8, value: u8) -> String {
    match (phase, c) {
        (_, R_ACCEPTED) => format!("accepted {value}"),
        (PREPARING, _) => "prepared".into(),
        (PROPOSING, B_NONE) => "no counter".into(),
        (PROPOSING, c) => format!("refused at {c}"),
        (_, 0..8) => c.to_string(),
        (_, 8..14) => format!("creating:X{}", c - 7),
        (_, 14..20) => format!("creating:X{} ripe", c - 13),
        (_, c) => key_text(unborn((c - 20) / 6, (c - 20) % 6)),
    }
}

pub fn candidates(m: &Model, s: &State, out: &mut Vec<Event>) {
    out.clear();
    out.push(Event::Tick);
    for n in 0..N as u8 {
        out.push(Event::Lose(n));
    }
    for p in 0..PROPOSERS {
        let pu = p as u8;
        out.push(Event::Attempt(pu));
        match s.p[p].phase {
            IDLE => {}
            PREPARING => {
                out.push(Event::Decide(pu, [B_OK; N]));
                out.push(Event::Decide(pu, [R_NONE; N]));
            }
            _ => {
                let o: [Vec<u8>; N] = std::array::from_fn(|n| s.options(p, n));
                for &a in &o[0] {
                    for &b in &o[1] {
                        for &c in &o[2] {
                            out.push(Event::Decide(pu, [a, b, c]));
                        }
                    }
                }
            }
        }
    }
    let msgs = s.msgs();
    for (i, &x) in msgs.iter().enumerate() {
        if i == 0 || msgs[i - 1] != x {
            out.push(Event::Execute(x));
        }
    }
    let _ = m;
}

impl System for Model {
    type State = State;
    type Event = Event;
    type Violation = Violation;

    fn rules(&self) -> String {
        format!(
            "{} (T {} ticks, Qc {} ticks)",
            self.rules.name,
            round_ticks(),
            rollback_ticks(&self.rules)
        )
    }
    fn initial(&self) -> State {
        State::initial(self)
    }
    fn candidates(&self, s: &State, out: &mut Vec<Event>) {
        candidates(self, s, out);
    }
    fn apply(&self, s: &State, e: Event, log: Option<&mut String>) -> Option<State> {
        s.apply(self, e, log)
    }
    fn violation(&self, s: &State) -> Option<Violation> {
        s.violation
    }
    fn counted_name(&self) -> &'static str {
        "values handed out in a run"
    }
    fn counted(&self, s: &State) -> u32 {
        (s.handed & !self.start.handed).count_ones()
    }
    fn goal(&self, s: &State) -> bool {
        self.goal.is_some_and(|g| g(self, s))
    }
    fn limit(&self) -> usize {
        self.limit
    }
    fn start(&self) -> String {
        let s = State::initial(self);
        format!(
            "start: [{}]; a round lives {} ticks, a prepared state is ripe after {}",
            (0..N)
                .map(|n| node_text(&s, n))
                .collect::<Vec<_>>()
                .join(", "),
            round_ticks(),
            rollback_ticks(&self.rules)
        )
    }
    fn show(&self, s: &State) -> String {
        format!(
            "[{}]",
            (0..N)
                .map(|n| node_text(s, n))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}
