//! Where the search keeps the states it has seen. Both stores are exact
//! (two states are the same only when equal) and number the states in the
//! order found, so that the numbering is the breadth-first queue: the
//! search walks it with a cursor and keeps no second copy of a state.
//!
//! * [`Seen`]: the states themselves, in an arena indexed by hash: any
//!   model, and the fastest per state; about 30 bytes beside the state
//!   (which is over a hundred in the larger models).
//! * [`Tree`](super::tree::Tree): the states cut into words and stored as
//!   a tree of shared pairs, for the models that say how to pack a state
//!   ([`Packed`](super::tree::Packed)): a few times smaller.

use super::Fx;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

/// The states seen so far, each once, numbered from 0 in the order found.
pub trait Store<S> {
    /// Adds `s` unless it is there; true when it was not (it is then
    /// state number `len() - 1`).
    fn insert(&mut self, s: &S) -> bool;
    fn len(&self) -> usize;
    /// State number `i`.
    fn get(&self, i: usize) -> S;
}

/// The states in an arena, with a map from a state's hash to its place
/// that keeps no second copy of it: a third of the memory of a map plus a
/// queue. Two states with one hash are told apart by comparing them
/// (`clash`).
pub struct Seen<S> {
    arena: Vec<S>,
    by_hash: FxMap<u64, u32>,
    /// Further states whose hash an earlier state already has.
    clash: FxMap<u64, Vec<u32>>,
}

impl<S> Default for Seen<S> {
    fn default() -> Self {
        Seen {
            arena: Vec::new(),
            by_hash: FxMap::default(),
            clash: FxMap::default(),
        }
    }
}

impl<S: Copy + Eq + Hash> Store<S> for Seen<S> {
    fn insert(&mut self, s: &S) -> bool {
        let mut h = Fx::default();
        s.hash(&mut h);
        let h = h.finish();
        let at = self.arena.len() as u32;
        match self.by_hash.get(&h) {
            None => {
                self.by_hash.insert(h, at);
            }
            Some(&i) => {
                if self.arena[i as usize] == *s {
                    return false;
                }
                let more = self.clash.entry(h).or_default();
                if more.iter().any(|&i| self.arena[i as usize] == *s) {
                    return false;
                }
                more.push(at);
            }
        }
        self.arena.push(*s);
        true
    }

    fn len(&self) -> usize {
        self.arena.len()
    }

    fn get(&self, i: usize) -> S {
        self.arena[i]
    }
}

/// The successors met lately, as the model produced them (before
/// [`System::canon`](super::System::canon)): a state equal to one of them
/// has been merged into the store already, so the search skips it without
/// finding its representative or looking it up. Many events of one state
/// lead to one successor (decisions counting different replies to the same
/// effect), and neighbouring states share successors, so most successors
/// are met again within a few thousand: in the `timed` model, seven in
/// eight. A direct-mapped cache, a slot per hash: it only ever skips
/// states the store has, so the search visits what it would without it.
pub struct Recent<S> {
    slots: Vec<Option<S>>,
}

impl<S: Copy + Eq + Hash> Recent<S> {
    const BITS: u32 = 12;

    pub fn new() -> Self {
        Recent {
            slots: vec![None; 1 << Self::BITS],
        }
    }

    /// Whether `s` was met lately; remembers it either way.
    pub fn met(&mut self, s: &S) -> bool {
        let mut h = Fx::default();
        s.hash(&mut h);
        // Fx multiplies last: its top bits depend on every word.
        let slot = &mut self.slots[(h.finish() >> (64 - Self::BITS)) as usize];
        if *slot == Some(*s) {
            return true;
        }
        *slot = Some(*s);
        false
    }
}
