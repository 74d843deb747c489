//! The arguments of `yaraus index`.

use super::{duration, positive_duration};
use clap::Args;
use std::time::Duration;

pub(super) const INDEX_ABOUT: &str = "Distributed peer indexing: every replica that runs \
`yaraus index NAME` learns, once per --interval, how many replicas run (replicas) and which one \
it is (index, 0-based, for task % replicas == index), without configuration, while the fleet \
scales and fails over. Each interval (numbered from the Unix epoch: n = ceil(now / interval)), \
every replica INCRs NAMESPACE:index:{NAME}:<n>; its pair for n is its rank in n-1 and the count \
of n-1. The first pair is known between one and two intervals after start.\n\n\
COMMAND starts once the first pair is known, with <index> and <replicas> (and <rank>, 1-based) \
replaced in its arguments and YARAUS_INDEX, YARAUS_REPLICAS, YARAUS_RANK in its environment. \
When the pair changes, COMMAND gets SIGTERM (SIGKILL after --kill-after) and starts again with \
the new pair only when no replica can still run under the old one: every replica of the \
previous interval confirmed through Redis that its command stopped (or kept a pair that still \
agrees), and whatever a replica that fell silent may run has reached its own deadline. A \
replica that cannot tick for a quarter interval past its due time stops its command (a watchdog \
process enforces this even if yaraus is frozen or killed) and starts it again when a fresh pair \
is known. COMMAND's own exit ends yaraus with its status.\n\n\
--print prints the pairs as JSON lines instead of running a command (the safe transition is \
then the reader's job); --status prints the last few intervals as JSON.";

pub(super) const INDEX_EXIT_STATUS: &str = "\
Exit status:
  0..123  COMMAND's own exit status; 0 for --print stopped by SIGINT/SIGTERM and --status
  1       --status: NAME has no recent interval (never used, or idle for 6 intervals)
  2       usage error: --interval under 100ms, --skew not below interval/2, NAME empty or with
          spaces, no COMMAND and no --print, NAME in use with another --interval
  69      Redis unreachable at start for as long as --wait allowed (default: forever; --status:
          5 x --timeout), or authentication or a command refused (ACL), at once
  125     another failure (a key of NAME of another type, ...)
  126     COMMAND could not be executed
  127     COMMAND was not found
  128+N   COMMAND died of signal N (or yaraus was stopped by signal N while no COMMAND ran)

Examples:
  yaraus index mail-sender -- ./sender --shard '<index>' --shards '<replicas>'
  yaraus index mail-sender --interval 2s --print
  yaraus index mail-sender --status";

// The doc comments of fields are the `--help` text, where `<index>` is the
// placeholder as the user types it, not HTML.
#[allow(rustdoc::invalid_html_tags)]
#[derive(Args, Debug)]
#[command(long_about = INDEX_ABOUT, after_long_help = INDEX_EXIT_STATUS)]
pub struct IndexArgs {
    /// The index's name: one word, no braces; its keys are NAMESPACE:index:{NAME}:...
    #[arg(value_name = "NAME")]
    pub name: String,

    /// How often every replica is counted (at least 100ms); the same for every replica of NAME.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = positive_duration, allow_hyphen_values = true)]
    pub interval: Duration,

    /// This replica's tick comes this long after each interval's start (below interval/2).
    /// [default: random, fixed at start]
    #[arg(long, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub skew: Option<Duration>,

    /// Time COMMAND gets to stop after SIGTERM before SIGKILL (at most interval/4).
    /// [default: interval/4, or 5s if less]
    #[arg(long, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub kill_after: Option<Duration>,

    /// Print {"index":..,"replicas":..,"interval":..} once per interval (null while unknown)
    /// instead of running a command.
    #[arg(long, conflicts_with = "status")]
    pub print: bool,

    /// Print the last few intervals of NAME as JSON (who took part, the current pairs) and exit.
    #[arg(long)]
    pub status: bool,

    /// Give up (exit 69) when Redis stays out of reach at start (a restart, a failover, a
    /// refused connection) for this long; once started, a replica rides out any outage (its
    /// command stopped meanwhile). Each request is still bounded by --timeout; 0: one attempt.
    /// [default: wait forever; --status: 5 x --timeout]
    #[arg(short = 'w', long, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub wait: Option<Duration>,

    #[command(flatten)]
    pub metrics: super::MetricsArgs,

    #[command(flatten)]
    pub child_env: super::ChildEnvArgs,

    /// The command to run, and its arguments: <index>, <replicas> and <rank> are replaced.
    #[arg(
        trailing_var_arg = true,
        value_name = "COMMAND",
        conflicts_with_all = ["print", "status"]
    )]
    pub command: Vec<String>,
}
