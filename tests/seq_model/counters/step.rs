//! The steps of the `counters` model: what each event does (`apply`, and
//! `decide` for a proposer's decision), the events possible in a state
//! (`candidates`), and the model as a `System` for the explorer.

use super::*;
use crate::seq_model::explorer::{System, say};
use crate::seq_model::in_flight::InFlight;
use crate::seq_model::{MAJORITY, node_name, proposer_name};

impl State {
    /// The state after `e`, or None when `e` is not possible here. `log`
    /// receives what happened, in words, when given.
    pub fn apply(&self, m: &Model, e: Event, log: Option<&mut String>) -> Option<State> {
        if self.violation.is_some() {
            return None;
        }
        let describe = log.is_some();
        let mut s = *self;
        let quarantine = m.rules == Rules::Quarantine;
        let text = match e {
            Event::Lose(n) => {
                let n = usize::from(n);
                let first_back = s.lost == NONE || s.nodes[usize::from(s.lost)] != MISSING;
                if s.losses >= m.losses || s.nodes[n] == MISSING || !first_back {
                    return None;
                }
                s.nodes[n] = MISSING;
                s.losses += 1;
                s.lost = n as u8;
                if m.loss_resets_connections {
                    s.retain(|x| usize::from(x.node()) != n);
                    for pr in &mut s.p {
                        pr.pending &= !(1 << n);
                    }
                }
                s.touch(m, n);
                say!(
                    describe,
                    "{} loses its data (key MISSING)",
                    node_name(n as u8)
                )
            }
            Event::Expire(p, seen) => {
                let pu = usize::from(p);
                if !quarantine || s.p[pu].phase == IDLE || seen & !s.missing_replies(pu) != 0 {
                    return None;
                }
                // It counts none of its replies, but it has seen the nodes
                // whose MISSING it received before the end.
                let value = s.p[pu].value;
                for n in 0..N {
                    if seen & (1 << n) == 0 {
                        continue;
                    }
                    let status = if s.p[pu].hist[n] & H_MISSING_READY != 0 {
                        READY
                    } else {
                        WAITING
                    };
                    s.see_missing(pu, n, status);
                    if s.p[pu].phase == PROPOSING {
                        // That proposal was executed: it is spent.
                        s.remove(Msg::new(PROPOSE, n as u8, p, value));
                    }
                }
                if s.p[pu].phase == REPAIRING {
                    s.restore_repair(pu);
                }
                s.end_round(pu);
                say!(
                    describe,
                    "{}'s round expires: it counts none of its replies{}",
                    proposer_name(p),
                    if seen == 0 {
                        String::new()
                    } else {
                        format!(" (it saw {} MISSING)", mask_names(seen))
                    }
                )
            }
            Event::Execute(x) => {
                let n = usize::from(x.node());
                let c = s.counter(m, n);
                let changes = if x.kind() == PROPOSE {
                    c != MISSING && c < x.val()
                } else {
                    c == MISSING
                };
                if !changes || !s.remove(x) {
                    return None;
                }
                s.nodes[n] = x.val();
                if x.who() != NONE {
                    // Accepted: it was not refused before, nor found the
                    // key missing.
                    let pr = &mut s.p[usize::from(x.who())];
                    pr.accepted |= 1 << n;
                    pr.pending &= !(1 << n);
                    pr.hist[n] = 0;
                }
                s.touch(m, n);
                let late = if x.who() == NONE && x.kind() == PROPOSE {
                    " (late: its round is over)"
                } else {
                    ""
                };
                let what = if x.kind() == PROPOSE {
                    say!(
                        describe,
                        "accepts {} ({} -> {})",
                        x.val(),
                        counter_text(self.nodes[n]),
                        x.val()
                    )
                } else {
                    say!(describe, "sets {} (was MISSING)", x.val())
                };
                say!(
                    describe,
                    "{} executes {}{late}: {what}",
                    node_name(x.node()),
                    describe_request(x)
                )
            }
            Event::StartCall(p) => {
                let pu = usize::from(p);
                let pr = &mut s.p[pu];
                // A call in progress is given up first (after its first
                // attempt): giving up shows only through the next call.
                if pr.phase != IDLE || pr.calls >= m.calls || (pr.in_call && pr.attempts == 0) {
                    return None;
                }
                let gave_up = pr.in_call;
                pr.in_call = true;
                pr.calls += 1;
                pr.attempts = 0;
                pr.start_max = self.max_handed(m);
                let (calls, start_max) = (pr.calls, pr.start_max);
                let first = s.attempt(m, pu, describe);
                say!(
                    describe,
                    "{}{} starts call {calls} (highest value handed out so far: {start_max}); {first}",
                    if gave_up { "gives up its call; " } else { "" },
                    proposer_name(p),
                )
            }
            Event::Attempt(p) => {
                let pu = usize::from(p);
                let pr = &s.p[pu];
                if !pr.in_call || pr.phase != IDLE || pr.attempts >= m.attempts {
                    return None;
                }
                let what = s.attempt(m, pu, describe);
                say!(describe, "{} tries again: {what}", proposer_name(p))
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
            Event::Repair(p) => {
                let pu = usize::from(p);
                let pr = &mut s.p[pu];
                if !quarantine || pr.phase != IDLE || pr.repairs >= m.repairs {
                    return None;
                }
                let mut mask = 0;
                for (n, seen) in pr.seen.iter_mut().enumerate() {
                    if *seen == READY {
                        mask |= 1 << n;
                        *seen = UNSEEN;
                    }
                }
                if mask == 0 {
                    return None;
                }
                pr.repairs += 1;
                pr.repairing = mask;
                s.start_round(m, pu, REPAIRING);
                say!(
                    describe,
                    "{} has waited out every round live when it saw {} missing: reads every node again, to repair",
                    proposer_name(p),
                    mask_names(mask)
                )
            }
        };
        s.normalize(m);
        if let Some(out) = log {
            *out = text;
        }
        Some(s)
    }

    /// p decides with the replies `codes`; its round ends.
    pub fn decide(&mut self, m: &Model, p: usize, codes: [u8; N], describe: bool) -> String {
        let pr = self.p[p];
        let who = proposer_name(p as u8);
        let mut counted = [Reply::None; N];
        for n in 0..N {
            let status = if pr.hist[n] & H_MISSING_READY != 0 {
                READY
            } else {
                WAITING
            };
            counted[n] = match codes[n] {
                R_NONE => Reply::None,
                R_ACCEPTED => Reply::Accepted,
                R_MISSING => Reply::Missing(status),
                c if pr.phase == PROPOSING => Reply::Refused(c),
                c => Reply::Value(c),
            };
            if pr.phase == PROPOSING && matches!(counted[n], Reply::Refused(_) | Reply::Missing(_))
            {
                // That request was executed (refused): it is spent.
                self.remove(Msg::new(PROPOSE, n as u8, p as u8, pr.value));
            }
        }
        let mut holders = 0;
        let mut missing = 0;
        let mut highest = None::<u8>;
        let mut accepted = 0;
        let mut missing_mask = 0;
        for (n, r) in counted.iter().enumerate() {
            match *r {
                Reply::Value(v) => {
                    holders += 1;
                    highest = Some(highest.map_or(v, |h| h.max(v)));
                }
                Reply::Missing(_) => {
                    missing += 1;
                    missing_mask |= 1 << n;
                }
                Reply::Accepted => accepted += 1,
                Reply::Refused(_) | Reply::None => {}
            }
        }
        let replies: Vec<String> = (0..N)
            .filter(|&n| describe && counted[n] != Reply::None)
            .map(|n| {
                format!(
                    "{} {}",
                    node_name(n as u8),
                    describe_reply(counted[n], pr.value)
                )
            })
            .collect();
        let counts = if replies.is_empty() {
            say!(describe, "{who} stops waiting, with no reply")
        } else {
            say!(
                describe,
                "{who} stops waiting, counts {}",
                replies.join(", ")
            )
        };
        self.end_round(p);
        let creates = m.rules == Rules::Quarantine
            && missing == N
            && (pr.phase == REPAIRING || !m.creation_waits);
        if m.rules == Rules::Quarantine && !creates {
            for (n, r) in counted.iter().enumerate() {
                if let Reply::Missing(status) = *r {
                    self.see_missing(p, n, status);
                }
            }
        }
        let all = codes.iter().all(|&c| c != R_NONE);
        let outcome = match pr.phase {
            READING if holders >= MAJORITY => {
                let floor = highest.unwrap_or(0);
                self.p[p].floor = floor;
                let completes = m.rules == Rules::ZeroCompletion && floor == 0;
                let repair = if (m.rules == Rules::NaiveRepair || completes) && missing_mask != 0 {
                    self.send_set(missing_mask, floor);
                    say!(
                        describe,
                        ", sends SET {floor} if missing to {}",
                        mask_names(missing_mask)
                    )
                } else {
                    String::new()
                };
                self.propose(m, p);
                say!(
                    describe,
                    "floor {floor}{repair}; proposes {} to every node",
                    floor + 1
                )
            }
            READING if creates => {
                self.send_set((1 << N) - 1, 0);
                self.p[p].floor = 0;
                self.propose(m, p);
                say!(
                    describe,
                    "all nodes MISSING: creates the sequence (SET 0 if missing to every node) and proposes 1 to every node"
                )
            }
            READING
                if m.rules == Rules::ZeroCompletion
                    && holders + missing >= MAJORITY
                    && highest == Some(0) =>
            {
                self.send_set(missing_mask, 0);
                say!(
                    describe,
                    "every holder holds 0: sends SET 0 if missing to {}; no majority of holders: the attempt fails",
                    mask_names(missing_mask)
                )
            }
            READING => say!(describe, "no majority of holders: the attempt fails"),
            PROPOSING => {
                let v = pr.value;
                for r in counted {
                    match r {
                        Reply::Accepted => self.observe(p, v),
                        Reply::Refused(c) => self.observe(p, c),
                        _ => {}
                    }
                }
                if accepted >= MAJORITY {
                    self.p[p].in_call = false;
                    let bit = handed_bit(m, v);
                    if self.handed & bit != 0 {
                        self.violation = Some(Violation::Duplicate(v));
                    } else if v <= pr.start_max {
                        self.violation = Some(Violation::Order {
                            earlier: pr.start_max,
                            later: v,
                        });
                    }
                    self.handed |= bit;
                    say!(describe, "HANDS OUT {v}")
                } else {
                    say!(
                        describe,
                        "no majority accepted {v}: the value is burned (floor {})",
                        counter_text(self.p[p].floor)
                    )
                }
            }
            _ => {
                // REPAIRING: a majority of holders, or all N nodes.
                let targets = pr.repairing;
                self.p[p].repairing = 0;
                if holders >= MAJORITY || (all && holders > 0) {
                    let value = highest.unwrap_or(0);
                    let mut sent = 0;
                    for (n, r) in counted.iter().enumerate() {
                        if targets & (1 << n) != 0 && !matches!(r, Reply::Value(_)) {
                            sent |= 1 << n;
                            self.p[p].seen[n] = UNSEEN;
                        }
                    }
                    self.send_set(sent, value);
                    self.observe(p, value);
                    say!(
                        describe,
                        "highest holder {value}: sends SET {value} if missing to {}",
                        mask_names(sent)
                    )
                } else if creates {
                    self.send_set((1 << N) - 1, 0);
                    self.observe(p, 0);
                    say!(
                        describe,
                        "all nodes MISSING: creates the sequence (SET 0 if missing to every node)"
                    )
                } else {
                    self.p[p].repairing = targets;
                    self.restore_repair(p);
                    say!(describe, "no majority of holders: no repair")
                }
            }
        };
        say!(describe, "{counts}: {outcome}")
    }
}

/// Every event possible in `s`, and some that are not (`apply` tells).
pub fn candidates(m: &Model, s: &State, out: &mut Vec<Event>) {
    out.clear();
    for n in 0..N as u8 {
        out.push(Event::Lose(n));
    }
    for p in 0..PROPOSERS {
        let pu = p as u8;
        let missing = s.missing_replies(p);
        for seen in 0..8u8 {
            if seen & !missing == 0 {
                out.push(Event::Expire(pu, seen));
            }
        }
        out.push(Event::StartCall(pu));
        out.push(Event::Attempt(pu));
        out.push(Event::Repair(pu));
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
        format!("{:?}", self.rules)
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
        s.handed.count_ones() - u32::from(self.handed_before.is_some())
    }

    fn goal(&self, s: &State) -> bool {
        self.goal.is_some_and(|g| g(s))
    }

    fn limit(&self) -> usize {
        self.limit
    }

    fn start(&self) -> String {
        format!(
            "start: counters {}, handed out before: {}",
            self.show(&self.initial()),
            self.handed_before
                .map_or("nothing".to_string(), |v| v.to_string())
        )
    }

    fn show(&self, s: &State) -> String {
        format!("[{}]", s.nodes.map(counter_text).join(", "))
    }
}
