//! The arguments of `yaraus lock`: flock(1) over one or N Redis masters.

use super::{ChildEnvArgs, duration, positive_duration};
use clap::{Args, ValueEnum};
use std::time::Duration;

/// Exit statuses of `yaraus lock`.
pub(super) const LOCK_EXIT_STATUS: &str = "\
Exit status:
  0..123  COMMAND's own exit status; 0 for --acquire, --extend, --release, --info
  2       usage error: no command, bad duration, --limit or -s with several masters, ...
  69      a majority of the Redis masters could not be reached within --wait (or --info: fewer
          than a majority answered); a master refused authentication or a command (ACL: see
          acl-rules), is not a Redis server, or names no master (Sentinel): at once
  75      the lock is busy (-n, or --wait ran out); -E/--conflict-exit-code changes it (flock
          exits 1: -E 1 for scripts that test flock's status)
  124     the lock was lost while COMMAND ran, and COMMAND was killed;
          --extend/--release: the token does not hold the lock (any more)
  125     another failure (a key of another type at NAME, a node without appendfsync always, ...)
  126     COMMAND could not be executed
  127     COMMAND was not found
  128+N   COMMAND died of signal N (or yaraus was stopped by signal N while waiting)

Examples:
  yaraus lock nightly-backup --ttl 30s --wait 5m -- ./backup.sh
  yaraus lock deploy --redis redis://a --redis redis://b --redis redis://c -n -E 99 -- ./deploy.sh
  yaraus lock cron-report -n -w 0.5 -c 'report > /tmp/report.txt'   # silent unless it fails
  yaraus lock hold-me -- sleep infinity                              # held until signalled
  yaraus lock -s catalog -- ./read-catalog.sh    # readers together; `yaraus lock catalog` writes
  out=$(yaraus lock --acquire batch --ttl 10m) || exit; eval \"$out\"
  yaraus lock --extend batch --ttl 10m --token \"$YARAUS_LOCK_TOKEN\"
  yaraus lock --release batch --token \"$YARAUS_LOCK_TOKEN\"
  yaraus lock --info deploy";

/// `yaraus lock --help`'s description (set on the subcommand in cli/mod.rs:
/// the variant's doc comment would otherwise replace it).
pub(super) const LOCK_ABOUT: &str = "Take the lock NAME, run COMMAND while holding it, release it when COMMAND ends: \
flock(1) semantics, over one Redis master or over several independent masters (the Redlock \
algorithm: a majority must agree). The key is NAME itself (after --prefix) holding a random \
token, with the expiry --ttl: the convention of redis-py, redsync and node-redlock, so their \
locks and yaraus's exclude each other.\n\n\
COMMAND gets a fencing token in YARAUS_FENCING_TOKEN (and in place of the --replacement text in \
its arguments): a number greater than any handed out before for NAME, for the resource to refuse \
writes from an older holder. The lock is extended every ttl/3. If it is lost (its token is gone \
from a majority of the masters), COMMAND and everything it started get SIGTERM, then SIGKILL \
after --kill-after (or when the lock would have run out, if sooner); if it cannot be extended, they get SIGTERM --kill-after before it would \
run out and SIGKILL when it does, so nothing of COMMAND runs past the lock, even if yaraus \
itself is killed, frozen or blocked (a watchdog process enforces it). yaraus then exits 124.\n\n\
For scripts that cannot wrap a command, --acquire takes the lock and prints its token, and \
--extend and --release take it back with --token. Modes are options, so a lock may be named \
anything, `acquire` included.";

#[derive(Args, Debug)]
#[command(
    long_about = LOCK_ABOUT,
    group(
        clap::ArgGroup::new("mode")
            .args(["acquire", "extend", "release", "info"])
            .conflicts_with_all(["argv", "shell_command"])
    )
)]
pub struct LockArgs {
    /// The lock's name; the Redis key is --prefix followed by NAME.
    #[arg(value_name = "NAME")]
    pub name: String,

