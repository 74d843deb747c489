//! The bookkeeping of the `timed` state: requests in flight, the replies
//! each live round may count (`Proc::hist`), rounds starting, ageing and
//! ending, and the normalization that makes equal situations equal states
//! (forgotten requests, sorting; mirror images are in `mirror.rs`).

use super::*;
use crate::seq_model::in_flight::InFlight;
use std::hash::{Hash, Hasher};

/// Hashes the state in a few words (a debug build spends much of its time
/// hashing otherwise). Equal states hash equally: that is all it needs.
impl Hash for State {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let b = |x: u8, i: u32| u64::from(x) << (8 * i);
        h.write_u64(
            b(self.nodes[0], 0)
                | b(self.nodes[1], 1)
                | b(self.nodes[2], 2)
                | b(self.mark_age, 3)
                | b(self.losses, 4)
                | b(self.len, 5)
                | u64::from(self.handed & 0xffff) << 48,
        );
        for pr in &self.p {
            h.write_u64(
                b(pr.calls, 0)
                    | b(pr.passes, 1)
                    | b(u8::from(pr.in_call), 2)
                    | b(pr.attempts, 3)
                    | b(pr.phase, 4)
                    | b(pr.value, 5)
                    | b(pr.floor, 6)
                    | b(pr.age, 7),
            );
            h.write_u64(
                b(pr.accepted, 0)
                    | b(pr.pending, 1)
                    | b(pr.target, 2)
                    | b(pr.target_mark, 3)
                    | b(pr.start_max, 4)
                    | u64::from(pr.hist[0]) << 32,
            );
            h.write_u64(u64::from(pr.hist[1]) | u64::from(pr.hist[2]) << 32);
        }
        for two in self.msgs().chunks(2) {
            let w = two
                .iter()
                .enumerate()
                .fold(0, |w, (i, x)| w | u64::from(x.0) << (32 * i));
            h.write_u64(w);
        }
    }
}

/// The replies a process may count from one node.
pub struct Options {
    pub len: u8,
    pub codes: [u8; 24],
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

impl State {
    pub fn initial(m: &Model) -> State {
        let idle = Proc {
            calls: 0,
            passes: 0,
            in_call: false,
            attempts: 0,
            phase: IDLE,
            value: 0,
            floor: MISSING,
            start_max: 0,
            age: 0,
            accepted: 0,
            pending: 0,
            hist: [0; N],
            target: NONE,
            target_mark: NONE,
        };
        let mut p = [idle; PROPOSERS];
        for (pr, floor) in p.iter_mut().zip(m.floors) {
            pr.floor = floor.unwrap_or(MISSING);
        }
        State {
            nodes: [m.base; N],
            mark_age: 0,
            losses: 0,
            handed: 1,
            violation: None,
            p,
            len: 0,
            msgs: [EMPTY; CAP],
        }
    }

    pub fn handed_bit(m: &Model, v: u8) -> u32 {
        assert!(v >= m.base && v - m.base < 32, "value {v} outside the bits");
        1 << (v - m.base)
    }

    pub fn max_handed(&self, m: &Model) -> u8 {
        m.base + 31 - self.handed.leading_zeros() as u8
    }

    /// Whether node n holds a mark whose quarantine may be over.
    pub fn ripe(&self, m: &Model, n: usize) -> bool {
        self.nodes[n] >= MARK
            && self.nodes[n] != MISSING
            && self.mark_age >= m.timing.quarantine_ticks()
    }

    /// Adds to p's history of n the reply n would give p's live round now.
    pub fn note(&mut self, m: &Model, p: usize, n: usize) {
        let pr = &self.p[p];
        if pr.phase == IDLE || pr.pending & (1 << n) == 0 {
            return;
        }
        let k = self.nodes[n];
        let bit = if is_counter(k) {
            if pr.phase == PROPOSING && k < pr.value {
                // It would accept: that is an Execute step.
                return;
            }
            let i = k - m.base;
            assert!(i < H_SPAN, "counter {k} outgrew the history bits");
            1 << i
        } else if pr.phase == PROPOSING || k == MISSING {
            // A proposal finds a missing or marked key: no vote.
            H_MISSING
        } else if self.ripe(m, n) {
            H_RIPE << (k - MARK)
        } else {
            // A mark still in quarantine: as good as no reply.
            return;
        };
        self.p[p].hist[n] |= bit;
    }

