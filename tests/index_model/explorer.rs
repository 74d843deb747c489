//! The shared explorer (`tests/explorer/`), and what this model counts as
//! a violation.

use crate::explorer as search;

pub(crate) use search::say;
pub use search::*;

/// A safety property broken in a state: two children alive at once whose
/// pairs (index, replicas) cannot both be right. Replicas are numbered from
/// 0 (R1 is 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Violation {
    /// The children of replicas `a` and `b` were told different replica
    /// counts (`ra`, `rb`).
    Replicas { a: u8, ra: u8, b: u8, rb: u8 },
    /// The children of replicas `a` and `b` both run with this index.
    Index { a: u8, b: u8, index: u8 },
}
