//! An exhaustive explorer of the majority sequence (`src/seq/`) when a node
//! loses its data: every interleaving of a small, bounded system is visited
//! (breadth first, so that a violation comes with a shortest run), under
//! three sets of rules, checking in every reachable state that
//!
//! * no value is handed out twice (across proposers and calls), and
//! * real-time order holds: a call that starts after another call handed
//!   out vX hands out a value above vX.
//!
//! # The system
//!
//! N = 3 nodes, each with one counter: a small integer, or MISSING when the
//! key is gone. Two proposers (P1, P2), each making `calls` calls; a call is
//! up to `attempts` attempts until it hands out a value or gives up. An
//! attempt reads every node when the proposer knows no floor (the highest
//! counter it has seen), then proposes floor + 1 to every node; a node
//! accepts a proposal (set-if-less-than) when its counter is below it, else
//! refuses and says what it holds, which raises the proposer's floor. The
//! proposer keeps its floor from call to call, as `MajoritySequence` does.
//! A value is handed out when a majority (2) accepted it. `handed_before`
//! stands for the calls that completed before the run: the counters
//! [101, 100, 101] start with 101 handed out, [100, 100, 100] with 100.
//!
//! Requests in flight form an unordered multiset: a node executes any of
//! them at any later moment, or never (a lost message, or one that is
//! still in flight when the run ends), and a proposer counts any subset of
//! the replies that exist when it decides. Loss and reordering are thus
//! both in the model without a "drop" step. A node may lose its data at any
//! moment (`Event::Lose`): at most once in a run (a minority of the 3), or,
//! with `losses: 2`, a second time once the first lost node holds the key
//! again. By default the requests in flight to that node survive the loss,
//! as after a FLUSHALL, a DEL or an eviction; `loss_resets_connections`
//! drops them instead, as a restart does.
//!
//! # Time
//!
//! There are no clocks. A proposer's round (the requests of one read, one
//! proposal, or one repair read) is *live* from its sending until the
//! proposer decides: a proposer may stop waiting at any moment (its
//! timeout) and decide with the replies it has. Under `Quarantine` every
//! round also has a bounded lifetime, modelled as `Event::Expire`, which
//! the environment may take at any moment of a live round: the proposer
//! then counts none of that round's replies and gives the round up (a
//! proposal's value is burned). In both cases the round *ends*: its
//! requests may still reach the nodes later, but no reply of it is ever
//! counted. The quarantine is kept per node a proposer saw missing: WAITING
//! while the other proposer's round that was live at that moment has not
//! ended, READY afterwards (`Proposer::seen`). A proposer that saw a node
//! missing more than once keeps the earliest sighting (the weakest
//! requirement: more runs). Under `Today` and `NaiveRepair` a round has no
//! lifetime and ends only when its proposer decides.
//!
//! The abstraction has limits: a lifetime is not a duration here, so a
//! round may outlive any number of other steps (a loss, a restart, another
//! proposer's whole call), as a slow network or a paused process allows;
//! and there are only two proposers, so "every round live at the sighting"
//! is the other proposer's round.
//!
//! # The rules
//!
//! * `Today`, the shipped scripts: a missing key reads as 0 and votes like
//!   0, so it accepts any proposal.
//! * `NaiveRepair`: a missing key does not vote (a proposal finds it
//!   MISSING and changes nothing) and is not a holder; a read that counts
//!   a majority of holders and sees a node MISSING sends it, at once, SET
//!   (if still missing) to that read's highest counter, then proposes.
//! * `Quarantine`, the rule to ship: a missing key neither votes nor counts
//!   towards a read's majority; a floor needs a majority of *holders*. A
//!   proposer that saw node X missing may repair it (`Event::Repair`, at
//!   most `repairs` times) only once every round live at that sighting has
//!   ended; it then reads every node again and, if that new read counted a
//!   majority of holders or all N nodes, sends X SET (if still missing) to
//!   the highest holder's counter (0 when all N replied and every holder
//!   holds 0). A fresh sequence is created only by a read that counted all
//!   N nodes, all missing: SET 0 if missing to every node, then floor 0
//!   (with `creation_waits`, that read only counts as seeing every node
//!   missing, and the creation is made by a repair round after the same
//!   wait). Values handed out are at least 1.
//!
//! # How the state space is kept small
//!
//! * A read changes no node, so it is not a step of its own: each live
//!   round keeps, per node, every reply the node could have given it so far
//!   (`Proposer::hist`: the counters the node held since the request was
//!   sent), and the decision picks one of them or none. Likewise for a
//!   refused proposal and a proposal that found the key missing. Only the
//!   steps that change a node are steps: accepting a proposal, setting a
//!   missing key, losing the key. This is the same set of runs, without the
//!   interleavings of steps that commute. (A proposal, once accepted, has
//!   never been refused: its refusals are dropped from the history then.)
//! * A call makes its first attempt in the step that starts it: a call that
//!   started earlier would behave the same and be checked against a
//!   real-time bound no higher, so no violation is lost. Giving a call up
//!   shows only through the next call, so it is part of that step too.
//! * Requests that can no longer change anything are forgotten (a proposal
//!   at or below a counter, a SET on a held key, once no key can go missing
//!   any more), and P1 and P2 are interchangeable when they start alike: the
//!   search visits one state of each mirror pair, and a run found is
//!   replayed as a run of the concrete system.
//!
//! # Bounds
//!
//! The tests use one call of one attempt per proposer, one repair round
//! each and one loss (`small`): the bounds under which `Today` and
//! `NaiveRepair` already hand out a value twice. `Quarantine` is also run
//! with a proposer that knows a floor from earlier calls (it proposes at
//! once), with two attempts per call, and from all keys missing without a
//! loss; the liveness test uses two calls each and no loss. With one
//! attempt a proposer has no round left after a repair, so there the
//! quarantine wait is not needed; with two attempts it is: without it
//! (every sighting READY at once) the two-attempt test hands out 101 twice,
//! as `NaiveRepair` does. The whole file
//! takes about 45 s in a debug build on 2 cores. `deeper_bounds` (ignored;
//! `cargo test --release --test seq_model -- --ignored --nocapture`, about
//! 9 minutes) explores larger bounds and asserts what they find:
//!
//! | `Quarantine`, start  | calls x attempts, repairs, losses  | states     | finds                |
//! |----------------------|------------------------------------|------------|----------------------|
//! | 100 100 100          | 1 x 2, 1, 1                        | 10 061 156 | nothing              |
//! | 101 100 101          | 1 x 2, 1, 1                        | 10 061 156 | nothing              |
//! | 100 100 100          | 2 x 1, 1, 1                        | 18 810 198 | nothing              |
//! | 100 100 100, P1 knows 100 | 2 x 1, 1, 1                   | 18 030 730 | nothing              |
//! | 100 100 100, both know 100 | 2 x 1, 1, 2                  | 11 439 612 | 101 handed out twice |
//! | same, losses are restarts | 2 x 1, 1, 2                   |  9 167 207 | 101 handed out twice |
//! | all missing, restarts | 1 x 1, 0, 1                       |    111 737 | 1 handed out twice   |
//! | all missing, creation waits | 1 x 2, 1, 1                 |  9 768 159 | 1 handed out twice   |
//!
//! (A search that finds a violation stops there: its count is the states
//! visited until then.)
//!
//! # What it finds
//!
//! * `Today` hands out 101 twice: the known bug.
//! * `NaiveRepair` hands out 101 twice: a proposal accepted by a node just
//!   before it loses its data is counted, with a late acceptance elsewhere,
//!   while another proposer repairs the node from a read that did not see
//!   that proposal, and has the repaired node accept 101 again.
//! * `Quarantine` finds nothing from held counters with one loss, within
//!   the bounds above. It is unsafe in two other cases:
//!   - creation: all N read missing does not mean that nothing was handed
//!     out. A creation write (SET 0 if missing) lands on a node that was
//!     created, accepted 1 and lost its data meanwhile, or a node that lost
//!     its data before the other creation writes landed makes all N read
//!     missing again; 1 is handed out twice, with one loss, with losses as
//!     restarts, and with the creation waiting out the quarantine too;
//!   - a second loss of the node once repaired: another proposer's repair
//!     of the first loss (its SET if missing, decided from an older read)
//!     lands after the second loss and sets the node below a value it had
//!     accepted for a round that is still live, which then counts that
//!     acceptance together with another node's; the quarantine waited for
//!     the rounds live when the *first* loss was seen.
//!
//! # Reading a run
//!
//! Each line is a step, followed by the counters after it. A decision lists
//! the replies the proposer counts; a counter read (or a refusal) was
//! returned by the node at some earlier moment of that round, when it held
//! that counter.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::time::Instant;

