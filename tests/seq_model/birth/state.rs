//! The bookkeeping of the `birth` state: requests in flight, the replies
//! each live round may count (`Proc::hist`, as in `timed/`), rounds
//! starting, ageing and ending, creation ids, and the normalization that
//! forgets requests that can no longer change anything.

use super::*;
use crate::seq_model::MAJORITY;
use crate::seq_model::in_flight::InFlight;

impl State {
    pub fn initial(m: &Model) -> State {
        let idle = Proc {
            attempts: 0,
            phase: IDLE,
            age: 0,
            value: 0,
            floor: MISSING,
            id: NONE,
            accepted: 0,
            pending: 0,
            hist: [0; N],
        };
        State {
            nodes: m.start.nodes,
            age: [0; N],
            gens: m.start.gens,
            lost: 0,
            losses: 0,
            handed: m.start.handed,
            violation: None,
            views: m.start.views,
            rolled: 0,
            mixed: false,
            p: [idle; PROPOSERS],
            len: 0,
            msgs: [EMPTY; CAP],
        }
    }

    pub fn ripe(&self, m: &Model, n: usize) -> bool {
        is_prepared(self.nodes[n]) && self.age[n] >= rollback_ticks(&m.rules)
    }

    /// Whether a settle may land on n now (its prepared state is young
    /// enough, when settles are bounded).
    pub fn settles(&self, m: &Model, n: usize) -> bool {
        !m.rules.settle_bound || self.age[n] <= round_ticks()
    }

    /// Adds to p's history of n the reply n would give p's live round now.
    pub fn note(&mut self, m: &Model, p: usize, n: usize) {
        let pr = &self.p[p];
        if pr.phase == IDLE || pr.pending & (1 << n) == 0 {
            return;
        }
        let k = self.nodes[n];
        let bit = match pr.phase {
            READING if k == MISSING => return,
            READING if holder(k) => u32::from(k),
            READING if is_unborn(k) => 20 + 6 * u32::from(tag(k)) + u32::from(generation(k)),
            READING if self.ripe(m, n) => 14 + u32::from(k - PREPARED),
            READING => 8 + u32::from(k - PREPARED),
            PREPARING if k == PREPARED + pr.id => u32::from(B_OK),
            PREPARING => return,
            _ if holder(k) && k < pr.value => return,
            _ if holder(k) => u32::from(k),
            _ => u32::from(B_NONE),
        };
        self.p[p].hist[n] |= 1 << bit;
    }

    pub fn touch(&mut self, m: &Model, n: usize) {
        for p in 0..PROPOSERS {
            self.note(m, p, n);
        }
    }

    /// Starts a live round of p; `keep_age`: the round goes on counting
    /// from the previous one's start (a creator's preparation).
    pub fn start_round(&mut self, m: &Model, p: usize, phase: u8, keep_age: bool) {
        let pr = &mut self.p[p];
        pr.phase = phase;
        if !keep_age {
            pr.age = 0;
        }
        pr.hist = [0; N];
        pr.accepted = 0;
        pr.pending = (1 << N) - 1;
        let (value, id) = (pr.value, pr.id);
        for n in 0..N as u8 {
            let who = p as u8;
            let msg = match phase {
                READING => Msg {
                    kind: READ,
                    node: n,
                    who,
                    a: 0,
                    b: 0,
                },
                PROPOSING => Msg {
                    kind: PROPOSE,
                    node: n,
                    who,
                    a: value,
                    b: 0,
                },
                _ => Msg {
                    kind: PREP,
                    node: n,
                    who,
                    a: self.views[usize::from(id)][usize::from(n)],
                    b: id,
                },
            };
            self.push(msg);
        }
        for n in 0..N {
            self.note(m, p, n);
        }
    }

    /// Ends p's live round: its requests may still reach their nodes, and
    /// nobody counts their replies.
    pub fn end_round(&mut self, p: usize) {
        let pr = &mut self.p[p];
        pr.phase = IDLE;
        pr.age = 0;
        pr.hist = [0; N];
        pr.accepted = 0;
        pr.pending = 0;
        let who = p as u8;
        for x in &mut self.msgs[..usize::from(self.len)] {
            if x.who == who {
                x.who = NONE;
            }
        }
    }

    /// One tick: prepared states and rounds age; a round past its lifetime
    /// expires. Returns the processes whose round expired.
    pub fn tick(&mut self, m: &Model) -> u8 {
        let q = rollback_ticks(&m.rules);
        for n in 0..N {
            if is_prepared(self.nodes[n]) && self.age[n] < q {
                self.age[n] += 1;
                self.touch(m, n);
            }
        }
        let mut expired = 0;
        for p in 0..PROPOSERS {
            if self.p[p].phase == IDLE {
                continue;
            }
            if self.p[p].age >= round_ticks() {
                if self.p[p].phase == READING && !m.rules.read_bound {
                    // Past its lifetime and still counting: one age for all
                    // of that, so that the state space stays finite.
                    self.p[p].age = round_ticks() + 1;
                    continue;
                }
                self.end_round(p);
                expired |= 1 << p;
            } else {
                self.p[p].age += 1;
            }
        }
        expired
    }

    /// The id of the creation of `view` (marks' generations), interned.
    pub fn intern(&mut self, view: [u8; N]) -> u8 {
        if let Some(i) = self.views.iter().position(|v| *v == view) {
            return i as u8;
        }
        let free = self
            .views
            .iter()
            .position(|v| *v == [MISSING; N])
            .expect("room for another creation id");
        self.views[free] = view;
        free as u8
    }

