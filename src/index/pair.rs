//! A replica's place in an interval's partition: what an index hands out,
//! and what a command is told (`<index>`, `<replicas>`, `<rank>`).

/// A replica's place in an interval's partition: `task % replicas == index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    /// 0-based; the 1-based rank is `index + 1`.
    pub index: u64,
    pub replicas: u64,
}

impl Pair {
    /// The pair a tick's reply brings from its two figures of `n-1`: the
    /// replica's rank there (0: it took no part) and how many took part.
    pub fn from_reply(previous_rank: u64, previous_count: u64) -> Option<Pair> {
        (previous_rank > 0 && previous_count >= previous_rank).then(|| Pair {
            index: previous_rank - 1,
            replicas: previous_count,
        })
    }
}

impl std::fmt::Display for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "index {} of {}", self.index, self.replicas)
    }
}
