//! The bookkeeping of the `counters` state: requests in flight, the
//! replies each live round may count (`Proposer::hist`), rounds starting
//! and ending, and the normalization that makes equal situations equal
//! states (forgotten requests, sorting, mirror images).

use std::hash::{Hash, Hasher};

use super::*;
use crate::seq_model::explorer::say;
use crate::seq_model::in_flight::InFlight;

/// The bit of value v in `State::handed`.
pub fn handed_bit(m: &Model, v: u8) -> u32 {
    assert!(
        v >= m.base && v - m.base < 32,
        "value {v} outside the handed bits"
    );
    1 << (v - m.base)
}

/// The replies a proposer may count from one node.
pub struct Options {
    pub len: u8,
    pub codes: [u8; 8],
}

impl Options {
    pub fn push(&mut self, code: u8) {
        self.codes[usize::from(self.len)] = code;
        self.len += 1;
    }

    pub fn codes(&self) -> &[u8] {
        &self.codes[..usize::from(self.len)]
    }
}

/// Hashes the state in a few words (a debug build spends much of its time
/// hashing otherwise). Equal states hash equally: that is all it needs.
impl Hash for State {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let b = |x: u8, i: u32| u64::from(x) << (8 * i);
        h.write_u64(
            b(self.nodes[0], 0)
                | b(self.nodes[1], 1)
                | b(self.nodes[2], 2)
                | b(self.losses, 3)
                | b(self.lost, 4)
                | b(self.len, 5),
        );
        h.write_u32(self.handed);
        for pr in &self.p {
            h.write_u64(
                b(pr.calls, 0)
                    | b(u8::from(pr.in_call), 1)
                    | b(pr.attempts, 2)
                    | b(pr.phase, 3)
                    | b(pr.value, 4)
                    | b(pr.floor, 5)
                    | b(pr.start_max, 6)
                    | b(pr.accepted, 7),
            );
            h.write_u64(
                b(pr.pending, 0)
                    | b(pr.seen[0], 1)
                    | b(pr.seen[1], 2)
                    | b(pr.seen[2], 3)
                    | b(pr.repairs, 4)
                    | b(pr.repairing, 5),
            );
            h.write_u64(u64::from(pr.hist[0]) | u64::from(pr.hist[1]) << 32);
            h.write_u32(pr.hist[2]);
        }
        for four in self.msgs().chunks(4) {
            let mut w = 0;
            for (i, x) in four.iter().enumerate() {
                w |= u64::from(x.0) << (16 * i);
            }
            h.write_u64(w);
        }
    }
}

/// A reply a proposer counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    None,
    /// The key is missing; WAITING or READY (see `seen`).
    Missing(u8),
    Value(u8),
    Accepted,
    Refused(u8),
}

pub fn describe_reply(r: Reply, value: u8) -> String {
    match r {
        Reply::Missing(_) => "MISSING".to_string(),
        Reply::Value(v) => format!("counter {v}"),
        Reply::Accepted => format!("accepted {value}"),
        Reply::Refused(c) => format!("refused, holds {c}"),
        Reply::None => "none".to_string(),
    }
}

impl State {
    pub fn initial(m: &Model) -> State {
        let idle = Proposer {
            calls: 0,
            in_call: false,
            attempts: 0,
            phase: IDLE,
            value: 0,
            floor: MISSING,
            start_max: 0,
            hist: [0; N],
            accepted: 0,
            pending: 0,
            seen: [UNSEEN; N],
            repairs: 0,
            repairing: 0,
        };
        let mut p = [idle; PROPOSERS];
        for (pr, floor) in p.iter_mut().zip(m.floors) {
            pr.floor = floor.unwrap_or(MISSING);
        }
        State {
            nodes: m.initial.map(|c| c.unwrap_or(MISSING)),
            losses: 0,
            lost: NONE,
            handed: m.handed_before.map_or(0, |v| handed_bit(m, v)),
            violation: None,
            p,
            len: 0,
            msgs: [EMPTY; CAP],
        }
    }

    pub fn max_handed(&self, m: &Model) -> u8 {
        if self.handed == 0 {
            0
        } else {
            m.base + 31 - self.handed.leading_zeros() as u8
        }
    }

    pub fn send_set(&mut self, mask: u8, val: u8) {
        for n in 0..N as u8 {
            if mask & (1 << n) != 0 {
                self.push(Msg::new(SET, n, NONE, val));
            }
        }
    }

    /// The counter a request finds at n (MissingAsZero's scripts read a missing key
    /// as 0).
    pub fn counter(&self, m: &Model, n: usize) -> u8 {
        let c = self.nodes[n];
        if c == MISSING && m.rules == Rules::MissingAsZero {
            0
        } else {
            c
        }
    }

    /// Adds to p's history of n the reply n would give p's live round now.
    pub fn note(&mut self, m: &Model, p: usize, n: usize) {
        let pr = &self.p[p];
        if pr.phase == IDLE || pr.pending & (1 << n) == 0 {
            return;
        }
        let c = self.counter(m, n);
        let bit = if c == MISSING {
            let other_live = (0..PROPOSERS).any(|q| q != p && self.p[q].phase != IDLE);
            let h = pr.hist[n];
            if !other_live {
                self.p[p].hist[n] = (h & !H_MISSING_WAITING) | H_MISSING_READY;
                return;
            }
            if h & H_MISSING_READY != 0 {
                return;
            }
            H_MISSING_WAITING
        } else if pr.phase == PROPOSING && c < pr.value {
            // It would accept: that is an Execute step.
            return;
        } else if c == 0 && m.base > 0 {
            H_ZERO
        } else {
            let i = c - m.base;
            assert!(i < H_SPAN, "counter {c} outgrew the history bits");
            1 << i
        };
        self.p[p].hist[n] |= bit;
    }