    /// n's key changed (or its mark aged): every live round that may still
    /// reach n notes the reply it would now get.
    pub fn touch(&mut self, m: &Model, n: usize) {
        for p in 0..PROPOSERS {
            self.note(m, p, n);
        }
    }

    /// Starts a live round of p: phase, age 0, and (a proposal) a request
    /// to every node.
    pub fn start_round(&mut self, m: &Model, p: usize, phase: u8) {
        let pr = &mut self.p[p];
        pr.phase = phase;
        pr.age = 0;
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

    /// Ends p's live round: the replies it has not counted are ignored from
    /// now on; its proposals may still reach their nodes.
    pub fn end_round(&mut self, p: usize) {
        let pr = &mut self.p[p];
        pr.phase = IDLE;
        pr.age = 0;
        pr.hist = [0; N];
        pr.accepted = 0;
        pr.pending = 0;
        pr.target = NONE;
        pr.target_mark = NONE;
        let who = p as u8;
        for x in &mut self.msgs[..usize::from(self.len)] {
            if x.kind() == PROPOSE && x.who() == who {
                *x = x.stale();
            }
        }
    }

    /// One tick of real time: marks age (up to ripe), rounds age, and a
    /// round past its lifetime expires, counting none of its replies.
    /// Returns the processes whose round expired (bit mask).
    pub fn tick(&mut self, m: &Model) -> u8 {
        let q = m.timing.quarantine_ticks();
        if self.nodes.iter().any(|&k| k >= MARK && k != MISSING) && self.mark_age < q {
            self.mark_age += 1;
            for n in 0..N {
                self.touch(m, n);
            }
        }
        let mut expired = 0;
        for p in 0..PROPOSERS {
            if self.p[p].phase == IDLE {
                continue;
            }
            if !m.lifetime() {
                // No expiry: the age only shows a decision after T.
                let age = &mut self.p[p].age;
                *age = (*age + 1).min(m.timing.round_ticks() + 1);
            } else if self.p[p].age >= m.timing.round_ticks() {
                self.end_round(p);
                expired |= 1 << p;
            } else {
                self.p[p].age += 1;
            }
        }
        expired
    }

    pub fn propose(&mut self, m: &Model, p: usize) {
        let floor = self.p[p].floor;
        assert!(floor < VALUE_LIMIT, "values outgrew the model");
        self.p[p].value = floor + 1;
        self.start_round(m, p, PROPOSING);
    }

    pub fn observe(&mut self, p: usize, counter: u8) {
        let f = &mut self.p[p].floor;
        if *f == MISSING || counter > *f {
            *f = counter;
        }
    }

    /// The replies p may count from n (R_* codes and counters).
    pub fn options(&self, m: &Model, p: usize, n: usize) -> Options {
        let mut out = Options {
            len: 0,
            codes: [0; 24],
        };
        out.push(R_NONE);
        let pr = &self.p[p];
        if pr.accepted & (1 << n) != 0 {
            out.push(R_ACCEPTED);
        }
        let h = pr.hist[n];
        if h & H_MISSING != 0 {
            out.push(R_MISSING);
        }
        for e in 0..4 {
            if h & (H_RIPE << e) != 0 {
                out.push(R_RIPE + e);
            }
        }
        let mut bits = h & ((1 << H_SPAN) - 1);
        while bits != 0 {
            let i = bits.trailing_zeros() as u8;
            out.push(m.base + i);
            bits &= bits - 1;
        }
        out
    }

    /// Forgets the requests that can no longer change anything, and sorts
    /// the rest, so that equal situations are equal states.
    pub fn normalize(&mut self, m: &Model) {
        let nodes = self.nodes;
        let more_losses = self.losses < m.losses;
        self.retain(|x| {
            let k = nodes[usize::from(x.node())];
            match x.kind() {
                // A mark is never made again once gone.
                REPAIR => k == MARK + x.who(),
                MARK_REQ => more_losses || k == MISSING,
                _ => x.who() != NONE || more_losses || !is_counter(k) || k < x.val(),
            }
        });
        if !self.nodes.iter().any(|&k| k >= MARK && k != MISSING) {
            self.mark_age = 0;
        }
        let len = usize::from(self.len);
        self.msgs[..len].sort_unstable();
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
