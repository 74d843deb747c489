//! The bounds of a `TwoPhase` exploration, its events, and a proposer's
//! rounds: what a round sends, the replies it may count, and what each
//! decision does.
//!
//! A proposer's decision starts its next round in the same step (a read,
//! phase 1 of a creation, or a proposal): a proposer that waits before
//! sending is a proposer whose requests are in flight a while longer, which
//! the model has anyway, so this loses no run and saves the states between.
//! Phase 2 of a creation is sent as requests nobody waits for: the replies
//! change nothing, the proposer reads again whatever they say.

use super::*;
use crate::seq_model::explorer::{Violation, say};
use crate::seq_model::{MAJORITY, node_name, proposer_name};

/// How a creator chooses its creation's id (`TwoPhase::creation_ids`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreationIds {
    /// The greatest creation token read, else the greatest mark token: the
    /// first rules, unsafe (`tests.rs`).
    Greatest,
    /// The rules of `src/seq/view.rs` (`creation`): with prepared nodes,
    /// no mark, and every non-holder prepared for the same X, X (phase 1 then only checks);
    /// else, with no holder, an id drawn from the whole view (equal views,
    /// equal ids; different views, different ids: a fresh token per view,
    /// interned in `State::views`). Token order plays no part then.
    OfView,
    /// The rule now in `src/seq/view.rs`: with every node answered, a view
    /// with a holder never creates; a view of marks only draws its id from
    /// the view (as `OfView`); a view whose every node is prepared for the
    /// same X adopts X (phase 1 then only checks); any other view (prepared
    /// nodes and marks mixed, different creations) does not create.
    Final,
}

/// One exploration: where the keys start, and the bounds.
#[derive(Clone, Debug)]
pub struct TwoPhase {
    /// How a creator chooses its creation's id.
    pub creation_ids: CreationIds,
    /// Each node's key at the start (tokens ranked 0, 1, ...).
    pub initial: [u8; N],
    /// The highest value handed out before the run, by a call that
    /// completed before any call of the run started.
    pub handed_before: Option<u8>,
    /// The floor each proposer knows at the start (from earlier calls).
    pub floors: [Option<u8>; PROPOSERS],
    /// Calls per proposer.
    pub calls: u8,
    /// Rounds (reads, phases 1, proposals) per call, per proposer.
    pub rounds: [u8; PROPOSERS],
    /// Data losses in a run (see `Event::Lose`).
    pub losses: u8,
    /// A node that lost its data before the run: it is the first loss.
    pub lost_before: Option<u8>,
    /// A loss is a restart: the requests in flight to the node are lost
    /// with its connections (else it executes them afterwards, as after a
    /// FLUSHALL, a DEL or an eviction).
    pub loss_resets_connections: bool,
    /// A node that executes nothing and replies nothing (a paused process).
    pub frozen: Option<u8>,
    /// A request may still reach its node after its round ended (when
    /// false, it is dropped then: fewer runs, to find a run quickly; the
    /// phase-2 requests, which nobody waits for, are never dropped).
    pub late_requests: bool,
    /// Stop at the first state this holds in, and return the run to it.
    pub goal: Option<fn(&State) -> bool>,
    /// Visit one state of each mirror pair (P1 and P2 swapped).
    pub mirror: bool,
    /// States the search may visit before it gives up (a memory guard).
    pub limit: usize,
    /// The lowest counter the history bits tell apart.
    pub base: u8,
}

impl TwoPhase {
    pub fn new(initial: [u8; N], handed_before: Option<u8>) -> TwoPhase {
        TwoPhase {
            creation_ids: CreationIds::Greatest,
            initial,
            handed_before,
            floors: [None; PROPOSERS],
            calls: 1,
            rounds: [4; PROPOSERS],
            losses: 1,
            lost_before: None,
            loss_resets_connections: false,
            frozen: None,
            late_requests: true,
            goal: None,
            mirror: true,
            limit: 20_000_000,
            base: initial
                .iter()
                .copied()
                .filter(|&c| holder(c))
                .min()
                .unwrap_or(0),
        }
    }

    pub fn handed_bit(&self, v: u8) -> u32 {
        assert!(
            v >= self.base && v - self.base < 32,
            "value {v} outside the handed bits"
        );
        1 << (v - self.base)
    }

