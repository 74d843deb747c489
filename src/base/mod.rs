//! The bottom layer: what several layers share, and which imports nothing
//! of the crate but [`crate::error`].
//!
//! * [`duration`]: how every message writes a duration (as it is typed);
//! * [`boot_clock`]: instants on `CLOCK_BOOTTIME`, the clock of every deadline
//!   (claims, the watchdog, an index's ticks);
//! * [`random`]: tokens from the kernel's generator, jitter from a cheap one;
//! * [`keys`]: the Redis Cluster rules for key names (hash tags, a
//!   companion key in its key's slot, names that go inside a tag);
//! * [`setting`]: the settings messages name, spelled as the front end
//!   registered (the binary: its flags);
//! * [`Throttle`]: a warning that can come many times a second, written at
//!   most once per interval with the count of those suppressed;
//! * [`COUNTER_LUA`]: the Lua prelude of every script that reads or proposes
//!   a 64-bit counter (the majority sequence, a lock's fencing token);
//! * `sys.rs`: the crate's only unsafe code (fork, pre-exec, a timer for tokio).
//!
//! Keeping these here is what lets the layers above import only downwards:
//! a lock and a sequence share the counter prelude without importing each
//! other, and a claim's keeper reads the boot clock without importing the
//! supervisor.

pub mod boot_clock;
pub mod duration;
pub mod keys;
pub mod random;
pub mod setting;
pub(crate) mod sys;
mod throttle;

pub use boot_clock::BootInstant;
pub use throttle::{Suppressed, Throttle};

/// The counter helpers every script that touches a 64-bit counter starts
/// with (a script cannot include another, so the prelude is concatenated
/// in front of the script's body).
pub const COUNTER_LUA: &str = include_str!("counter.lua");