/// `format!` when the step is to be described, else nothing (the search
/// never reads the words).
macro_rules! say {
    ($describe:expr, $($arg:tt)*) => {
        if $describe {
            format!($($arg)*)
        } else {
            String::new()
        }
    };
}

/// Nodes (Redis masters holding the counter).
const N: usize = 3;
/// A majority of N.
const MAJORITY: usize = 2;
/// Processes calling `next` concurrently.
const PROPOSERS: usize = 2;
/// A node's counter when its key is missing; also "no floor known".
const MISSING: u8 = u8::MAX;
/// No node / no proposer.
const NONE: u8 = u8::MAX;
/// Room for requests in flight.
const CAP: usize = 24;
/// Values stay below this (7 bits in a request).
const VALUE_LIMIT: u8 = 127;

/// Which algorithm the proposers and nodes follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rules {
    /// The shipped scripts: a missing key reads as 0 and votes like 0.
    Today,
    /// A missing key does not vote; a read that sees it missing beside a
    /// majority of holders sets it to that read's maximum at once.
    NaiveRepair,
    /// A missing key neither votes nor counts; it is repaired only after a
    /// quarantine wait and a fresh read; a fresh sequence is created only
    /// from a read of all N nodes, all missing.
    Quarantine,
}

/// One exploration: the rules, where the counters start, and the bounds.
#[derive(Clone, Debug)]
struct Model {
    rules: Rules,
    /// Each node's counter at the start (`None`: key missing).
    initial: [Option<u8>; N],
    /// The highest value handed out before the run, by a call that
    /// completed before any call of the run started.
    handed_before: Option<u8>,
    /// The floor each proposer knows at the start (from earlier calls).
    floors: [Option<u8>; PROPOSERS],
    /// Calls per proposer.
    calls: u8,
    /// Attempts (read if no floor is known, then propose) per call.
    attempts: u8,
    /// Repair rounds per proposer (Quarantine).
    repairs: u8,
    /// Data losses in a run; a second one only once the first lost node
    /// holds the key again.
    losses: u8,
    /// A loss is a restart: the requests in flight to that node are lost
    /// with its connections (otherwise they are still executed afterwards,
    /// as after a FLUSHALL, a DEL or an eviction).
    loss_resets_connections: bool,
    /// Quarantine variant: a read that finds all N keys missing does not
    /// create the sequence; it counts as seeing every node missing, and
    /// the creation waits, like a repair, for the rounds live then.
    creation_waits: bool,
    /// Stop at the first state this holds in, and return the run to it.
    goal: Option<fn(&State) -> bool>,
    /// Visit one state of each mirror pair (P1 and P2 swapped).
    mirror: bool,
    /// States the search may visit before it gives up (a memory guard).
    limit: usize,
    /// The lowest counter value the history bits tell apart (see
    /// `Proposer::hist`): the lowest initial counter.
    base: u8,
}

