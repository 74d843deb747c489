//! Supervision: the command runs only while its claim holds.
//!
//! The promise of every subcommand that wraps a command (`run`, `lock`, …):
//! **no process started for a claim runs after the claim's deadline**, and
//! that deadline comes before the server lets anyone else have the claim.
//! It holds however yaraus itself dies, stalls or is frozen. Which file keeps
//! which part of it:
//!
//! * [`crate::claim::Keeper`]: renews the claim and knows its deadline,
//!   measured on [`crate::base::boot_clock`] (`CLOCK_BOOTTIME`: it keeps counting through a
//!   suspend); gives up `--kill-after` before the deadline.
//! * `watchdog/`: a small process of its own, forked first thing, parent
//!   and subreaper of the command. It enforces the deadline by itself
//!   (SIGTERM at deadline − kill-after, SIGKILL at the deadline) and kills
//!   the whole tree the moment yaraus dies; a frozen or blocked yaraus does
//!   not hold it up. [`link`] and [`protocol`] are how yaraus talks to it.
//! * [`tree`]: every descendant, including those that left the process
//!   group (`setsid`); nothing is released while one is left.
//! * [`child`] and [`terminal`]: the command as yaraus sees it — signals
//!   forwarded, terminal handed over, job control (Ctrl-Z, `fg`) that looks
//!   at the claim before continuing, exit status as a shell reports it.
//! * [`hold`](mod@hold): the loop that ties them together and releases the claim last.
//! * [`signals`]: the signals yaraus forwards, caught from the start.
//! * `base/sys.rs`: the crate's only unsafe code (fork, pre-exec, a timer
//!   for tokio), in the bottom layer so that the clock can use it too.
//!
//! Logging never blocks any of this with the binary's logger, which drops
//! lines rather than waits (`src/bin/yaraus/logger/`); an embedding program
//! that installs a blocking logger gives that up, though not the deadline,
//! which the watchdog keeps by itself.

pub mod child;
pub mod hold;
pub mod link;
pub mod protocol;
pub mod signals;
pub mod terminal;
pub mod tree;
mod watchdog;

pub use child::{ChildSpec, exit_code, substitute};
pub use hold::{HoldOptions, HoldOutcome, StartAfter, hold, hold_once};
pub use link::Watchdog;
pub use signals::Signals;