    /// Run this shell command with `sh -c` (as flock -c), instead of COMMAND.
    ///
    /// Run this shell command with `sh -c`, as flock -c does, instead of COMMAND.
    #[arg(
        short = 'c',
        long = "command",
        value_name = "SHELL_COMMAND",
        conflicts_with = "argv"
    )]
    pub shell_command: Option<String>,

    /// How long the lock lives unless extended (every ttl/3).
    ///
    /// How long the lock lives unless extended (it is extended every ttl/3 while COMMAND runs).
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = positive_duration, allow_hyphen_values = true)]
    pub ttl: Duration,

    /// Give up after this long (exit 75, or -E; 69: masters out of reach).
    ///
    /// Give up when the lock is still busy (exit 75, or -E), or a majority of its masters stays
    /// out of reach (a restart, a failover, a refused connection: exit 69), after this long.
    /// Each request is still bounded by --timeout, and an attempt in flight at this bound is
    /// cut off there. A wrong password, URL or master name fails at once. [default: wait
    /// forever; --extend, --release, --info: 5 x --timeout]
    #[arg(short = 'w', long, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub wait: Option<Duration>,

    /// Do not wait: one attempt (same as --wait 0).
    ///
    /// Do not wait: one attempt, given up at once when the lock is busy or its masters out of
    /// reach (same as --wait 0).
    #[arg(short = 'n', long, visible_alias = "nonblock", conflicts_with = "wait")]
    pub no_wait: bool,

    /// Exit status when the lock is busy (after -n, or when --wait runs out).
    #[arg(short = 'E', long, default_value_t = 75, value_name = "N")]
    pub conflict_exit_code: u8,

    /// Time COMMAND gets to stop: SIGTERM, then SIGKILL this long after.
    ///
    /// Time COMMAND gets to stop: SIGTERM this long before the lock runs out (or when it is lost),
    /// SIGKILL when it runs out. Must leave room for an extension (every ttl/3). [default: 5s, or
    /// a quarter of the ttl when that is less]
    #[arg(long, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub kill_after: Option<Duration>,

    /// Text put in front of NAME to make the Redis key. [default: none]
    #[arg(
        long,
        default_value = "",
        hide_default_value = true,
        value_name = "TEXT"
    )]
    pub prefix: String,

    /// Admit up to N holders at once (a semaphore; one master only).
    ///
    /// Admit up to N holders at once: a semaphore, like `consul lock -n`. One Redis master only.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: u32,

    /// Take a shared lock (flock -s): shared holders hold it together.
    ///
    /// Take a shared lock, as flock -s does: any number of shared holders hold NAME together,
    /// and an exclusive holder (the default) excludes them all. Writers go first: once an
    /// exclusive holder waits, no new shared holder is admitted until it has had the lock. One
    /// Redis master only. --extend and --release of a shared lock need -s too.
    #[arg(short = 's', long, conflicts_with = "limit")]
    pub shared: bool,

    /// Take an exclusive lock: the default (flock -x, -e).
    #[arg(
        short = 'x',
        long,
        visible_short_alias = 'e',
        conflicts_with = "shared",
        hide_short_help = true
    )]
    pub exclusive: bool,

    /// Text replaced by the fencing token in COMMAND's arguments.
    ///
    /// Text replaced by the fencing token in COMMAND's arguments ('' to turn off; not applied to -c).
    #[arg(long, default_value = "<>", value_name = "TEXT")]
    pub replacement: String,

    /// Several masters: accept nodes that may lose a write (no fsync check).
    ///
    /// With several masters, accept nodes that may lose a write: without appendfsync always, or
    /// with an allkeys-* maxmemory-policy (fencing tokens could then repeat after a node crashes
    /// or evicts). Skips the check (CONFIG GET); as --assume-durable, for a user the ACL denies
    /// CONFIG, once the settings have been checked by hand.
    #[arg(long, visible_aliases = ["no-fsync-check", "assume-durable"])]
    pub allow_volatile: bool,

    /// Take the lock, print its token, and exit.
    ///
    /// Take the lock, print its token and fencing token, and exit; the lock stays held for --ttl.
    #[arg(long)]
    pub acquire: bool,

    /// Extend the lock held with --token to a full --ttl.
    #[arg(long)]
    pub extend: bool,

    /// Release the lock held with --token.
    #[arg(long)]
    pub release: bool,

    /// Print what every master knows about the lock, as JSON.
    ///
    /// Print what every master knows about the lock (holder, age, ttl, fencing counter) as JSON.
    #[arg(long)]
    pub info: bool,

    /// The token --acquire printed; for --extend and --release.
    ///
    /// The lock's token, as --acquire printed it (YARAUS_LOCK_TOKEN); for --extend and --release.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,

    /// How --acquire prints what it took.
    #[arg(long, value_enum, default_value_t = AcquireFormat::Shell)]
    pub format: AcquireFormat,

    #[command(flatten)]
    pub child_env: ChildEnvArgs,

    #[command(flatten)]
    pub knobs: super::WaitKnobs,

    /// The command to run while holding the lock, and its arguments.
    #[arg(trailing_var_arg = true, value_name = "COMMAND")]
    pub argv: Vec<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcquireFormat {
    /// NAME=value lines for `eval` (YARAUS_LOCK_NAME, YARAUS_LOCK_TOKEN, YARAUS_FENCING_TOKEN, ...).
    Shell,
    /// One JSON object.
    Json,
}
