//! The arguments of `yaraus hilo`.

use super::{WaitArgs, duration, positive_duration};
use clap::{Args, Subcommand};
use std::time::Duration;

pub(super) const HILO_ABOUT: &str = "Distributed hi-lo: ids handed out in blocks from windows \
that live on several independent Redis shards (--redis, once per shard), so that any shard that \
answers can serve a block and no two blocks ever overlap. Each shard holds a few open windows \
[start, end) of sequence NAME; `next` reserves a block from the open window with the lowest start \
of the first shard that has one; `agent` keeps every shard stocked with --min-open windows above \
the high-water mark, which it records on every shard before it opens a window, so that losing \
any one shard, even the one with the highest window, even restarted empty, never leads to a \
window being created twice. Agents run under a lock over the shards and fence every shard \
before they write, so two agents at once are safe. Every shard must keep every write \
(appendonly yes, appendfsync always: checked) or lose everything when it restarts (no \
persistence at all: pass --allow-volatile); a shard restarted from an old snapshot would hand \
its ids out again.";

pub(super) const HILO_EXIT_STATUS: &str = "\
Exit status:
  0    success
  1    status: no shard knows NAME
  2    usage error: --batch 0, a batch above the window size, --min-open 0, a malformed URL,
       a nonsense duration, NAME empty or with spaces or braces
  69   next: no shard answered within --wait; agent: a shard did not answer within --wait
       (nothing was written), or a window could not be opened after the high-water mark was
       raised (its ids are skipped); a shard refused authentication or a command (ACL: see
       acl-rules)
  75   next: no shard that answered has an open window (run the agent); agent: another
       agent holds the lock past --wait, or fenced the shards after this one
  125  another failure: no shard that answered knows NAME (next), a key of another type, a
       shard that does not keep every write (see --allow-volatile), the id space used up

Examples:
  yaraus hilo agent orders --redis redis://s1 --redis redis://s2 --redis redis://s3 --once
  yaraus hilo agent orders --redis ... --window-size 1000000 --min-open 3 --every 1m
  yaraus hilo next orders --redis redis://s1 --redis redis://s2 --batch 1000   # FIRST LAST
  yaraus hilo next orders --redis ... --count 5                                 # 5 ids
  yaraus hilo status orders --redis ...";

#[derive(Args, Debug)]
pub struct HiloArgs {
    /// Accept shards that may lose a write (without appendfsync always): safe only for shards
    /// with no persistence at all, which restart empty. Skips the check (CONFIG GET); as
    /// --assume-durable, for a user the ACL denies CONFIG, once the settings have been checked
    /// by hand.
    #[arg(long, global = true, visible_alias = "assume-durable")]
    pub allow_volatile: bool,

    #[command(subcommand)]
    pub command: HiloCommand,
}

#[derive(Subcommand, Debug)]
pub enum HiloCommand {
    /// Keep every shard stocked with open windows (once, or every DURATION).
    #[command(long_about = AGENT_ABOUT, after_long_help = HILO_EXIT_STATUS)]
    Agent(HiloAgentArgs),
    /// Reserve a block of ids and print "FIRST LAST" (or --count ids, one per line).
    #[command(after_long_help = HILO_EXIT_STATUS)]
    Next(HiloNextArgs),
    /// Print each shard's windows and ids left, as JSON.
    #[command(after_long_help = HILO_EXIT_STATUS)]
    Status(HiloStatusArgs),
}

const AGENT_ABOUT: &str = "Keep every shard stocked with --min-open open windows of \
--window-size ids of NAME, above the high-water mark. A run first reads every shard (all must \
answer, or it writes nothing and names the ones that did not), takes the agent lock (a lock \
over the shards as masters), fences every shard with the lock's fencing token, records the new \
high-water mark on every shard, and only then opens the windows. A new sequence (no shard knows \
it) starts at --start. --once (the default) runs once, for cron; --every DURATION runs until \
SIGINT or SIGTERM, reporting a failed run on stderr and trying again at the next one.";

#[derive(Args, Debug)]
pub struct HiloAgentArgs {
    /// The sequence's name: one word, no braces; its keys are NAMESPACE:hilo:{NAME}...
    #[arg(value_name = "NAME")]
    pub name: String,

    /// Ids per window: windows of one sequence are opened with this size from now on.
    #[arg(long, default_value_t = 1_000_000, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub window_size: u64,

    /// Open windows to keep on each shard.
    #[arg(long, default_value_t = 3, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub min_open: u32,

    /// Run again every DURATION until SIGINT or SIGTERM.
    #[arg(long, value_name = "DURATION", value_parser = positive_duration, allow_hyphen_values = true, conflicts_with = "once")]
    pub every: Option<Duration>,

    /// Run once and exit (the default).
    #[arg(long)]
    pub once: bool,

    /// The first id of a new sequence.
    #[arg(long, default_value_t = 1, value_name = "ID")]
    pub start: u64,

    /// How long a run waits for another agent's run to finish (the agent lock), and for shards
    /// out of reach (a restart, a refused connection: every shard must answer), before it
    /// gives up (exit 75 or 69); --every tries again at the next run. Each request is still
    /// bounded by --timeout.
    #[arg(short = 'w', long, default_value = "10s", value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub wait: Duration,

    #[command(flatten)]
    pub metrics: super::MetricsArgs,
}

#[derive(Args, Debug)]
pub struct HiloNextArgs {
    /// The sequence's name.
    #[arg(value_name = "NAME")]
    pub name: String,

    /// Ids per block: at most the window size (a block is shorter at a window's end).
    #[arg(long, default_value_t = 1000, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub batch: u64,

    /// Print N ids, one per line, from blocks reserved by the in-process allocator.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub count: Option<u64>,

    #[command(flatten)]
    pub wait: WaitArgs,
}

#[derive(Args, Debug)]
pub struct HiloStatusArgs {
    /// The sequence's name.
    #[arg(value_name = "NAME")]
    pub name: String,

    #[command(flatten)]
    pub wait: WaitArgs,
}
