//! The shared explorer (`tests/explorer/`), and what this model counts as
//! a violation.

use crate::explorer as search;

pub(crate) use search::say;
pub use search::*;

/// A safety property broken in a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Violation {
    /// The value was handed out twice.
    Duplicate(u8),
    /// `later` was handed out by a call that started after `earlier` had
    /// been handed out, and is not above it.
    Order { earlier: u8, later: u8 },
}
