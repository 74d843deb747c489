//! The steps of the `timed` model: what each event does (`apply`, and
//! `decide` for a process's decision), the events possible in a state
//! (`candidates`), and the model as a `System` for the explorer.

use super::state::Options;
use super::*;
use crate::seq_model::explorer::{System, say};
use crate::seq_model::in_flight::InFlight;
use crate::seq_model::{MAJORITY, proposer_name};

impl State {
    /// The state after `e`, or None when `e` is not possible here. `log`
    /// receives what happened, in words, when given.
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
                let others_hold = (0..N).all(|o| o == nu || is_counter(s.nodes[o]));
                if s.losses >= m.losses || s.nodes[nu] == MISSING || !others_hold {
                    return None;
                }
                s.nodes[nu] = MISSING;
                s.losses += 1;
                s.touch(m, nu);
                say!(describe, "{} loses its data (key MISSING)", node_name(n))
            }
            Event::Execute(x) => s.execute(m, x, describe)?,
            Event::StartCall(_) | Event::Attempt(_) | Event::StartPass(_) => {
                s.start(m, e, describe)?
            }
            Event::Decide(p, codes) => {
                let pu = usize::from(p);
                if s.p[pu].phase == IDLE {
                    return None;
                }
                for (n, &code) in codes.iter().enumerate() {
                    if !s.options(m, pu, n).codes().contains(&code) {
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

    /// A process starts something: a call (and its first attempt), another
    /// attempt, or a heal pass; None when it cannot now.
    fn start(&mut self, m: &Model, e: Event, describe: bool) -> Option<String> {
        Some(match e {
            Event::StartCall(p) => {
                let pu = usize::from(p);
                let start_max = self.max_handed(m);
                let pr = &mut self.p[pu];
                if pr.phase != IDLE || pr.calls >= m.calls[pu] || (pr.in_call && pr.attempts == 0) {
                    return None;
                }
                let gave_up = pr.in_call;
                pr.in_call = true;
                pr.calls += 1;
                pr.attempts = 0;
                pr.start_max = start_max;
                let (calls, start_max) = (pr.calls, pr.start_max);
                let first = self.attempt(m, pu, describe);
                say!(
                    describe,
                    "{}{} starts call {calls} (highest handed out so far: {start_max}); {first}",
                    if gave_up { "gives up its call; " } else { "" },
                    proposer_name(p),
                )
            }
            Event::Attempt(p) => {
                let pu = usize::from(p);
                let pr = &self.p[pu];
                if !pr.in_call || pr.phase != IDLE || pr.attempts >= m.attempts {
                    return None;
                }
                let what = self.attempt(m, pu, describe);
                say!(describe, "{} tries again: {what}", proposer_name(p))
            }
            Event::StartPass(p) => {
                let pu = usize::from(p);
                let lacking = self.nodes.iter().any(|&k| !is_counter(k));
                if self.p[pu].phase != IDLE
                    || self.p[pu].passes >= m.passes[pu]
                    || (m.heal_when_lacking && !lacking)
                {
                    return None;
                }
                self.p[pu].passes += 1;
                self.start_round(m, pu, HEAL_READ);
                say!(
                    describe,
                    "{} starts a heal pass: reads every node",
                    proposer_name(p)
                )
            }
            _ => unreachable!("not a start"),
        })
    }

    /// The node executes x, if that changes it.
    fn execute(&mut self, m: &Model, x: Msg, describe: bool) -> Option<String> {
        let n = usize::from(x.node());
        let k = self.nodes[n];
        let changes = match x.kind() {
            PROPOSE => is_counter(k) && k < x.val(),
            MARK_REQ => k == MISSING,
            _ => k == MARK + x.who() && self.ripe(m, n),
        };
        if !changes || !self.remove(x) {
            return None;
        }
        let new = match x.kind() {
            MARK_REQ => {
                self.mark_age = 0;
                MARK + self.losses - 1
            }
            _ => x.val(),
        };
        self.nodes[n] = new;
        if x.kind() == PROPOSE && x.who() != NONE {
            // Accepted: it was not refused before, nor found no counter.
            let pr = &mut self.p[usize::from(x.who())];
            pr.accepted |= 1 << n;
            pr.pending &= !(1 << n);
            pr.hist[n] = 0;
        }
        self.touch(m, n);
        if !describe {
            return Some(String::new());
        }
        let what = match x.kind() {
            PROPOSE => format!(
                "{}proposal {}{}: accepts ({} -> {})",
                if x.who() == NONE {
                    "a ".to_string()
                } else {
                    format!("{}'s ", proposer_name(x.who()))
                },
                x.val(),
                if x.who() == NONE {
                    " (late: its round is over)"
                } else {
                    ""
                },
                key_text(k),
                x.val()
            ),
            MARK_REQ => format!(
                "MARK: {} -> {} (quarantine starts)",
                key_text(k),
                key_text(new)
            ),
            _ => format!(
                "REPAIR to {}: {} -> {} (ripe)",
                x.val(),
                key_text(k),
                x.val()
            ),
        };
        Some(format!("{} executes {what}", node_name(x.node())))
    }

    /// Starts an attempt of p's call: read if no floor is known, else
    /// propose floor + 1.
    pub fn attempt(&mut self, m: &Model, p: usize, describe: bool) -> String {
        self.p[p].attempts += 1;
        if self.p[p].floor == MISSING {
            self.start_round(m, p, READING);
            say!(describe, "knows no floor: reads every node")
        } else {
            self.propose(m, p);
            say!(describe, "proposes {} to every node", self.p[p].value)
        }
    }

    /// What p counts in `codes`; a refusal's floor is observed, and a
    /// proposal counted as refused is spent.
    fn tally(&mut self, p: usize, pr: Proc, codes: [u8; N]) -> Tally {
        let mut t = Tally {
            holders: 0,
            highest: 0,
            accepted: 0,
            voters: 0,
            missing: 0,
            ripe: None,
        };
        for (n, &c) in codes.iter().enumerate() {
            match c {
                R_NONE => {}
                R_ACCEPTED => {
                    t.accepted += 1;
                    t.voters += 1;
                }
                R_MISSING => t.missing |= 1 << n,
                c if c >= R_RIPE => t.ripe = Some((n as u8, MARK + (c - R_RIPE))),
                c if pr.phase == PROPOSING => {
                    t.voters += 1;
                    self.observe(p, c);
                }
                c => {
                    t.holders += 1;
                    t.highest = t.highest.max(c);
                }
            }
            if pr.phase == PROPOSING && c != R_NONE && c != R_ACCEPTED {
                // That request was executed (refused): it is spent.
                self.remove(Msg::new(PROPOSE, n as u8, p as u8, pr.value));
            }
        }
        t
    }

    /// p decides with the replies `codes`; its round ends (or the next
    /// round of the same attempt or pass starts).
    pub fn decide(&mut self, m: &Model, p: usize, codes: [u8; N], describe: bool) -> String {
        let pr = self.p[p];
        let t = self.tally(p, pr, codes);
        let counts = (0..N)
            .filter(|&n| describe && codes[n] != R_NONE)
            .map(|n| format!("{} {}", node_name(n as u8), code_text(codes[n], pr.value)))
            .collect::<Vec<_>>()
            .join(", ");
        let counts = say!(
            describe,
            "{} decides (age {}), counting [{counts}]",
            proposer_name(p as u8),
            pr.age
        );
        self.end_round(p);
        let highest = t.highest;
        let outcome = match pr.phase {
            READING if t.holders >= MAJORITY => {
                self.p[p].floor = highest;
                self.propose(m, p);
                say!(describe, "floor {highest}; proposes {}", highest + 1)
            }
            READING => say!(describe, "no majority of holders: the attempt fails"),
            PROPOSING => self.decide_proposal(m, p, pr, &t, describe),
            HEAL_READ if t.holders < MAJORITY => {
                say!(describe, "no majority of holders: nothing")
            }
            HEAL_READ => self.decide_heal_read(m, p, &t, describe),
            _ if t.holders >= m.repair_holders() => {
                let (n, mark) = (pr.target, pr.target_mark);
                self.push(Msg::new(REPAIR, n, mark - MARK, highest));
                say!(describe, "sends {} REPAIR to {highest}", node_name(n))
            }
            _ => say!(describe, "too few holders: no repair"),
        };
        say!(describe, "{counts}: {outcome}")
    }

    /// A heal pass's first read, with a majority of holders: MARK to the
    /// nodes counted MISSING; a ripe mark is repaired after a fresh read
    /// (or, `RepairFromRipeRead`, from this one).
    fn decide_heal_read(&mut self, m: &Model, p: usize, t: &Tally, describe: bool) -> String {
        let mut words = String::new();
        for n in 0..N as u8 {
            if t.missing & (1 << n) != 0 {
                self.push(Msg::new(MARK_REQ, n, NONE, 0));
                words += &say!(describe, "sends MARK to {}; ", node_name(n));
            }
        }
        let highest = t.highest;
        match t.ripe {
            Some((n, mark)) if m.rules == Rules::RepairFromRipeRead => {
                self.push(Msg::new(REPAIR, n, mark - MARK, highest));
                words += &say!(
                    describe,
                    "{} is ripe: sends it REPAIR to {highest}, this read's highest",
                    node_name(n)
                );
            }
            Some((n, mark)) => {
                self.start_round(m, p, REPAIR_READ);
                self.p[p].target = n;
                self.p[p].target_mark = mark;
                words += &say!(describe, "{} is ripe: reads every node again", node_name(n));
            }
            None => {}
        }
        words
    }

    /// The outcome of a proposal round: a value handed out, or burned.
    fn decide_proposal(
        &mut self,
        m: &Model,
        p: usize,
        pr: Proc,
        t: &Tally,
        describe: bool,
    ) -> String {
        let v = pr.value;
        if t.accepted > 0 {
            self.observe(p, v);
        }
        if t.accepted >= MAJORITY {
            self.p[p].in_call = false;
            let bit = State::handed_bit(m, v);
            if self.handed & bit != 0 {
                self.violation = Some(Violation::Duplicate(v));
            } else if v <= pr.start_max {
                self.violation = Some(Violation::Order {
                    earlier: pr.start_max,
                    later: v,
                });
            }
            self.handed |= bit;
            return say!(describe, "HANDS OUT {v}");
        }
        if t.voters < MAJORITY && t.missing != 0 {
            // The code reads a floor again then.
            self.p[p].floor = MISSING;
        }
        say!(describe, "no majority accepted {v}: burned")
    }
}

/// What a decision counts.
struct Tally {
    holders: usize,
    highest: u8,
    accepted: usize,
    voters: usize,
    missing: u8,
    /// A node counted with a ripe mark, and the mark.
    ripe: Option<(u8, u8)>,
}

pub fn code_text(code: u8, value: u8) -> String {
    match code {
        R_ACCEPTED => format!("accepted {value}"),
        R_MISSING => "MISSING".to_string(),
        c if c >= R_RIPE => format!("healing#{} ripe", c - R_RIPE + 1),
        c => format!("{c}"),
    }
}

/// Every event possible in `s`, and some that are not (`apply` tells).
pub fn candidates(m: &Model, s: &State, out: &mut Vec<Event>) {
    out.clear();
    out.push(Event::Tick);
    for n in 0..N as u8 {
        out.push(Event::Lose(n));
    }
    for p in 0..PROPOSERS {
        let pu = p as u8;
        out.push(Event::StartCall(pu));
        out.push(Event::Attempt(pu));
        out.push(Event::StartPass(pu));
        if s.p[p].phase != IDLE {
            let options: [Options; N] = std::array::from_fn(|n| s.options(m, p, n));
            for &a in options[0].codes() {
                for &b in options[1].codes() {
                    for &c in options[2].codes() {
                        out.push(Event::Decide(pu, [a, b, c]));
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
}

impl System for Model {
    type State = State;
    type Event = Event;
    type Violation = Violation;

    fn rules(&self) -> String {
        format!(
            "{:?} (T {} ticks, Q {} ticks)",
            self.rules,
            self.timing.round_ticks(),
            self.timing.quarantine_ticks()
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

    fn canon(&self, s: State) -> State {
        s.canon(self)
    }

    fn violation(&self, s: &State) -> Option<Violation> {
        s.violation
    }

    fn counted_name(&self) -> &'static str {
        "values handed out in a run"
    }

    fn counted(&self, s: &State) -> u32 {
        s.handed.count_ones() - 1
    }

    fn goal(&self, s: &State) -> bool {
        self.goal.is_some_and(|g| g(s))
    }

    fn limit(&self) -> usize {
        self.limit
    }

    fn start(&self) -> String {
        format!(
            "start: every node holds {0}, {0} handed out; a round lives {1} ticks, the quarantine is {2}",
            self.base,
            self.timing.round_ticks(),
            self.timing.quarantine_ticks()
        )
    }

    fn show(&self, s: &State) -> String {
        let mark = if s.nodes.iter().any(|&k| k >= MARK && k != MISSING) {
            format!(" mark age {}", s.mark_age)
        } else {
            String::new()
        };
        format!("[{}]{mark}", s.nodes.map(key_text).join(", "))
    }
}
