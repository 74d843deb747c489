//! `seq serve`'s clocks: how long a client gets to authenticate and to hear
//! why it is closed, how a sequencer groups requests and when it retires,
//! how often the nodes are probed, how long a stop waits for connections.
//!
//! None of these bounds a round (a round is bounded by `--timeout`, through
//! [`super::Timeouts::sequence_request`]); they bound what a client may
//! cost the server, and what the server spends on a client that is gone.

use std::time::Duration;

/// Longest a connection may stay unauthenticated (with `--requirepass`):
/// clients authenticate in the first request they send, so this is
/// hundreds of round trips even on a slow network.
pub const AUTH_TIME: Duration = Duration::from_secs(10);

/// The wait before each wrong-password answer: a connection tries a few
/// passwords a second instead of tens of thousands. Under a second, so
/// that a typo costs a person nothing they notice.
pub const AUTH_PAUSE: Duration = Duration::from_millis(500);

/// At most one log line of a kind about clients over a limit this often:
/// a flood of them is one line with a count, not a flood of lines.
pub const LIMIT_LOG_EVERY: Duration = Duration::from_secs(10);

/// Longest wait to tell a client why it is closed: it may read nothing.
pub const TELL_TIME: Duration = Duration::from_secs(1);

/// Longest wait for the rest of a returning cohort of clients before a
/// sequencer starts its round: a round takes about a millisecond of fsync,
/// so waiting longer would cost more than the requests it gathers save.
pub const MAX_LINGER: Duration = Duration::from_millis(2);

/// A sequencer idle this long retires (and forgets its floor, its counters
/// and its metrics' series), so that a client inventing names costs memory
/// for a while only; long enough that a sequence in use never pays for a
/// fresh read of a majority. The default of `--retire-after`.
pub const RETIRE_AFTER: Duration = Duration::from_secs(300);

/// How often every node is probed for readiness: a load balancer learns
/// within a second or two that a majority went away, for one request per
/// node per second.
pub const PROBE_EVERY: Duration = Duration::from_secs(1);

/// Longest wait for connections to answer and close after a stop, beyond
/// the rounds in flight (bounded by `--timeout`): a client that does not
/// read its replies is not waited for longer.
pub const DRAIN_GRACE: Duration = Duration::from_secs(5);