    pub fn max_handed(&self, s: &State) -> u8 {
        if s.handed == 0 {
            0
        } else {
            self.base + 31 - s.handed.leading_zeros() as u8
        }
    }

    pub fn symmetric(&self) -> bool {
        self.mirror && self.floors[0] == self.floors[1] && self.rounds[0] == self.rounds[1]
    }
}

/// One step of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The node's key disappears. At most `losses` in a run, and a node
    /// that lost its data counts as lost until it is a holder again: a
    /// second loss waits for that (at most a minority lost at a time).
    Lose(u8),
    /// The node executes the request, which writes its key; the second
    /// field ranks an unranked token among the ranked ones (0: lowest) at
    /// its first mark, and is 0 otherwise.
    Execute(Msg, u8),
    /// Starts a call (giving up the current one, which has no round left)
    /// and its first round.
    StartCall(u8),
    /// The proposer stops waiting and decides with the reply it counts
    /// from each node (a history bit, or R_NONE), then starts its next
    /// round.
    Decide(u8, [u8; N]),
}

impl State {
    /// The key the live CREATING round of p asks node n to take.
    pub fn target(&self, p: usize, n: usize) -> u8 {
        let pr = &self.p[p];
        if holder(pr.view[n]) {
            pr.view[n]
        } else {
            prepared(pr.id)
        }
    }

    /// Adds to p's history of n the reply n would give p's live round now,
    /// when giving it writes nothing (else that is an `Execute` step).
    pub fn note(&mut self, m: &TwoPhase, p: usize, n: usize) {
        let pr = &self.p[p];
        if pr.phase == IDLE || pr.pending & (1 << n) == 0 {
            return;
        }
        let c = self.nodes[n];
        let bit = match pr.phase {
            READING if c == MISSING => return,
            READING => read_bit(m.base, c),
            PROPOSING if holder(c) && c < pr.value => return,
            PROPOSING if holder(c) => {
                assert!(c - m.base < 32, "counter {c} outside the history bits");
                c - m.base
            }
            PROPOSING => B_MISSING,
            _ if c == self.target(p, n) => B_OK,
            _ => return,
        };
        self.p[p].hist[n] |= 1 << bit;
    }

    /// n's key changed: every live round that may still reach n notes it.
    pub fn touch(&mut self, m: &TwoPhase, n: usize) {
        for p in 0..PROPOSERS {
            self.note(m, p, n);
        }
    }

    /// Sends a request to every node (but a frozen one) for p's new round.
    pub fn send(
        &mut self,
        m: &TwoPhase,
        p: usize,
        phase: u8,
        request: impl Fn(&State, usize) -> Msg,
    ) {
        let mut pending = 0;
        for n in 0..N {
            if m.frozen != Some(n as u8) {
                let x = request(self, n);
                self.push(x);
                pending |= 1 << n;
            }
        }
        let pr = &mut self.p[p];
        pr.phase = phase;
        pr.hist = [0; N];
        pr.pending = pending;
        for n in 0..N {
            self.note(m, p, n);
        }
    }

    /// Ends p's live round: the replies it has not counted are ignored from
    /// now on, and its requests may still reach their nodes.
    pub fn end_round(&mut self, m: &TwoPhase, p: usize) {
        let pr = &mut self.p[p];
        pr.phase = IDLE;
        pr.hist = [0; N];
        pr.pending = 0;
        pr.view = [0; N];
        pr.id = 0;
        if !m.late_requests {
            self.retain(|_, x| usize::from(x.who) != p);
        }
        for x in &mut self.msgs[..usize::from(self.len)] {
            if usize::from(x.who) == p {
                x.who = NONE;
            }
        }
    }

    /// Counts a round of p's call; false when the call has none left.
    pub fn spend(&mut self, m: &TwoPhase, p: usize) -> bool {
        let pr = &mut self.p[p];
        if pr.rounds >= m.rounds[p] {
            return false;
        }
        pr.rounds += 1;
        true
    }