    /// Forgets requests that can no longer change anything, and creation
    /// ids nothing refers to; sorts the rest.
    pub fn normalize(&mut self, m: &Model) {
        let (nodes, age) = (self.nodes, self.age);
        let more_losses = self.losses < m.losses;
        let settle_ok = |n: usize| !m.rules.settle_bound || age[n] <= round_ticks();
        self.retain(|x| {
            let n = usize::from(x.node);
            let k = nodes[n];
            match x.kind {
                READ => k == MISSING || more_losses,
                PROPOSE => !(holder(k) && k >= x.a) || more_losses,
                PREP => k == x.a,
                SETTLE => k == PREPARED + x.a && settle_ok(n),
                _ => k == PREPARED + x.a,
            }
        });
        let len = usize::from(self.len);
        self.msgs[..len].sort_unstable();
        for id in 0..IDS as u8 {
            let named = |k: &u8| *k == PREPARED + id || (is_unborn(*k) && tag(*k) == id + 1);
            let used = self.nodes.iter().any(named)
                || self.views.iter().flatten().any(named)
                || self.msgs().iter().any(|x| match x.kind {
                    PREP => x.b == id,
                    SETTLE | ROLLBACK => x.a == id,
                    _ => false,
                })
                || self.p.iter().any(|pr| pr.phase == PREPARING && pr.id == id);
            if !used {
                self.views[usize::from(id)] = [MISSING; N];
                self.rolled &= !(1 << id);
            }
        }
    }

    /// The replies p may count from n: R_NONE, R_ACCEPTED, or history bits.
    pub fn options(&self, p: usize, n: usize) -> Vec<u8> {
        let pr = &self.p[p];
        let mut out = vec![R_NONE];
        if pr.accepted & (1 << n) != 0 {
            out.push(R_ACCEPTED);
        }
        let mut bits = pr.hist[n];
        while bits != 0 {
            out.push(bits.trailing_zeros() as u8);
            bits &= bits - 1;
        }
        out
    }
}

/// What a read of every node allows, by the keys it counted (MISSING
/// where it counted nothing).
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Floor(u8),
    /// Every node a mark: create.
    Create,
    /// Every node prepared for this creation: settle it.
    Adopt(u8),
    /// Roll these nodes back (bit mask).
    Rollback(u8),
    Nothing,
}

/// The keys a read's decision counted (MISSING where none) and which of its
/// prepared ones said ripe (a bit per node), decoded from the codes of the
/// replies it counts.
pub fn read_keys(codes: [u8; N]) -> ([u8; N], u8) {
    let mut keys = [MISSING; N];
    let mut ripe = 0;
    for (n, &c) in codes.iter().enumerate() {
        keys[n] = match c {
            R_NONE => MISSING,
            0..8 => c,
            8..14 => PREPARED + c - 8,
            14..20 => {
                ripe |= 1 << n;
                PREPARED + c - 14
            }
            _ => unborn((c - 20) / 6, (c - 20) % 6),
        };
    }
    (keys, ripe)
}

/// The verdict on `keys` (one per node, MISSING for no reply), `ripe`
/// telling which prepared keys said ripe.
pub fn verdict(rules: &Rules, keys: [u8; N], ripe: u8) -> Verdict {
    let holders: Vec<u8> = keys.iter().copied().filter(|&k| holder(k)).collect();
    if holders.len() >= MAJORITY {
        return Verdict::Floor(*holders.iter().max().unwrap());
    }
    if !holders.is_empty() || keys.contains(&MISSING) {
        return Verdict::Nothing;
    }
    if keys.iter().all(|&k| is_unborn(k)) {
        return Verdict::Create;
    }
    if rules.adopt && keys.iter().all(|&k| k == keys[0]) {
        return Verdict::Adopt(keys[0] - PREPARED);
    }
    let Some(rule) = rules.rollback else {
        return Verdict::Nothing;
    };
    let prepared = (0..N).fold(0u8, |acc, n| acc | (u8::from(is_prepared(keys[n])) << n));
    // Per creation x, the nodes prepared for it or rolled back from it.
    let of = |x: u8| {
        keys.iter()
            .filter(|&&k| k == PREPARED + x || (is_unborn(k) && tag(k) == x + 1))
            .count()
    };
    let most = keys
        .iter()
        .filter(|&&k| is_prepared(k))
        .map(|&k| of(k - PREPARED))
        .max()
        .unwrap_or(0);
    let enough = if rule.majority {
        most >= MAJORITY
    } else {
        most >= 1
    };
    if enough && (!rule.seen_ripe || ripe & prepared == prepared) {
        Verdict::Rollback(prepared)
    } else {
        Verdict::Nothing
    }
}

/// Keys from which no rule writes again if every request in flight is
/// lost, time passing included: fewer than a majority of holders, and
/// either a holder or a view that neither creates nor rolls back once
/// every prepared node is ripe.
pub fn dead_end(m: &Model, s: &State) -> bool {
    // A read marks a missing key.
    let keys = s.nodes.map(|k| if k == MISSING { UNBORN } else { k });
    matches!(verdict(&m.rules, keys, u8::MAX), Verdict::Nothing)
}

/// One creation both settled on a node and rolled back on another: the
/// settled node is a holder that no creation completes (a holder never
/// creates), beside marks; the dead end a rollback must never make.
pub fn settled_and_rolled_back(s: &State) -> bool {
    s.mixed
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
