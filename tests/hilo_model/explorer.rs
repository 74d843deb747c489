//! The shared explorer (`tests/explorer/`), and what this model counts as
//! a violation.

use crate::explorer as search;

pub(crate) use search::say;
pub use search::*;

/// A safety property broken in a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Violation {
    /// Two windows created (on any shards, at any times, even on shards
    /// that restarted since) both hold this id: the lowest such id.
    Overlap { id: u8 },
    /// Reservers handed this id out twice (watched only under
    /// `Watch::Ids`): the lowest such id.
    IdTwice { id: u8 },
}