    /// n's counter changed: every live round that may still reach n notes
    /// the reply it would now get.
    pub fn touch(&mut self, m: &Model, n: usize) {
        for p in 0..PROPOSERS {
            self.note(m, p, n);
        }
    }

    /// Starts a live round of p: phase, and a request to every node.
    pub fn start_round(&mut self, m: &Model, p: usize, phase: u8) {
        let pr = &mut self.p[p];
        pr.phase = phase;
        pr.hist = [0; N];
        pr.accepted = 0;
        pr.pending = (1 << N) - 1;
        if phase == PROPOSING {
            let value = pr.value;
            for n in 0..N as u8 {
                self.push(Msg::new(PROPOSE, n, p as u8, value));
            }
        }
        for n in 0..N {
            self.note(m, p, n);
        }
    }

    /// Forgets the requests that can no longer change anything, and sorts
    /// the rest, so that equal situations are equal states.
    pub fn normalize(&mut self, m: &Model) {
        if self.losses >= m.losses {
            // No key can go missing any more: a proposal at or below a
            // held counter, or a SET on a held key, will never do anything.
            let nodes = self.nodes;
            self.retain(|x| {
                let c = nodes[usize::from(x.node())];
                x.who() != NONE || c == MISSING || (x.kind() == PROPOSE && c < x.val())
            });
        }
        let len = usize::from(self.len);
        self.msgs[..len].sort_unstable();
    }

    /// Ends p's live round: the replies it has not counted are ignored from
    /// now on, its proposals may still reach their nodes, and the other
    /// proposer stops waiting for this round before repairing.
    pub fn end_round(&mut self, p: usize) {
        let pr = &mut self.p[p];
        pr.phase = IDLE;
        pr.hist = [0; N];
        pr.accepted = 0;
        pr.pending = 0;
        let who = p as u8;
        for x in &mut self.msgs[..usize::from(self.len)] {
            if x.who() == who {
                *x = x.stale();
            }
        }
        for q in 0..PROPOSERS {
            if q != p {
                for s in &mut self.p[q].seen {
                    if *s == WAITING {
                        *s = READY;
                    }
                }
                for h in &mut self.p[q].hist {
                    if *h & H_MISSING_WAITING != 0 {
                        *h = (*h & !H_MISSING_WAITING) | H_MISSING_READY;
                    }
                }
            }
        }
    }

    /// p saw n missing: the repair will wait for every round live then.
    pub fn see_missing(&mut self, p: usize, n: usize, status: u8) {
        if self.p[p].seen[n] == UNSEEN {
            self.p[p].seen[n] = status;
        }
    }

    pub fn propose(&mut self, m: &Model, p: usize) {
        let floor = self.p[p].floor;
        assert!(floor < VALUE_LIMIT, "values outgrew the model");
        self.p[p].value = floor + 1;
        self.start_round(m, p, PROPOSING);
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
            say!(
                describe,
                "proposes {} (floor {}) to every node",
                self.p[p].value,
                self.p[p].floor
            )
        }
    }

    pub fn observe(&mut self, p: usize, counter: u8) {
        let f = &mut self.p[p].floor;
        if *f == MISSING || counter > *f {
            *f = counter;
        }
    }

    /// The nodes that may have replied MISSING to p's live round.
    pub fn missing_replies(&self, p: usize) -> u8 {
        let mut mask = 0;
        for n in 0..N {
            if self.p[p].hist[n] & (H_MISSING_READY | H_MISSING_WAITING) != 0 {
                mask |= 1 << n;
            }
        }
        mask
    }

    /// The replies p may count from n (R_* codes and counters).
    pub fn options(&self, m: &Model, p: usize, n: usize) -> Options {
        let mut out = Options {
            len: 0,
            codes: [0; 8],
        };
        out.push(R_NONE);
        let pr = &self.p[p];
        if pr.accepted & (1 << n) != 0 {
            out.push(R_ACCEPTED);
        }
        let h = pr.hist[n];
        if h & (H_MISSING_READY | H_MISSING_WAITING) != 0 {
            out.push(R_MISSING);
        }
        if h & H_ZERO != 0 {
            out.push(0);
        }
        let mut bits = h & ((1 << H_SPAN) - 1);
        while bits != 0 {
            let i = bits.trailing_zeros() as u8;
            out.push(m.base + i);
            bits &= bits - 1;
        }
        out
    }
    /// The representative of the state and its mirror image (P1 and P2
    /// swapped), when both proposers start alike: the search visits one.
    pub fn canon(self, m: &Model) -> State {
        if !m.mirror || m.floors[0] != m.floors[1] {
            return self;
        }
        let mut t = self;
        t.p.swap(0, 1);
        for x in &mut t.msgs[..usize::from(t.len)] {
            if x.who() != NONE {
                *x = Msg::new(x.kind(), x.node(), 1 - x.who(), x.val());
            }
        }
        t.msgs[..usize::from(t.len)].sort_unstable();
        self.min(t)
    }

    /// A REPAIRING round that ends without repairing: the nodes are still
    /// known missing, and the wait for them is over.
    pub fn restore_repair(&mut self, p: usize) {
        let pr = &mut self.p[p];
        for n in 0..N {
            if pr.repairing & (1 << n) != 0 {
                pr.seen[n] = READY;
            }
        }
        pr.repairing = 0;
    }
}

impl InFlight for State {
    type Msg = Msg;
    const EMPTY: Msg = EMPTY;

    fn slots(&self) -> (u8, &[Msg]) {
        (self.len, &self.msgs)
    }

    fn slots_mut(&mut self) -> (&mut u8, &mut [Msg]) {
        (&mut self.len, &mut self.msgs)
    }
}
