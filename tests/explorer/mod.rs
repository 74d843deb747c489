//! The exhaustive explorer shared by the model checkers (`tests/seq_model/`,
//! `tests/index_model/`): a breadth-first search over any [`System`] (a
//! bounded model: its initial state, the events possible in a state, and
//! what each does), the hash it runs on, and the narration of a run it
//! found. Each suite includes it from its own `explorer.rs`, beside the
//! `Violation` of its model.
//!
//! # Design
//!
//! A model only says what a step is; everything about visiting states lives
//! here, once. The search is breadth first, so that a violation or a goal
//! comes with a shortest run; it keeps, per state, its parent and the event
//! from it (as its place among the parent's candidates), which is all a run
//! needs. Each state is stored once, numbered in the order found, and the
//! numbering is the queue (`store.rs`): an arena indexed by hash for any
//! model, or, for the deepest explorations of a model that packs its states
//! into words ([`Packed`], [`explore_compact`]), a tree of shared pairs of
//! words, seven times smaller (`tree.rs`). Both are exact: the deeper
//! explorations reach a hundred million states. A successor equal to one
//! met lately is skipped before anything else (`Recent`: most are).
//!
//! A model may merge symmetric states ([`System::canon`]: mirror images); a
//! run found among representatives is then replayed as a run of the
//! concrete system ([`concrete`]), so that what is printed is a real run,
//! step by step. Events are applied twice in the search's life: without
//! words while searching (the `log` argument is `None`, and the models skip
//! their `format!` calls then: a debug build is slow enough), and with
//! words when narrating.
//!
//! Besides violations, each model counts something per state
//! ([`System::counted`]: values handed out, children alive), and the search
//! reports the most it reached: a model that is safe only because nothing
//! ever happens shows it there.
//!
//! `deeper.rs` is the table that each model's deeper explorations (ignored
//! tests, run by hand in release) print, and its case filter.

#![allow(dead_code)]

pub mod deeper;
mod store;
mod tree;

pub use tree::Packed;

use std::collections::HashSet;

/// Every order of three things (`i` becomes `perm[i]`): the renamings of
/// three nodes a symmetry reduction tries, the spreads over three shards.
pub const PERMUTATIONS_OF_3: [[u8; 3]; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];
use std::fmt::Debug;
use std::hash::{Hash, Hasher};
use std::time::Instant;
use store::{Recent, Seen, Store};
use tree::Tree;

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
pub(crate) use say;

/// A bounded model the search can explore.
pub trait System {
    type State: Copy + Eq + Hash;
    type Event: Copy + Debug;
    /// A safety property broken in a state.
    type Violation: Copy + Debug;

    /// The rules, in a word, for the report.
    fn rules(&self) -> String;
    fn initial(&self) -> Self::State;
    /// Every event possible in `s`, and maybe some that are not (`apply`
    /// tells).
    fn candidates(&self, s: &Self::State, out: &mut Vec<Self::Event>);
    /// The state after `e`, or None when `e` is not possible in `s`. `log`
    /// receives what happened, in words, when given.
    fn apply(
        &self,
        s: &Self::State,
        e: Self::Event,
        log: Option<&mut String>,
    ) -> Option<Self::State>;
    /// The representative of `s` among the states that stand for each
    /// other (mirror images).
    fn canon(&self, s: Self::State) -> Self::State {
        s
    }
    fn violation(&self, s: &Self::State) -> Option<Self::Violation>;
    /// What the model counts in `s` (values handed out, children alive),
    /// for [`Outcome::most`].
    fn counted(&self, s: &Self::State) -> u32;
    /// What [`counted`](Self::counted) counts, for the report.
    fn counted_name(&self) -> &'static str;
    /// Stop at the first state this holds in, and return the run to it.
    fn goal(&self, _s: &Self::State) -> bool {
        false
    }
    /// States the search may visit before it gives up (a memory guard).
    fn limit(&self) -> usize;
    /// The first line of a narration: where the run starts.
    fn start(&self) -> String;
    /// The state, in brackets, after each step of a narration.
    fn show(&self, s: &Self::State) -> String;
}

/// FxHash: SipHash is slow in a debug build, and the states are not chosen
/// by an adversary.
#[derive(Default)]
pub struct Fx(u64);

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