    /// p's next round: read if no floor is known, else propose floor + 1.
    pub fn next_round(&mut self, m: &TwoPhase, p: usize, describe: bool) -> String {
        if !self.spend(m, p) {
            return say!(describe, "no round left in this call");
        }
        let who = p as u8;
        let floor = self.p[p].floor;
        if floor == MISSING {
            let a = self.mint();
            self.send(m, p, READING, |_, n| Msg {
                kind: READ,
                node: n as u8,
                who,
                a,
                b: 0,
            });
            say!(
                describe,
                "reads every node with token {}",
                self.label_name(a)
            )
        } else {
            assert!(floor < MARK - 1, "values outgrew the model");
            let value = floor + 1;
            self.p[p].value = value;
            self.send(m, p, PROPOSING, |_, n| Msg {
                kind: PROPOSE,
                node: n as u8,
                who,
                a: value,
                b: 0,
            });
            say!(describe, "proposes {value} (floor {floor}) to every node")
        }
    }

    /// Phase 1 of a creation from `view`, with creation token `id`.
    pub fn create(
        &mut self,
        m: &TwoPhase,
        p: usize,
        view: [u8; N],
        id: u8,
        describe: bool,
    ) -> String {
        if !self.spend(m, p) {
            return say!(describe, "would create, but has no round left in this call");
        }
        let pr = &mut self.p[p];
        pr.view = view;
        pr.id = id;
        let who = p as u8;
        self.send(m, p, CREATING, |s, n| Msg {
            kind: CAS,
            node: n as u8,
            who,
            a: view[n],
            b: s.target(p, n),
        });
        say!(
            describe,
            "creates with id {}: phase 1, CAS(what it read -> creating:{} or the same counter) to every node",
            self.token_name(id),
            self.token_name(id)
        )
    }

    /// The index of p's live request to n.
    pub fn live(&self, p: usize, n: usize) -> usize {
        self.msgs()
            .iter()
            .position(|x| usize::from(x.who) == p && usize::from(x.node) == n)
            .expect("a pending request is in flight")
    }

    pub fn describe_reply(&self, m: &TwoPhase, phase: u8, value: u8, code: u8) -> String {
        match (phase, code) {
            (READING, _) => self.cell_text(read_cell(m.base, code)),
            (PROPOSING, B_ACCEPTED) => format!("accepted {value}"),
            (PROPOSING, B_MISSING) => "Missing".to_string(),
            (PROPOSING, c) => format!("refused, holds {}", m.base + c),
            _ => "ok".to_string(),
        }
    }