impl Model {
    fn new(rules: Rules, initial: [Option<u8>; N], handed_before: Option<u8>) -> Model {
        Model {
            rules,
            initial,
            handed_before,
            floors: [None; PROPOSERS],
            calls: 2,
            attempts: 2,
            repairs: 1,
            losses: 1,
            loss_resets_connections: false,
            creation_waits: false,
            goal: None,
            mirror: true,
            limit: 5_000_000,
            base: initial.iter().flatten().copied().min().unwrap_or(0),
        }
    }
}

// Request kinds. Reads are not messages: see `Proposer::hist`.
const PROPOSE: u8 = 1;
/// Set-if-missing (a repair or a creation); nobody waits for its reply.
const SET: u8 = 2;

/// A request in flight, in 16 bits: kind, node, `who` (the proposer whose
/// live round sent it, or NONE once that round has ended: the node may
/// still execute it, nobody counts the reply) and the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Msg(u16);

const EMPTY: Msg = Msg(u16::MAX);

impl Msg {
    fn new(kind: u8, node: u8, who: u8, val: u8) -> Msg {
        assert!(val < 128);
        let who = if who == NONE { 3 } else { who };
        Msg(u16::from(kind & 1) << 15
            | u16::from(node) << 13
            | u16::from(who) << 11
            | u16::from(val))
    }
    fn kind(self) -> u8 {
        if self.0 >> 15 == 1 { PROPOSE } else { SET }
    }
    fn node(self) -> u8 {
        (self.0 >> 13 & 3) as u8
    }
    fn who(self) -> u8 {
        match (self.0 >> 11 & 3) as u8 {
            3 => NONE,
            w => w,
        }
    }
    fn val(self) -> u8 {
        (self.0 & 0x7f) as u8
    }
    /// The same request, its round over.
    fn stale(self) -> Msg {
        Msg(self.0 | 3 << 11)
    }
}

// What a proposer knows about a node it saw missing (Quarantine).
const UNSEEN: u8 = 0;
/// Seen missing while the other proposer's round was live, and that round
/// has not ended yet.
const WAITING: u8 = 1;
/// Seen missing, and every round live at that moment has ended.
const READY: u8 = 2;

// History bits (`Proposer::hist`): the replies a node may have given.
/// The key was missing at a moment when the other proposer had no live
/// round, or whose live round has ended since (READY).
const H_MISSING_READY: u32 = 1 << 31;
/// The key was missing only while the other proposer's current round was
/// live (WAITING for it to end).
const H_MISSING_WAITING: u32 = 1 << 30;
/// Counter 0 (Today's reading of a missing key), when the base is above 0.
const H_ZERO: u32 = 1 << 29;
/// Counters base .. base + H_SPAN - 1: bit (counter - base).
const H_SPAN: u8 = 29;

// Reply codes in `Event::Decide`.
const R_NONE: u8 = u8::MAX;
const R_ACCEPTED: u8 = u8::MAX - 1;
const R_MISSING: u8 = u8::MAX - 2;