/// What an exploration found.
pub struct Outcome<E, V> {
    pub states: usize,
    /// The first violation found (breadth first: a shortest run), with the
    /// run that leads to it.
    pub violation: Option<(V, Vec<E>)>,
    /// The run to the first state the goal holds in.
    pub reached: Option<Vec<E>>,
    /// The most [`System::counted`] reached, over every state visited.
    pub most: u32,
    pub seconds: f64,
}

/// States expanded between two lines of progress.
const PROGRESS: usize = 10_000_000;

/// Breadth-first search of every state reachable under `m`; stops at the
/// first violation, or at the first state the goal holds in.
pub fn explore<M: System>(m: &M) -> Outcome<M::Event, M::Violation> {
    search(m, &mut Seen::default())
}

/// [`explore`], with the states kept as a tree of shared words
/// ([`Tree`]): a few times less memory, for the deepest explorations.
/// It visits the same states in the same order, so it finds the same.
pub fn explore_compact<M: Packed>(m: &M) -> Outcome<M::Event, M::Violation> {
    search(m, &mut Tree::new(m))
}

/// The breadth-first search, over any store: the store's numbering is the
/// queue.
fn search<M: System, St: Store<M::State>>(m: &M, seen: &mut St) -> Outcome<M::Event, M::Violation> {
    let started = Instant::now();
    let init = m.canon(m.initial());
    seen.insert(&init);
    // Per state: its parent's number, and the event from it as its place
    // among the parent's candidates (6 bytes, where the event itself
    // takes 8 and more).
    let mut parents: Vec<u32> = vec![u32::MAX];
    let mut choices: Vec<u16> = vec![0];
    let mut events = Vec::new();
    let mut recent = Recent::new();
    let mut most = m.counted(&init);
    let mut cursor = 0;
    while cursor < seen.len() {
        let (s, i) = (seen.get(cursor), cursor as u32);
        if cursor % PROGRESS == 0 && cursor > 0 {
            // A deep search runs for tens of minutes: say how far it got.
            eprintln!(
                "  ... {cursor} states expanded of {} found, {:.0} s",
                seen.len(),
                started.elapsed().as_secs_f64()
            );
        }
        cursor += 1;
        m.candidates(&s, &mut events);
        for (k, &e) in events.iter().enumerate() {
            let Some(next) = m.apply(&s, e, None) else {
                continue;
            };
            if recent.met(&next) {
                continue;
            }
            let next = m.canon(next);
            if !seen.insert(&next) {
                continue;
            }
            parents.push(i);
            choices.push(u16::try_from(k).expect("fewer than 2^16 candidates"));
            most = most.max(m.counted(&next));
            let violation = m.violation(&next);
            let reached = m.goal(&next);
            if violation.is_some() || reached {
                let run = concrete(m, &run_to(m, &*seen, &parents, &choices));
                return Outcome {
                    states: seen.len(),
                    violation: violation.map(|v| (v, run.clone())),
                    reached: reached.then_some(run),
                    most,
                    seconds: started.elapsed().as_secs_f64(),
                };
            }
            assert!(
                seen.len() <= m.limit(),
                "more than {} states: tighten the bounds",
                m.limit()
            );
        }
    }
    Outcome {
        states: seen.len(),
        violation: None,
        reached: None,
        most,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// The events from the initial state to the last state found, among
/// representatives: each parent is read back from the store, and its
/// candidates name the event.
fn run_to<M: System, St: Store<M::State>>(
    m: &M,
    seen: &St,
    parents: &[u32],
    choices: &[u16],
) -> Vec<M::Event> {
    let mut run = Vec::new();
    let mut events = Vec::new();
    let mut k = parents.len() - 1;
    while k != 0 {
        let parent = parents[k] as usize;
        m.candidates(&seen.get(parent), &mut events);
        run.push(events[usize::from(choices[k])]);
        k = parent;
    }
    run.reverse();
    run
}

/// The run, found among representatives ([`System::canon`]), as events of
/// one concrete run from the initial state.
pub fn concrete<M: System>(m: &M, run: &[M::Event]) -> Vec<M::Event> {
    let mut c = m.canon(m.initial());
    let mut s = m.initial();
    let mut events = Vec::new();
    run.iter()
        .map(|&e| {
            c = m.canon(m.apply(&c, e, None).expect("the run replays"));
            m.candidates(&s, &mut events);
            let (e, next) = events
                .iter()
                .find_map(|&e| {
                    let next = m.apply(&s, e, None)?;
                    (m.canon(next) == c).then_some((e, next))
                })
                .expect("a concrete step for each step of the run");
            s = next;
            e
        })
        .collect()
}

/// The run in words, one line per event, with the state after it.
pub fn narrate<M: System>(m: &M, run: &[M::Event]) -> Vec<String> {
    let mut s = m.initial();
    let mut lines = vec![m.start()];
    for (i, &e) in run.iter().enumerate() {
        let mut text = String::new();
        s = m
            .apply(&s, e, Some(&mut text))
            .expect("the run replays event by event");
        lines.push(format!("{:>2}. {text}   {}", i + 1, m.show(&s)));
    }
    lines
}

/// Prints what an exploration found: its figures, and the run to a
/// violation or to the goal, in words.
pub fn report<M: System>(name: &str, m: &M, o: &Outcome<M::Event, M::Violation>) {
    println!(
        "{name}: {}, {} states, most {}: {}, {:.1} s",
        m.rules(),
        o.states,
        m.counted_name(),
        o.most,
        o.seconds
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

/// Explores `m` and prints what it found.
pub fn check<M: System>(name: &str, m: &M) -> Outcome<M::Event, M::Violation> {
    let o = explore(m);
    report(name, m, &o);
    o
}

/// [`check`] with the compact store.
pub fn check_compact<M: Packed>(name: &str, m: &M) -> Outcome<M::Event, M::Violation> {
    let o = explore_compact(m);
    report(name, m, &o);
    o
}

/// Panics with the narrated run when the exploration found a violation.
pub fn assert_safe<M: System>(name: &str, m: &M, o: &Outcome<M::Event, M::Violation>) {
    if let Some((v, run)) = &o.violation {
        panic!("{name}: {v:?}:\n{}", narrate(m, run).join("\n"));
    }
}

/// A run chosen step by step: each step is the first possible event whose
/// narration contains the given words. Panics, listing what was possible,
/// when no event fits. Returns the run and the state it ends in.
pub fn guided<M: System>(m: &M, steps: &[&str]) -> (Vec<M::Event>, M::State) {
    match replay(m, steps) {
        Ok(done) => done,
        Err(stuck) => panic!(
            "step {}: no event fits {:?}; possible:\n{}\nso far:\n{}",
            stuck.step,
            steps[stuck.step - 1],
            stuck.possible.join("\n"),
            narrate(m, &stuck.run).join("\n")
        ),
    }
}

/// Where a guided run stopped being possible.
pub struct Stuck<E> {
    /// The step (from 1) no event fits.
    pub step: usize,
    /// What was possible there, in words.
    pub possible: Vec<String>,
    /// The run up to it.
    pub run: Vec<E>,
}

/// A run and the state it ends in.
pub type Replayed<M> = (Vec<<M as System>::Event>, <M as System>::State);

/// `guided`, returning where no event fits instead of panicking.
pub fn replay<M: System>(m: &M, steps: &[&str]) -> Result<Replayed<M>, Stuck<M::Event>> {
    let mut s = m.initial();
    let mut run = Vec::new();
    let mut events = Vec::new();
    for (i, words) in steps.iter().enumerate() {
        m.candidates(&s, &mut events);
        let mut possible = Vec::new();
        let found = events.iter().find_map(|&e| {
            let mut text = String::new();
            let next = m.apply(&s, e, Some(&mut text))?;
            let fits = text.contains(words);
            possible.push(text);
            fits.then_some((e, next))
        });
        let Some((e, next)) = found else {
            return Err(Stuck {
                step: i + 1,
                possible,
                run,
            });
        };
        run.push(e);
        s = next;
    }
    Ok((run, s))
}

/// Every state reachable under `m`, representatives merged afterwards
/// (depth first: the order does not matter here).
pub fn all_states<M: System>(m: &M) -> HashSet<M::State> {
    let init = m.canon(m.initial());
    let mut seen = HashSet::from([init]);
    let mut stack = vec![init];
    let mut events = Vec::new();
    while let Some(s) = stack.pop() {
        m.candidates(&s, &mut events);
        for &e in &events {
            if let Some(n) = m.apply(&s, e, None) {
                let n = m.canon(n);
                if seen.insert(n) {
                    stack.push(n);
                }
            }
        }
    }
    seen
}
