//! The `timed` state as 32 words, for the explorer's compact store
//! (`explore_compact`): each process in 8 words, the globals in 4, and
//! the 24 request slots two to a word (16 bits each). The layout follows
//! the store's tree (halves, quarters, eighths of the words): each process
//! is a subtree of its own, so a state that changed one process shares the
//! other's pairs with its parent, and the requests share theirs.
//!
//! Packing is one-to-one: every field has bits of its own, and `unpack`
//! gives back exactly the state packed (`tests.rs` checks it over every
//! reachable state of a small model).

use super::*;
use crate::seq_model::explorer::Packed;

/// A process's words.
const PROC: usize = 8;
/// Where the globals start, after both processes.
const GLOBALS: usize = PROC * PROPOSERS;
/// Where the requests start.
const MSGS: usize = GLOBALS + 4;
const WORDS: usize = MSGS + CAP / 2;

fn bytes(b: [u8; 4]) -> u32 {
    u32::from_le_bytes(b)
}

/// A request in 16 bits (0: an empty slot): kind, node, `who` (NONE as
/// 15), value.
fn pack_msg(x: Msg) -> u32 {
    if x == EMPTY {
        return 0;
    }
    let who = if x.who() == NONE { 15 } else { x.who() };
    assert!(
        (1..4).contains(&x.kind()) && x.node() < 4 && who < 16,
        "{x:?} outgrew its packing"
    );
    u32::from(x.kind()) << 14 | u32::from(x.node()) << 12 | u32::from(who) << 8 | u32::from(x.val())
}

fn unpack_msg(w: u32) -> Msg {
    if w == 0 {
        return EMPTY;
    }
    let who = (w >> 8 & 15) as u8;
    Msg::new(
        (w >> 14) as u8,
        (w >> 12 & 3) as u8,
        if who == 15 { NONE } else { who },
        w as u8,
    )
}

fn pack_proc(pr: &Proc, out: &mut [u32]) {
    out[0] = bytes([pr.calls, pr.passes, u8::from(pr.in_call), pr.attempts]);
    out[1] = bytes([pr.phase, pr.value, pr.floor, pr.start_max]);
    out[2] = bytes([pr.age, pr.accepted, pr.pending, pr.target]);
    out[3] = u32::from(pr.target_mark);
    out[4..4 + N].copy_from_slice(&pr.hist);
    out[4 + N..PROC].fill(0);
}

fn unpack_proc(w: &[u32]) -> Proc {
    let [calls, passes, in_call, attempts] = w[0].to_le_bytes();
    let [phase, value, floor, start_max] = w[1].to_le_bytes();
    let [age, accepted, pending, target] = w[2].to_le_bytes();
    Proc {
        calls,
        passes,
        in_call: in_call != 0,
        attempts,
        phase,
        value,
        floor,
        start_max,
        age,
        accepted,
        pending,
        hist: std::array::from_fn(|n| w[4 + n]),
        target,
        target_mark: w[3] as u8,
    }
}

/// The violation as a tag (0: none) and two values.
fn pack_violation(v: Option<Violation>) -> [u8; 3] {
    match v {
        None => [0, 0, 0],
        Some(Violation::Duplicate(x)) => [1, x, 0],
        Some(Violation::Order { earlier, later }) => [2, earlier, later],
    }
}

fn unpack_violation([tag, a, b]: [u8; 3]) -> Option<Violation> {
    match tag {
        0 => None,
        1 => Some(Violation::Duplicate(a)),
        _ => Some(Violation::Order {
            earlier: a,
            later: b,
        }),
    }
}

impl Packed for Model {
    fn words(&self) -> usize {
        WORDS
    }

    fn pack(&self, s: &State, out: &mut [u32]) {
        for (p, pr) in s.p.iter().enumerate() {
            pack_proc(pr, &mut out[p * PROC..(p + 1) * PROC]);
        }
        let [tag, a, b] = pack_violation(s.violation);
        let g = &mut out[GLOBALS..MSGS];
        g[0] = bytes([s.nodes[0], s.nodes[1], s.nodes[2], s.mark_age]);
        g[1] = bytes([s.losses, s.len, tag, a]);
        g[2] = s.handed;
        g[3] = u32::from(b);
        for (w, two) in out[MSGS..].iter_mut().zip(s.msgs.chunks(2)) {
            *w = pack_msg(two[0]) << 16 | pack_msg(two[1]);
        }
    }

    fn unpack(&self, w: &[u32]) -> State {
        let g = &w[GLOBALS..MSGS];
        let [n0, n1, n2, mark_age] = g[0].to_le_bytes();
        let [losses, len, tag, a] = g[1].to_le_bytes();
        let mut msgs = [EMPTY; CAP];
        for (two, &x) in msgs.chunks_mut(2).zip(&w[MSGS..]) {
            two[0] = unpack_msg(x >> 16);
            two[1] = unpack_msg(x & 0xffff);
        }
        State {
            nodes: [n0, n1, n2],
            mark_age,
            losses,
            handed: g[2],
            violation: unpack_violation([tag, a, g[3] as u8]),
            p: std::array::from_fn(|p| unpack_proc(&w[p * PROC..(p + 1) * PROC])),
            len,
            msgs,
        }
    }
}