    /// p decides with the replies `codes`; its round ends, and the next
    /// one starts.
    pub fn decide(&mut self, m: &TwoPhase, p: usize, codes: [u8; N], describe: bool) -> String {
        let pr = self.p[p];
        let who = proposer_name(p as u8);
        let replies: Vec<String> = (0..N)
            .filter(|&n| describe && codes[n] != R_NONE)
            .map(|n| {
                let r = self.describe_reply(m, pr.phase, pr.value, codes[n]);
                format!("{} {r}", node_name(n as u8))
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
        for n in (0..N).rev() {
            // A counted reply that wrote nothing: that request is spent.
            if codes[n] != R_NONE && pr.pending & (1 << n) != 0 {
                let i = self.live(p, n);
                self.remove_at(i);
            }
        }
        self.end_round(m, p);
        let chosen = |n: usize| codes[n] != R_NONE;
        let outcome = match pr.phase {
            READING => {
                let cells = codes.map(|c| {
                    if c == R_NONE {
                        MISSING
                    } else {
                        read_cell(m.base, c)
                    }
                });
                let holders: Vec<u8> = cells.iter().copied().filter(|&c| holder(c)).collect();
                if holders.len() >= MAJORITY {
                    let floor = *holders.iter().max().unwrap();
                    self.p[p].floor = floor;
                    let next = self.next_round(m, p, describe);
                    say!(describe, "floor {floor}; {next}")
                } else if (0..N).all(chosen) && eligible_under(m.creation_ids, &cells) {
                    let (cells, id) = match m.creation_ids {
                        CreationIds::Greatest => {
                            let prepared = cells.iter().filter(|&&c| is_prepared(c));
                            let marks = cells.iter().filter(|&&c| is_mark(c));
                            let id = prepared
                                .max()
                                .or_else(|| marks.max())
                                .map(|&c| token(c))
                                .expect("a view without holders has tokens");
                            (cells, id)
                        }
                        CreationIds::OfView | CreationIds::Final => match adopted(&cells) {
                            Some(x) => (cells, x),
                            None => self.intern(cells),
                        },
                    };
                    self.create(m, p, cells, id, describe)
                } else {
                    let next = self.next_round(m, p, describe);
                    say!(describe, "no floor, no creation; {next}")
                }
            }
            CREATING if codes == [B_OK; N] => {
                let mut sent = Vec::new();
                for n in 0..N {
                    if !holder(pr.view[n]) {
                        self.push(Msg {
                            kind: CAS,
                            node: n as u8,
                            who: NONE,
                            a: prepared(pr.id),
                            b: 0,
                        });
                        sent.push(node_name(n as u8));
                    }
                }
                let next = self.next_round(m, p, describe);
                say!(
                    describe,
                    "phase 2, CAS(creating:{} -> 0) to {} (nobody waits for the replies); {next}",
                    self.token_name(pr.id),
                    sent.join(" and ")
                )
            }
            CREATING => {
                let next = self.next_round(m, p, describe);
                say!(describe, "phase 1 failed; {next}")
            }
            _ => self.proposed(m, p, codes, describe),
        };
        say!(describe, "{counts}: {outcome}")
    }

    /// The decision on a proposal, with the replies `codes`.
    pub fn proposed(&mut self, m: &TwoPhase, p: usize, codes: [u8; N], describe: bool) -> String {
        let v = self.p[p].value;
        let (mut accepted, mut voted, mut missing) = (0, 0, 0);
        for &code in &codes {
            let raise = match code {
                R_NONE => continue,
                B_MISSING => {
                    missing += 1;
                    continue;
                }
                B_ACCEPTED => {
                    accepted += 1;
                    v
                }
                c => m.base + c,
            };
            voted += 1;
            let f = &mut self.p[p].floor;
            *f = (*f).max(raise);
        }
        if accepted >= MAJORITY {
            let start_max = self.p[p].start_max;
            self.p[p].in_call = false;
            let bit = m.handed_bit(v);
            if self.handed & bit != 0 {
                self.violation = Some(Violation::Duplicate(v));
            } else if v <= start_max {
                self.violation = Some(Violation::Order {
                    earlier: start_max,
                    later: v,
                });
            }
            self.handed |= bit;
            return say!(describe, "HANDS OUT {v}");
        }
        let forget = voted < MAJORITY && missing > 0;
        if forget {
            self.p[p].floor = MISSING;
        }
        let next = self.next_round(m, p, describe);
        if forget {
            say!(
                describe,
                "no majority, a Missing: forgets its floor; {next}"
            )
        } else {
            say!(describe, "no majority accepted {v}; {next}")
        }
    }
}

/// `CreationIds::OfView`'s adoption: the token X when the view has a prepared node,
/// no mark, and every non-holder is `creating:X`.
pub fn adopted(cells: &[u8; N]) -> Option<u8> {
    let mut others = cells.iter().copied().filter(|&c| !holder(c));
    let first = others.next()?;
    (is_prepared(first) && others.all(|c| c == first)).then(|| token(first))
}

/// All N replied: no holder, or holders and every other node prepared for one creation.
/// (The same views under both `CreationIds`: with no holder, `OfView` adopts
/// or draws an id from the view; with holders, it adopts.)
pub fn eligible(cells: &[u8; N]) -> bool {
    let mut others = cells.iter().copied().filter(|&c| !holder(c));
    let first = others.clone().next();
    cells.iter().all(|&c| !holder(c)) || others.all(|c| is_prepared(c) && Some(c) == first)
}

/// `CreationIds::Final`: all N replied, no holder, and either every node a
/// mark (an id drawn from the view) or every node prepared for the same creation (adopted).
pub fn final_eligible(cells: &[u8; N]) -> bool {
    cells.iter().all(|&c| is_mark(c))
        || (is_prepared(cells[0]) && cells.iter().all(|&c| c == cells[0]))
}

/// The views that create under `ids` (all N replied).
pub fn eligible_under(ids: CreationIds, cells: &[u8; N]) -> bool {
    match ids {
        CreationIds::Final => final_eligible(cells),
        CreationIds::Greatest | CreationIds::OfView => eligible(cells),
    }
}