// A proposer's phase: no live round, or the kind of its live round.
const IDLE: u8 = 0;
const READING: u8 = 1;
const PROPOSING: u8 = 2;
const REPAIRING: u8 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Proposer {
    /// Calls started.
    calls: u8,
    in_call: bool,
    /// Attempts made in the current call.
    attempts: u8,
    phase: u8,
    /// The value proposed by the live PROPOSING round.
    value: u8,
    /// Highest counter known, MISSING when nothing is known.
    floor: u8,
    /// Highest value handed out (anywhere) when the current call started.
    start_max: u8,
    /// Per node, every reply the node may have given to the live round so
    /// far (H_* bits and counter bits): a read executes at some moment
    /// between its sending and the decision, and returns the counter of
    /// that moment; a proposal that is refused, or finds the key missing,
    /// changes nothing either, so it too may have been executed at any
    /// moment its request was in flight. Only accepting a proposal and
    /// setting a missing key are steps of their own (`Event::Execute`).
    hist: [u32; N],
    /// Nodes that accepted the live PROPOSING round's value.
    accepted: u8,
    /// Nodes the live round's request may still reach.
    pending: u8,
    /// Nodes seen missing (UNSEEN, WAITING, READY).
    seen: [u8; N],
    /// Repair rounds started.
    repairs: u8,
    /// Nodes the live REPAIRING round is for (bit mask).
    repairing: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Violation {
    /// The value was handed out twice.
    Duplicate(u8),
    /// `later` was handed out by a call that started after `earlier` had
    /// been handed out, and is not above it.
    Order { earlier: u8, later: u8 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct State {
    nodes: [u8; N],
    losses: u8,
    /// The last node that lost its data.
    lost: u8,
    /// Values handed out (bit v - base), `handed_before` included.
    handed: u32,
    violation: Option<Violation>,
    p: [Proposer; PROPOSERS],
    len: u8,
    /// Proposals and SETs in flight, sorted; EMPTY past `len`.
    msgs: [Msg; CAP],
}

/// One step of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// The node's key disappears (restart without data, flush, failover).
    Lose(u8),
    /// The proposer's live round reaches the end of its lifetime: it gives
    /// the round up, counting none of its replies; it has received the
    /// MISSING replies of the nodes in the mask (Quarantine).
    Expire(u8, u8),
    /// The node executes the request and changes: accepts a proposal, or
    /// sets a missing key.
    Execute(Msg),
    /// Starts a call (giving up the current one, if any, after its first
    /// attempt) and makes its first attempt at once.
    StartCall(u8),
    /// Another attempt of the current call: read if no floor is known, else
    /// propose floor + 1.
    Attempt(u8),
    /// The proposer stops waiting and decides with the reply it counts from
    /// each node (R_* codes, or a counter: read, or refusing a proposal).
    Decide(u8, [u8; N]),
    /// Starts a repair round for the nodes it saw missing (Quarantine).
    Repair(u8),
}

fn node_name(n: u8) -> String {
    format!("node {}", n + 1)
}

fn proposer_name(p: u8) -> String {
    format!("P{}", p + 1)
}

fn counter_text(c: u8) -> String {
    if c == MISSING {
        "MISSING".to_string()
    } else {
        c.to_string()
    }
}

fn mask_names(mask: u8) -> String {
    let names: Vec<String> = (0..N as u8)
        .filter(|n| mask & (1 << n) != 0)
        .map(node_name)
        .collect();
    if names.is_empty() {
        "no node".to_string()
    } else {
        names.join(" and ")
    }
}

fn describe_request(x: Msg) -> String {
    let from = if x.who() == NONE {
        "a".to_string()
    } else {
        format!("{}'s", proposer_name(x.who()))
    };
    match x.kind() {
        PROPOSE => format!("{from} proposal {}", x.val()),
        _ => format!("SET {} if missing", x.val()),
    }
}

/// The bit of value v in `State::handed`.
fn handed_bit(m: &Model, v: u8) -> u32 {
    assert!(
        v >= m.base && v - m.base < 32,
        "value {v} outside the handed bits"
    );
    1 << (v - m.base)
}

/// The replies a proposer may count from one node.
struct Options {
    len: u8,
    codes: [u8; 8],
}

impl Options {
    fn push(&mut self, code: u8) {
        self.codes[usize::from(self.len)] = code;
        self.len += 1;
    }

    fn codes(&self) -> &[u8] {
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
enum Reply {
    None,
    /// The key is missing; WAITING or READY (see `seen`).
    Missing(u8),
    Value(u8),
    Accepted,
    Refused(u8),
}

fn describe_reply(r: Reply, value: u8) -> String {
    match r {
        Reply::Missing(_) => "MISSING".to_string(),
        Reply::Value(v) => format!("counter {v}"),
        Reply::Accepted => format!("accepted {value}"),
        Reply::Refused(c) => format!("refused, holds {c}"),
        Reply::None => "none".to_string(),
    }
}

impl State {
    fn initial(m: &Model) -> State {
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

    fn max_handed(&self, m: &Model) -> u8 {
        if self.handed == 0 {
            0
        } else {
            m.base + 31 - self.handed.leading_zeros() as u8
        }
    }

    fn msgs(&self) -> &[Msg] {
        &self.msgs[..usize::from(self.len)]
    }

    fn push(&mut self, msg: Msg) {
        let len = usize::from(self.len);
        assert!(len < CAP, "more than {CAP} requests in flight");
        self.msgs[len] = msg;
        self.len += 1;
    }

    fn remove(&mut self, msg: Msg) -> bool {
        let len = usize::from(self.len);
        match self.msgs[..len].iter().position(|&x| x == msg) {
            Some(i) => {
                self.msgs.copy_within(i + 1..len, i);
                self.msgs[len - 1] = EMPTY;
                self.len -= 1;
                true
            }
            None => false,
        }
    }

    fn retain(&mut self, keep: impl Fn(Msg) -> bool) {
        let len = usize::from(self.len);
        let mut out = 0;
        for i in 0..len {
            let x = self.msgs[i];
            if keep(x) {
                self.msgs[out] = x;
                out += 1;
            }
        }
        for slot in &mut self.msgs[out..len] {
            *slot = EMPTY;
        }
        self.len = out as u8;
    }

    fn send_set(&mut self, mask: u8, val: u8) {
        for n in 0..N as u8 {
            if mask & (1 << n) != 0 {
                self.push(Msg::new(SET, n, NONE, val));
            }
        }
    }

    /// The counter a request finds at n (Today's scripts read a missing key
    /// as 0).
    fn counter(&self, m: &Model, n: usize) -> u8 {
        let c = self.nodes[n];
        if c == MISSING && m.rules == Rules::Today {
            0
        } else {
            c
        }
    }

    /// Adds to p's history of n the reply n would give p's live round now.
    fn note(&mut self, m: &Model, p: usize, n: usize) {
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
    fn touch(&mut self, m: &Model, n: usize) {
        for p in 0..PROPOSERS {
            self.note(m, p, n);
        }
    }

    /// Starts a live round of p: phase, and a request to every node.
    fn start_round(&mut self, m: &Model, p: usize, phase: u8) {
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
    fn normalize(&mut self, m: &Model) {
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
    fn end_round(&mut self, p: usize) {
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
    fn see_missing(&mut self, p: usize, n: usize, status: u8) {
        if self.p[p].seen[n] == UNSEEN {
            self.p[p].seen[n] = status;
        }
    }

    fn propose(&mut self, m: &Model, p: usize) {
        let floor = self.p[p].floor;
        assert!(floor < VALUE_LIMIT, "values outgrew the model");
        self.p[p].value = floor + 1;
        self.start_round(m, p, PROPOSING);
    }

    /// Starts an attempt of p's call: read if no floor is known, else
    /// propose floor + 1.
    fn attempt(&mut self, m: &Model, p: usize, describe: bool) -> String {
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

    fn observe(&mut self, p: usize, counter: u8) {
        let f = &mut self.p[p].floor;
        if *f == MISSING || counter > *f {
            *f = counter;
        }
    }

    /// The nodes that may have replied MISSING to p's live round.
    fn missing_replies(&self, p: usize) -> u8 {
        let mut mask = 0;
        for n in 0..N {
            if self.p[p].hist[n] & (H_MISSING_READY | H_MISSING_WAITING) != 0 {
                mask |= 1 << n;
            }
        }
        mask
    }

    /// The replies p may count from n (R_* codes and counters).
    fn options(&self, m: &Model, p: usize, n: usize) -> Options {
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

    /// The state after `e`, or None when `e` is not possible here. `log`
    /// receives what happened, in words, when given.
    fn apply(&self, m: &Model, e: Event, log: Option<&mut String>) -> Option<State> {
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

    /// The representative of the state and its mirror image (P1 and P2
    /// swapped), when both proposers start alike: the search visits one.
    fn canon(self, m: &Model) -> State {
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
    fn restore_repair(&mut self, p: usize) {
        let pr = &mut self.p[p];
        for n in 0..N {
            if pr.repairing & (1 << n) != 0 {
                pr.seen[n] = READY;
            }
        }
        pr.repairing = 0;
    }

    /// p decides with the replies `codes`; its round ends.
    fn decide(&mut self, m: &Model, p: usize, codes: [u8; N], describe: bool) -> String {
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
                let repair = if m.rules == Rules::NaiveRepair && missing_mask != 0 {
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
fn candidates(m: &Model, s: &State, out: &mut Vec<Event>) {
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
/// FxHash: SipHash is slow in a debug build, and the states are not chosen
/// by an adversary.
#[derive(Default)]
struct Fx(u64);

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.write_u64(u64::from_le_bytes(chunk.try_into().unwrap()));
        }
        for &b in chunks.remainder() {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

/// What an exploration found.
struct Outcome {
    states: usize,
    /// The first violation found (breadth first: a shortest run), with the
    /// run that leads to it.
    violation: Option<(Violation, Vec<Event>)>,
    /// The run to the first state the goal holds in.
    reached: Option<Vec<Event>>,
    /// Most values handed out in one run.
    most_handed: u32,
    seconds: f64,
}

/// Breadth-first search of every state reachable under `m`; stops at the
/// first violation.
fn explore(m: &Model) -> Outcome {
    let started = Instant::now();
    let init = State::initial(m).canon(m);
    let before = init.handed.count_ones();
    let mut index: FxMap<State, u32> = FxMap::default();
    // Per state: its parent's index and the event from it.
    let mut parents: Vec<(u32, Event)> = vec![(u32::MAX, Event::Lose(0))];
    index.insert(init, 0);
    let mut queue = VecDeque::from([(init, 0u32)]);
    let mut events = Vec::new();
    let mut most_handed = 0;
    while let Some((s, i)) = queue.pop_front() {
        candidates(m, &s, &mut events);
        for &e in &events {
            let Some(next) = s.apply(m, e, None) else {
                continue;
            };
            let next = next.canon(m);
            if index.contains_key(&next) {
                continue;
            }
            let j = parents.len() as u32;
            parents.push((i, e));
            index.insert(next, j);
            most_handed = most_handed.max(next.handed.count_ones() - before);
            let reached = m.goal.is_some_and(|goal| goal(&next));
            if next.violation.is_some() || reached {
                let mut run = Vec::new();
                let mut k = j;
                while k != 0 {
                    let (parent, e) = parents[k as usize];
                    run.push(e);
                    k = parent;
                }
                run.reverse();
                let run = concrete(m, &run);
                return Outcome {
                    states: index.len(),
                    violation: next.violation.map(|v| (v, run.clone())),
                    reached: reached.then_some(run),
                    most_handed,
                    seconds: started.elapsed().as_secs_f64(),
                };
            }
            assert!(
                index.len() <= m.limit,
                "more than {} states: tighten the bounds",
                m.limit
            );
            queue.push_back((next, j));
        }
    }
    Outcome {
        states: index.len(),
        violation: None,
        reached: None,
        most_handed,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// The run, found among mirror images (`State::canon`), as events of one
/// concrete run from the initial state.
fn concrete(m: &Model, run: &[Event]) -> Vec<Event> {
    let mut c = State::initial(m).canon(m);
    let mut s = State::initial(m);
    let mut events = Vec::new();
    run.iter()
        .map(|&e| {
            c = c.apply(m, e, None).expect("the run replays").canon(m);
            candidates(m, &s, &mut events);
            let (e, next) = events
                .iter()
                .find_map(|&e| {
                    let next = s.apply(m, e, None)?;
                    (next.canon(m) == c).then_some((e, next))
                })
                .expect("a concrete step for each step of the run");
            s = next;
            e
        })
        .collect()
}

/// The run in words, one line per event, with the counters after it.
fn narrate(m: &Model, run: &[Event]) -> Vec<String> {
    let mut s = State::initial(m);
    let mut lines = vec![format!(
        "start: counters [{}], handed out before: {}",
        s.nodes.map(counter_text).join(", "),
        m.handed_before
            .map_or("nothing".to_string(), |v| v.to_string())
    )];
    for (i, &e) in run.iter().enumerate() {
        let mut text = String::new();
        s = s
            .apply(m, e, Some(&mut text))
            .expect("the run replays event by event");
        lines.push(format!(
            "{:>2}. {text}   [{}]",
            i + 1,
            s.nodes.map(counter_text).join(", ")
        ));
    }
    lines
}

fn report(name: &str, m: &Model, o: &Outcome) {
    println!(
        "{name}: {:?}, {} states, most values handed out in a run: {}, {:.1} s",
        m.rules, o.states, o.most_handed, o.seconds
    );
    if let Some((v, run)) = &o.violation {
        println!("  violation: {v:?}");
        for line in narrate(m, run) {
            println!("  {line}");
        }
    } else if let Some(run) = &o.reached {
        println!("  goal reached:");
        for line in narrate(m, run) {
            println!("  {line}");
        }
    }
}

const HOLD_100: [Option<u8>; N] = [Some(100), Some(100), Some(100)];
const SKEWED: [Option<u8>; N] = [Some(101), Some(100), Some(101)];
const FRESH: [Option<u8>; N] = [None, None, None];
/// Explores `m` and prints what it found.
fn check(name: &str, m: &Model) -> Outcome {
    let o = explore(m);
    report(name, m, &o);
    o
}

/// The smaller bounds of the tests below: one call of one attempt per
/// proposer, one repair round each, one loss.
fn small(rules: Rules, initial: [Option<u8>; N], handed_before: Option<u8>) -> Model {
    Model {
        calls: 1,
        attempts: 1,
        ..Model::new(rules, initial, handed_before)
    }
}

/// Where `e` happens in `run`.
fn position(run: &[Event], e: impl Fn(&Event) -> bool) -> Option<usize> {
    run.iter().position(e)
}

fn executes(e: &Event, kind: u8, node: u8, val: u8) -> bool {
    matches!(e, Event::Execute(x) if x.kind() == kind && x.node() == node && x.val() == val)
}

#[test]
fn today_s_rules_hand_out_101_twice_when_a_node_restarts_empty() {
    let m = Model::new(Rules::Today, SKEWED, Some(101));
    let o = check("today", &m);
    let (v, run) = o.violation.expect("Today's rules hand out a value twice");
    assert_eq!(v, Violation::Duplicate(101), "{run:?}");
    // A node that held 101 restarts empty, reads as 0 and accepts 101 again.
    let lost = run
        .iter()
        .find_map(|e| match e {
            Event::Lose(n) => Some(*n),
            _ => None,
        })
        .expect("a node loses its data");
    assert_eq!(m.initial[usize::from(lost)], Some(101), "{run:?}");
    assert!(
        run.iter().any(|e| executes(e, PROPOSE, lost, 101)),
        "{run:?}"
    );
}

#[test]
fn repairing_with_the_same_round_s_read_hands_out_a_value_twice() {
    let m = small(Rules::NaiveRepair, HOLD_100, Some(100));
    let o = check("naive repair", &m);
    let (v, run) = o
        .violation
        .expect("the naive repair hands out a value twice");
    let Violation::Duplicate(v) = v else {
        panic!("expected a duplicate, got {v:?}: {run:?}");
    };
    // A node accepts v, loses its data, is set back below v by a repair
    // from a read that did not see v, and accepts v a second time; the
    // proposer of the first acceptance still counts it.
    let lose = position(&run, |e| matches!(e, Event::Lose(_))).expect("a loss");
    let Event::Lose(n) = run[lose] else {
        unreachable!()
    };
    let first = position(&run, |e| executes(e, PROPOSE, n, v)).expect("a first acceptance");
    let repair = position(
        &run,
        |e| matches!(e, Event::Execute(x) if x.kind() == SET && x.node() == n),
    )
    .expect("a repair");
    let second =
        lose + position(&run[lose..], |e| executes(e, PROPOSE, n, v)).expect("a second acceptance");
    assert!(first < lose && lose < repair && repair < second, "{run:?}");
}

#[test]
fn the_quarantine_rules_hand_out_no_value_twice_and_keep_real_time_order() {
    let q = |initial, before| small(Rules::Quarantine, initial, before);
    for (name, m, least) in [
        ("quarantine, all hold 100", q(HOLD_100, Some(100)), 70_000),
        ("quarantine, [101, 100, 101]", q(SKEWED, Some(101)), 70_000),
        (
            // P1 made calls before: it proposes at once, P2 reads first.
            "quarantine, all hold 100, P1 knows 100",
            Model {
                floors: [Some(100), None],
                ..q(HOLD_100, Some(100))
            },
            50_000,
        ),
        (
            // Creation alone: no node loses its data.
            "quarantine, all missing, no loss",
            Model {
                losses: 0,
                ..q(FRESH, None)
            },
            700_000,
        ),
    ] {
        let o = check(name, &m);
        if let Some((v, run)) = &o.violation {
            panic!("{name}: {v:?}:\n{}", narrate(&m, run).join("\n"));
        }
        assert!(o.states > least, "{name}: only {} states", o.states);
        assert_eq!(o.most_handed, 2, "{name}");
    }
}

#[test]
fn the_quarantine_rules_stay_safe_when_a_refused_proposal_is_retried() {
    // Both proposers made calls before (they know 100) and may try again
    // after a refused or abandoned proposal, with the floor it taught them;
    // or repair in between: the first bounds at which the quarantine wait
    // matters (without it, 101 is handed out twice here).
    let m = Model {
        attempts: 2,
        floors: [Some(100), Some(100)],
        ..small(Rules::Quarantine, HOLD_100, Some(100))
    };
    let o = check("quarantine, both know 100, 2 attempts", &m);
    if let Some((v, run)) = &o.violation {
        panic!("{v:?}:\n{}", narrate(&m, run).join("\n"));
    }
    assert!(o.states > 800_000, "only {} states", o.states);
    assert_eq!(o.most_handed, 2);
}

#[test]
fn the_quarantine_rules_hand_out_values_when_nothing_is_lost() {
    let hold = Model {
        calls: 2,
        attempts: 1,
        losses: 0,
        goal: Some(|s| s.handed.count_ones() == 1 + 4),
        ..Model::new(Rules::Quarantine, HOLD_100, Some(100))
    };
    let o = check("quarantine, no loss, all hold 100", &hold);
    assert!(o.reached.is_some(), "no run hands out 4 values");
    let fresh = Model {
        losses: 0,
        repairs: 0,
        goal: Some(|s| s.handed.count_ones() == 2),
        ..small(Rules::Quarantine, FRESH, None)
    };
    let o = check("quarantine, no loss, all missing", &fresh);
    assert!(
        o.reached.is_some(),
        "no run creates the sequence and hands out 2 values"
    );
}

#[test]
fn the_quarantine_rules_repair_a_lost_node_on_some_path() {
    let m = Model {
        goal: Some(|s| {
            s.losses == 1 && s.nodes[usize::from(s.lost)] != MISSING && s.handed.count_ones() == 3
        }),
        ..small(Rules::Quarantine, HOLD_100, Some(100))
    };
    let o = check("quarantine, repair", &m);
    assert!(o.reached.is_some(), "no run repairs the lost node");
}

#[test]
fn the_quarantine_rules_hand_out_1_twice_when_creation_races_a_loss() {
    // The repair rounds play no part in this run: without them the search
    // is 30 times smaller.
    let m = Model {
        repairs: 0,
        ..small(Rules::Quarantine, FRESH, None)
    };
    let o = check("quarantine, all missing", &m);
    let (v, run) = o.violation.expect("the creation rule hands out 1 twice");
    assert_eq!(v, Violation::Duplicate(1), "{run:?}");
}

#[test]
fn the_mirror_images_of_p1_and_p2_stand_for_each_other() {
    // Every state the search visits, mirror images merged, is a state the
    // search without the mirror reduction visits, and the other way round.
    let m = Model {
        floors: [Some(100), Some(100)],
        ..small(Rules::Quarantine, HOLD_100, Some(100))
    };
    let with = all_states(&m);
    let plain = all_states(&Model {
        mirror: false,
        ..m.clone()
    });
    let merged: HashSet<State> = plain.iter().map(|s| s.canon(&m)).collect();
    println!(
        "mirror: {} states with the reduction, {} without",
        with.len(),
        plain.len()
    );
    assert!(with.len() > 3_000 && plain.len() > with.len());
    assert!(with == merged);
}

/// What a deeper exploration is expected to find.
#[derive(Debug)]
enum Expect {
    Safe,
    Duplicate(u8),
}

#[test]
#[ignore = "about 9 minutes in release: cargo test --release --test seq_model -- --ignored --nocapture"]
fn deeper_bounds() {
    let q = |initial, before| Model::new(Rules::Quarantine, initial, before);
    let cases = [
        (
            "held, 1 call x 2 attempts",
            Model {
                calls: 1,
                ..q(HOLD_100, Some(100))
            },
            Expect::Safe,
        ),
        (
            "[101, 100, 101], 1 call x 2 attempts",
            Model {
                calls: 1,
                ..q(SKEWED, Some(101))
            },
            Expect::Safe,
        ),
        (
            "held, 2 calls x 1 attempt",
            Model {
                attempts: 1,
                ..q(HOLD_100, Some(100))
            },
            Expect::Safe,
        ),
        (
            "held, P1 knows floor 100, 2 calls x 1 attempt",
            Model {
                attempts: 1,
                floors: [Some(100), None],
                ..q(HOLD_100, Some(100))
            },
            Expect::Safe,
        ),
        (
            "held, a second loss, floors known, 2 calls x 1 attempt",
            Model {
                attempts: 1,
                losses: 2,
                floors: [Some(100), Some(100)],
                ..q(HOLD_100, Some(100))
            },
            Expect::Duplicate(101),
        ),
        (
            "held, a second loss, restarts, floors known, 2 calls x 1 attempt",
            Model {
                attempts: 1,
                losses: 2,
                floors: [Some(100), Some(100)],
                loss_resets_connections: true,
                ..q(HOLD_100, Some(100))
            },
            Expect::Duplicate(101),
        ),
        (
            "all missing, restarts, 1 call x 1 attempt, no repair",
            Model {
                calls: 1,
                attempts: 1,
                repairs: 0,
                loss_resets_connections: true,
                ..q(FRESH, None)
            },
            Expect::Duplicate(1),
        ),
        (
            "all missing, creation waits, 1 call x 2 attempts",
            Model {
                calls: 1,
                creation_waits: true,
                ..q(FRESH, None)
            },
            Expect::Duplicate(1),
        ),
    ];
    let mut failures = Vec::new();
    for (name, m, expect) in cases {
        let m = Model {
            limit: 60_000_000,
            ..m
        };
        let o = check(name, &m);
        let found = o.violation.as_ref().map(|(v, _)| *v);
        let ok = match expect {
            Expect::Safe => found.is_none(),
            Expect::Duplicate(v) => found == Some(Violation::Duplicate(v)),
        };
        if !ok {
            failures.push(format!("{name}: expected {expect:?}, found {found:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Every state reachable under `m`, mirror images merged afterwards.
fn all_states(m: &Model) -> HashSet<State> {
    let init = State::initial(m).canon(m);
    let mut seen = HashSet::from([init]);
    let mut stack = vec![init];
    let mut events = Vec::new();
    while let Some(s) = stack.pop() {
        candidates(m, &s, &mut events);
        for &e in &events {
            if let Some(n) = s.apply(m, e, None) {
                let n = n.canon(m);
                if seen.insert(n) {
                    stack.push(n);
                }
            }
        }
    }
    seen
}
