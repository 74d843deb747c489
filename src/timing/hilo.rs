//! The hilo agent's lock and the in-process allocator's pace.

use std::time::Duration;

/// How long the agent lock lives: far more than a run takes. A run that
/// outlives it is still safe (the fences decide), only no longer alone.
pub const AGENT_LOCK_TTL: Duration = Duration::from_secs(30);

/// The default life below which an allocator's block was used up too fast
/// and the next batch doubles (one that lasts four times longer halves it):
/// a busy process makes about a round trip a second, an idle one holds few
/// ids.
pub const BLOCK_LIFE: Duration = Duration::from_secs(1);
