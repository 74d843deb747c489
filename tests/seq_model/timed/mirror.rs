//! The mirror images of a `timed` state: the nodes renamed (they start
//! alike, and every rule treats them alike), and the processes swapped when
//! they start alike. The search visits one state of each set, the least in
//! the derived order (`canon`).
//!
//! The least image is found without building every image: `nodes` is the
//! first field of the order, and the fields after it up to the processes
//! are the same in every image, so only the images with the least `nodes`
//! compete, then only those with the least processes, and the requests
//! (sorted: the slowest part) are compared among those alone. The result
//! is the image the definition picks (`canon_by_copies`, which builds each
//! image whole; `tests.rs` checks that they agree on every state), so the
//! search visits the same states in the same order.

use super::*;
use crate::seq_model::explorer::PERMUTATIONS_OF_3;

/// Every renaming of the nodes: node i becomes perm[i].
const PERMS: [[u8; N]; 6] = PERMUTATIONS_OF_3;

/// The inverse of each of `PERMS`.
const INVERSES: [[u8; N]; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [2, 0, 1],
    [1, 2, 0],
    [2, 1, 0],
];

/// One image: the processes swapped or not, and the nodes renamed.
#[derive(Clone, Copy)]
struct Image {
    swap: bool,
    perm: [u8; N],
}

/// A node mask renamed.
fn renamed_mask(mask: u8, perm: [u8; N]) -> u8 {
    (0..N).fold(0, |acc, i| acc | (((mask >> i) & 1) << perm[i]))
}

impl State {
    /// The representative of the states that stand for each other (the
    /// module's doc says which, and how it is found).
    pub fn canon(self, m: &Model) -> State {
        if !m.mirror {
            return self;
        }
        let alike =
            m.floors[0] == m.floors[1] && m.calls[0] == m.calls[1] && m.passes[0] == m.passes[1];
        // The nodes of each renaming, read through its inverse (node j of
        // the image is node inv[j] of the state).
        let named: [[u8; N]; 6] = INVERSES.map(|inv| inv.map(|i| self.nodes[usize::from(i)]));
        let least = *named.iter().min().unwrap();
        // The images with the least nodes, and among them those with the
        // least processes.
        let mut best: Option<[Proc; PROPOSERS]> = None;
        let mut ties = [Image {
            swap: false,
            perm: PERMS[0],
        }; 12];
        let mut tied = 0;
        for swap in [false, true].into_iter().filter(|&swap| !swap || alike) {
            for (&perm, _) in PERMS.iter().zip(named).filter(|(_, k)| *k == least) {
                let image = Image { swap, perm };
                let p = self.procs_of(image);
                match best.map(|b| p.cmp(&b)) {
                    Some(std::cmp::Ordering::Greater) => continue,
                    Some(std::cmp::Ordering::Equal) => {}
                    _ => {
                        best = Some(p);
                        tied = 0;
                    }
                }
                ties[tied] = image;
                tied += 1;
            }
        }
        let mut msgs = self.msgs_of(ties[0]);
        for &image in &ties[1..tied] {
            msgs = msgs.min(self.msgs_of(image));
        }
        State {
            nodes: least,
            p: best.expect("some renaming gives the least nodes"),
            msgs,
            ..self
        }
    }

    /// The processes of an image.
    fn procs_of(&self, image: Image) -> [Proc; PROPOSERS] {
        let mut p = self.p;
        if image.swap {
            p.swap(0, 1);
        }
        let (perm, from) = (image.perm, p);
        for (tp, sp) in p.iter_mut().zip(from) {
            for (&to, &h) in perm.iter().zip(&sp.hist) {
                tp.hist[usize::from(to)] = h;
            }
            tp.accepted = renamed_mask(sp.accepted, perm);
            tp.pending = renamed_mask(sp.pending, perm);
            if sp.target != NONE {
                tp.target = perm[usize::from(sp.target)];
            }
        }
        p
    }

    /// The requests of an image, sorted.
    fn msgs_of(&self, image: Image) -> [Msg; CAP] {
        let mut msgs = self.msgs;
        let len = usize::from(self.len);
        for x in &mut msgs[..len] {
            let who = if image.swap && x.kind() == PROPOSE && x.who() != NONE {
                1 - x.who()
            } else {
                x.who()
            };
            *x = Msg::new(x.kind(), image.perm[usize::from(x.node())], who, x.val());
        }
        msgs[..len].sort_unstable();
        msgs
    }

    /// The state with node i renamed perm[i].
    #[cfg(test)]
    fn renamed(&self, perm: [u8; N]) -> State {
        let mut t = *self;
        let bits = |mask: u8| (0..N).fold(0, |acc, i| acc | (((mask >> i) & 1) << perm[i]));
        for (&to, &k) in perm.iter().zip(&self.nodes) {
            t.nodes[usize::from(to)] = k;
        }
        for (tp, sp) in t.p.iter_mut().zip(&self.p) {
            for (&to, &h) in perm.iter().zip(&sp.hist) {
                tp.hist[usize::from(to)] = h;
            }
            tp.accepted = bits(sp.accepted);
            tp.pending = bits(sp.pending);
            if sp.target != NONE {
                tp.target = perm[usize::from(sp.target)];
            }
        }
        for x in &mut t.msgs[..usize::from(t.len)] {
            *x = Msg::new(x.kind(), perm[usize::from(x.node())], x.who(), x.val());
        }
        t.msgs[..usize::from(t.len)].sort_unstable();
        t
    }

    /// The same state with the processes swapped.
    #[cfg(test)]
    fn swapped(&self) -> State {
        let mut t = *self;
        t.p.swap(0, 1);
        for x in &mut t.msgs[..usize::from(t.len)] {
            if x.kind() == PROPOSE && x.who() != NONE {
                *x = Msg::new(x.kind(), x.node(), 1 - x.who(), x.val());
            }
        }
        t.msgs[..usize::from(t.len)].sort_unstable();
        t
    }

    /// [`canon`](State::canon) as its definition reads: every image built
    /// whole, the least kept. The tests check that `canon` agrees.
    #[cfg(test)]
    pub fn canon_by_copies(self, m: &Model) -> State {
        if !m.mirror {
            return self;
        }
        let alike =
            m.floors[0] == m.floors[1] && m.calls[0] == m.calls[1] && m.passes[0] == m.passes[1];
        // `nodes` is the first field of the order: only the renamings that
        // give the least `nodes` can give the least state.
        let named = |perm: [u8; N]| {
            let mut k = [0; N];
            for (&to, &v) in perm.iter().zip(&self.nodes) {
                k[usize::from(to)] = v;
            }
            k
        };
        let least = PERMS.iter().map(|&perm| named(perm)).min().unwrap();
        let mut best = None::<State>;
        for base in [Some(self), alike.then(|| self.swapped())]
            .into_iter()
            .flatten()
        {
            for perm in PERMS.into_iter().filter(|&perm| named(perm) == least) {
                let t = base.renamed(perm);
                best = Some(best.map_or(t, |b| b.min(t)));
            }
        }
        best.expect("some renaming gives the least nodes")
    }
}
