//! A replica's place in an interval's partition: what an index hands out,
//! and what a command is told (`<index>`, `<replicas>`, `<rank>`).

/// A replica's place in an interval's partition: `task % replicas == index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    /// 0-based; the 1-based rank is `index + 1`.
    pub index: u64,
    pub replicas: u64,
}

impl std::fmt::Display for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "index {} of {}", self.index, self.replicas)
    }
}
