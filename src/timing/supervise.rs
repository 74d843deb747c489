//! The watchdog process's own clocks, beside the claim's deadline it
//! enforces ([`super::kill_after`]): how often a tree being killed is
//! looked at again, and how long yaraus waits for the watchdog at its end.

use std::time::Duration;

/// While SIGKILLing, how often the command's tree is looked at again for
/// processes forked in between: a fork takes well under this, so a tree
/// that forks as fast as it can is still emptied within a few sweeps.
pub const KILL_SWEEP: Duration = Duration::from_millis(10);

/// How long yaraus waits, at its end, for a stood-down watchdog to exit, so
/// that it holds none of the caller's descriptors (a shell reading yaraus's
/// output through a pipe) once yaraus is gone: it exits at once unless
/// something (a SIGSTOP) holds it, and yaraus does not wait on that.
pub const STAND_DOWN_WAIT: Duration = Duration::from_secs(1);
