//! The compact store: tree compression (as in LTSmin). A state is packed
//! into a power of two of 32-bit words ([`Packed`]); pairs of words are
//! numbered in a table of pairs, pairs of those numbers in the next
//! table, and so on up to one pair per state, whose number in the last
//! table is the state's number. A table stores each pair once, so the
//! parts that states share (the same requests in flight, the same
//! process, the same nodes) are stored once for all of them: a state new
//! to the search typically adds its root pair and a few pairs below it:
//! 23 bytes a state in the `timed` model's largest search (113 million
//! states), where the arena holds the whole state (168 bytes) and its
//! hash-map entry.
//!
//! It is exact: a pair's number is its place in its table, found by
//! comparing the pair itself, so two states get one number only when every
//! word is equal, and [`Packed::pack`] is one-to-one. A state is read back
//! by walking down the tables from its number.

use super::System;
use super::store::Store;

/// A model whose states pack into a fixed number of 32-bit words, and back.
pub trait Packed: System {
    /// Words per state, the same for every state (at most [`MAX_WORDS`]).
    fn words(&self) -> usize;
    /// Writes `s` into `out` (`words()` long). Two states must pack alike
    /// only when they are equal: the search tells states apart by their
    /// words alone.
    fn pack(&self, s: &Self::State, out: &mut [u32]);
    /// The state `pack` wrote into `words`.
    fn unpack(&self, words: &[u32]) -> Self::State;
}

pub const MAX_WORDS: usize = 64;

/// Marks an empty slot of a table.
const EMPTY: u32 = u32::MAX;

/// Pairs of words, each stored once, numbered in the order first seen: an
/// open-addressed table of numbers over the list of pairs, so that a
/// number costs its pair (8 bytes) and a slot (4 bytes, kept at most three
/// quarters full).
struct Pairs {
    pairs: Vec<u64>,
    slots: Vec<u32>,
    /// 64 − log2(slots): a hash's top bits pick the slot.
    shift: u32,
}

/// splitmix64's finalizer: a pair's words differ in few bits, and a table
/// needs every bit of them to reach its top bits.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Pairs {
    fn new() -> Pairs {
        const BITS: u32 = 10;
        Pairs {
            pairs: Vec::new(),
            slots: vec![EMPTY; 1 << BITS],
            shift: 64 - BITS,
        }
    }

    /// The number of `pair`, and whether it is new.
    fn intern(&mut self, pair: u64) -> (u32, bool) {
        if (self.pairs.len() + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = (mix(pair) >> self.shift) as usize;
        loop {
            let id = self.slots[i];
            if id == EMPTY {
                let id = u32::try_from(self.pairs.len())
                    .ok()
                    .filter(|&id| id != EMPTY)
                    .expect("fewer than 2^32 - 1 pairs in a table");
                self.slots[i] = id;
                self.pairs.push(pair);
                return (id, true);
            }
            if self.pairs[id as usize] == pair {
                return (id, false);
            }
            i = (i + 1) & mask;
        }
    }

    /// Twice the slots, every number placed again.
    fn grow(&mut self) {
        self.shift -= 1;
        self.slots = vec![EMPTY; self.slots.len() * 2];
        let mask = self.slots.len() - 1;
        for (id, &pair) in self.pairs.iter().enumerate() {
            let mut i = (mix(pair) >> self.shift) as usize;
            while self.slots[i] != EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = id as u32;
        }
    }

    fn get(&self, id: u32) -> (u32, u32) {
        let pair = self.pairs[id as usize];
        ((pair >> 32) as u32, pair as u32)
    }
}

/// The states of a [`Packed`] model, as a tree of shared pairs.
pub struct Tree<'m, M> {
    m: &'m M,
    /// The words of a state: `m.words()` rounded up to a power of two (the
    /// padding is zeros, shared by every state).
    width: usize,
    /// The table of each level, from the pairs of words up to the root,
    /// whose numbers are the states'.
    levels: Vec<Pairs>,
    /// The words the last state inserted had at each level (`last_in`),
    /// and the numbers of their pairs (`last_out`): the successors of one
    /// state, inserted one after the other, share most of their pairs, and
    /// a pair equal to the last one's at its place needs no look-up.
    last_in: Vec<[u32; MAX_WORDS]>,
    last_out: Vec<[u32; MAX_WORDS / 2]>,
    /// Whether `last_in` and `last_out` hold a state yet.
    primed: bool,
}

impl<'m, M: Packed> Tree<'m, M> {
    pub fn new(m: &'m M) -> Self {
        let width = m.words().next_power_of_two().max(2);
        assert!(width <= MAX_WORDS, "a state of more than {MAX_WORDS} words");
        Tree {
            m,
            width,
            levels: (0..width.trailing_zeros()).map(|_| Pairs::new()).collect(),
            last_in: vec![[0; MAX_WORDS]; width.trailing_zeros() as usize],
            last_out: vec![[0; MAX_WORDS / 2]; width.trailing_zeros() as usize],
            primed: false,
        }
    }
}

impl<M: Packed> Store<M::State> for Tree<'_, M> {
    fn insert(&mut self, s: &M::State) -> bool {
        let mut words = [0u32; MAX_WORDS];
        self.m.pack(s, &mut words[..self.m.words()]);
        let mut n = self.width;
        let mut new = false;
        for (d, level) in self.levels.iter_mut().enumerate() {
            let (last_in, last_out) = (&mut self.last_in[d], &mut self.last_out[d]);
            // Ends as the root pair's: a root pair met last time is the
            // state inserted last time, not new.
            new = false;
            for i in 0..n / 2 {
                let pair = [words[2 * i], words[2 * i + 1]];
                if !self.primed || pair != last_in[2 * i..2 * i + 2] {
                    last_in[2 * i..2 * i + 2].copy_from_slice(&pair);
                    let pair = u64::from(pair[0]) << 32 | u64::from(pair[1]);
                    (last_out[i], new) = level.intern(pair);
                }
                words[i] = last_out[i];
            }
            n /= 2;
        }
        self.primed = true;
        new
    }

    fn len(&self) -> usize {
        self.levels.last().map_or(0, |root| root.pairs.len())
    }

    fn get(&self, i: usize) -> M::State {
        let mut words = [0u32; MAX_WORDS];
        words[0] = u32::try_from(i).expect("a state's number");
        let mut n = 1;
        for level in self.levels.iter().rev() {
            // Backwards, so that each number is read before its place is
            // overwritten by the pairs below it.
            for j in (0..n).rev() {
                (words[2 * j], words[2 * j + 1]) = level.get(words[j]);
            }
            n *= 2;
        }
        self.m.unpack(&words[..self.m.words()])
    }
}
