//! `yaraus health --wait`: how often the gate looks again.

use std::time::Duration;

/// How often `health --wait` takes another look (and makes a heal pass):
/// a repair lands within this of its quarantine's end, and a look reads
/// every counter on every node, which a second keeps cheap.
pub const LOOK_EVERY: Duration = Duration::from_secs(1);
