//! Hidden flags for the tests and benchmarks: how a waiter polls and is
//! woken. Not settings a user has a reason to change, so they are in no
//! help text or man page; the library takes them as
//! [`yaraus::claim::WaitOptions`], which `settings/wait.rs` makes of them.

use super::positive_duration;
use clap::{Args, ValueEnum};
use std::time::Duration;

/// `--poll` and `--wakeups`, flattened into `run` and `lock`.
#[derive(Args, Debug, Clone, Default)]
pub struct WaitKnobs {
    /// The pause between two attempts of a waiter (its fallback poll),
    /// instead of the subcommand's own: with a long one, a test tells a
    /// wake-up from a poll.
    #[arg(long, hide = true, value_name = "DURATION", value_parser = positive_duration, allow_hyphen_values = true)]
    pub poll: Option<Duration>,

    /// Whether releases wake the waiters: `queue` (the default), `all` (no
    /// queue: every release wakes every waiter) or `off` (polls only), so
    /// that a benchmark compares them with one binary.
    #[arg(long, hide = true, value_enum, default_value_t = WakePolicyArg::Queue)]
    pub wakeups: WakePolicyArg,
}

/// The values of `--wakeups`.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WakePolicyArg {
    #[default]
    Queue,
    All,
    Off,
}
