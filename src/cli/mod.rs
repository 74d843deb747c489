//! The command line, as clap derive types.
//!
//! The parser, the man pages (`man/*.1`, checked by a test) and the shell
//! completions (`yaraus completions SHELL`) all come from these definitions,
//! so they cannot disagree. Options shared by every subcommand are `global`:
//! they may stand before or after the subcommand's name.

mod hilo;
mod index;
mod seq;

pub use hilo::{HiloAgentArgs, HiloArgs, HiloCommand, HiloNextArgs, HiloStatusArgs};
pub use index::IndexArgs;
pub use seq::{SeqArgs, SeqCommand, SeqNameArgs, SeqNextArgs, SeqServeArgs, SeqSetFloorArgs};

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::time::Duration;

/// Exit statuses, for `--help` and the man page.
const EXIT_STATUS: &str = "\
Exit status:
  0..123  the command's own exit status (run)
  2       usage error: bad flag, malformed URL, nonsense duration or range
  69      Redis unreachable, timed out, refused authentication or a command (ACL), or no such db
  75      nothing available within --wait (no free id)
  124     the claim was lost while the command ran; the command was killed
  125     another failure of yaraus (pool not initialised, key of the wrong type, ...)
  126     the command could not be executed
  127     the command was not found
  128+N   the command died of signal N (or yaraus was stopped by signal N before it ran)";

/// Lease scarce cluster-wide things from Redis to the processes that need them.
#[derive(Parser, Debug)]
#[command(
    name = "yaraus",
    version,
    about,
    long_about = "yaraus hands out scarce, cluster-wide things from Redis to ordinary processes: \
a unique worker id for a snowflake-style id generator (run), or a distributed lock with a \
fencing token for a shell script (lock), held for as long as the process runs, renewed in the \
background, and taken away (the process killed) if it is lost.",
    after_long_help = EXIT_STATUS,
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Whether this command line runs a command (and so needs the watchdog
    /// process, which must be started before anything else).
    pub fn runs_a_command(&self) -> bool {
        match &self.command {
            Command::Run(_) => true,
            Command::Lock(l) => !(l.acquire || l.extend || l.release || l.info),
            Command::Index(i) => !(i.print || i.status),
            _ => false,
        }
    }
}

/// Options every subcommand understands.
// The doc comments of fields are the `--help` text, where `[user:password@]`
// is usage notation, not an intra-doc link.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Args, Debug, Clone)]
pub struct GlobalArgs {
    /// Redis URL: redis://[user:password@]host[:port][/db], rediss:// (TLS),
    /// unix:///path/redis.sock, redis+unix:///path?db=N,
    /// redis+sentinel://[user:password@]host:26379[,host:26379…]/MASTER[/db]
    /// (the master a Sentinel group names, looked up again after a failover)
    /// or redis+cluster://[user:password@]host:7000[,host:7001…] (Redis
    /// Cluster). A query parameter ?ns=NAME sets the namespace. Subcommands
    /// that use several independent servers take the option several times
    /// (or a comma-separated list).
    #[arg(
        long = "redis",
        visible_alias = "server",
        env = "YARAUS_REDIS",
        global = true,
        value_name = "URL",
        default_value = "redis://localhost:6379/0?ns=yaraus",
        hide_env_values = true
    )]
    pub redis: Vec<String>,

    /// ACL user to log in as, where the URL names none. Without a password
    /// from any source, yaraus logs in with an empty one (which only a
    /// nopass user accepts), never silently as the default user.
    #[arg(long, env = "YARAUS_REDIS_USER", global = true, value_name = "NAME")]
    pub redis_user: Option<String>,

    /// Read the Redis password from the first line of PATH, which only its
    /// owner may read (chmod 600), where the URL has none. Without it, the
    /// password comes from YARAUS_REDIS_PASSWORD, else REDISCLI_AUTH. These
    /// keep it out of the process list, where a password in --redis is
    /// visible to every local user.
    #[arg(
        long,
        env = "YARAUS_REDIS_PASSWORD_FILE",
        global = true,
        value_name = "PATH"
    )]
    pub redis_password_file: Option<std::path::PathBuf>,

    /// The --redis URLs are the sentinels (redis://host:26379) of the group
    /// whose master is called MASTER; same as one redis+sentinel:// URL.
    #[arg(long, env = "YARAUS_SENTINEL", global = true, value_name = "MASTER")]
    pub sentinel: Option<String>,

    /// A write (lease, renewal, lock, extension) counts only once N replicas
    /// confirm it (WAIT); fewer is a failed acquisition or renewal. Without
    /// it, run waits for a majority of the connected replicas and only logs
    /// and counts a shortfall (wait_shortfall in stats).
    #[arg(
        long,
        env = "YARAUS_MIN_REPLICAS",
        global = true,
        value_name = "N",
        default_value_t = 0
    )]
    pub min_replicas: u32,

    /// How many replicas the master has, instead of asking it (INFO, which
    /// a restricted ACL user may not run): run then waits for a majority of
    /// N. 0 for a server without replicas.
    #[arg(long, env = "YARAUS_REDIS_REPLICAS", global = true, value_name = "N")]
    pub redis_replicas: Option<u32>,

    /// PEM file of the certificate authorities that sign the server's
    /// certificate (rediss:// only), instead of the system's.
    #[arg(long, global = true, value_name = "PATH")]
    pub tls_ca: Option<std::path::PathBuf>,

    /// PEM client certificate, for servers that require one (with --tls-key).
    #[arg(long, global = true, value_name = "PATH", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,

    /// PEM private key of --tls-cert.
    #[arg(long, global = true, value_name = "PATH", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,

    /// Accept any server certificate (rediss:// only). For tests: anyone on
    /// the path can then pose as the server.
    #[arg(long, global = true)]
    pub tls_insecure: bool,

    /// Key namespace (prefix of every key); overrides ?ns= in the URL. [default: yaraus]
    #[arg(
        long,
        short = 'N',
        env = "YARAUS_NAMESPACE",
        global = true,
        value_name = "NAME"
    )]
    pub namespace: Option<String>,

    /// How long to wait for Redis to connect, and for replicas to confirm a write.
    #[arg(long, global = true, value_name = "DURATION", default_value = "2s", value_parser = positive_duration)]
    pub timeout: Duration,

    /// Print only errors and warnings.
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

const INIT_ABOUT: &str = "Create the pool of worker ids MIN..=MAX. Running it again with the same range \
says \"already initialized\". A different range grows the pool (new ids are free at once) or \
shrinks it, which is refused while any id to be removed is leased. Large pools are written in \
chunks, and a new pool becomes visible only when complete.";

const RUN_ABOUT: &str = "Lease a worker id, wait --delay so that a previous holder of the id has \
stopped, then run COMMAND with every occurrence of the placeholder in its arguments replaced \
by the id (also exported as YARAUS_WORKER_ID, with YARAUS_CLIENT_ID). The lease is renewed \
every --interval. If it is lost, COMMAND and everything it started get SIGTERM, then SIGKILL \
after --kill-after (or when the lease would have run out, if sooner); if it cannot be renewed, they get SIGTERM --kill-after before it would run \
out and SIGKILL when it does, so nothing of COMMAND runs past the lease, even if yaraus itself \
is killed, frozen or blocked (a watchdog process enforces it). yaraus then exits 124. The id \
is released when COMMAND and everything it started have ended.\n\n\
Safeguards: --expire at least 1s, --interval at most expire/2, --delay at least \
2 x interval + kill-after. A value that breaks one is raised, with a warning, unless \
--no-safeguards is given. --kill-after must fit in the lease with room for a renewal \
(without safeguards: in the lease); a value that does not is refused (exit 2).";

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create a pool of worker ids, or grow or shrink it.
    #[command(long_about = INIT_ABOUT, after_long_help = EXIT_STATUS)]
    Init(InitArgs),
    /// Lease a worker id and run COMMAND with it for as long as it runs.
    #[command(long_about = RUN_ABOUT, after_long_help = EXIT_STATUS)]
    Run(RunArgs),
    /// Print the pool's statistics.
    #[command(after_long_help = EXIT_STATUS)]
    Stats(StatsArgs),
    /// List every id of the pool, who holds it, and until when.
    #[command(after_long_help = EXIT_STATUS)]
    List(ListArgs),
    /// Run COMMAND while holding a lock (flock(1) over one or N Redis masters).
    #[command(after_long_help = LOCK_EXIT_STATUS)]
    Lock(LockArgs),
    /// Globally monotonic ids from a majority of Redis nodes: next, get, set-floor, serve.
    #[command(long_about = seq::SEQ_ABOUT, after_long_help = seq::SEQ_EXIT_STATUS)]
    Seq(SeqArgs),
    /// Learn (index, replicas) of a fleet each interval, and run COMMAND with it.
    #[command(long_about = index::INDEX_ABOUT, after_long_help = index::INDEX_EXIT_STATUS)]
    Index(IndexArgs),
    /// Ids in blocks from windows on several Redis shards: agent, next, status.
    #[command(long_about = hilo::HILO_ABOUT, after_long_help = hilo::HILO_EXIT_STATUS)]
    Hilo(HiloArgs),
    /// Print the ACL SETUSER rules of a Redis user that may do what yaraus needs, and nothing more.
    #[command(long_about = ACL_RULES_ABOUT)]
    AclRules(AclRulesArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
}

const ACL_RULES_ABOUT: &str = "Print the ACL SETUSER line of a Redis user (--redis-user, \
default yaraus) that may run the given subcommands (default: all; lock only with --lock-prefix) \
and nothing else: the key patterns of the namespace and the lock prefix, read-only where the \
subcommands only read, and the commands yaraus and its Lua scripts send. Give it the same \
global options as the commands it is for (--redis, --namespace, --sentinel, --min-replicas, \
--redis-replicas): they decide what is needed (CLUSTER SLOTS for a Cluster, ROLE through \
Sentinel, SELECT for a db other than 0, WAIT and INFO for replicas).\n\n\
Paste the line into redis-cli with the user's password added as >PASSWORD, or into users.acl \
as `user NAME ...`. The line starts with `reset`, so it replaces what the user had.\n\n\
Two commands are in Redis's @dangerous category and each can be left out: INFO (for the \
replica count of run; give --min-replicas N or --redis-replicas N instead) and CONFIG GET \
(the durability check of seq, hilo and a lock over several masters, which can read every \
setting; give --assume-durable here and to those commands once you have checked the settings \
yourself).\n\n\
Examples:\n  \
yaraus --namespace pool1 acl-rules run stats\n  \
yaraus --redis redis://a --redis redis://b --redis redis://c acl-rules --lock-prefix locks: lock\n  \
yaraus acl-rules run stats | sed '/^#/d' | { read -r rules; \
printf '%s >%s\\n' \"$rules\" \"$(cat /etc/yaraus/redis-password)\"; } | redis-cli";

#[derive(Args, Debug)]
pub struct AclRulesArgs {
    /// The subcommands the user will run. [default: all of them]
    #[arg(value_enum, value_name = "SUBCOMMAND")]
    pub parts: Vec<crate::acl::Part>,

    /// The --prefix of the locks: lock keys are the lock names, so a rule
    /// needs their common prefix.
    #[arg(long, value_name = "P")]
    pub lock_prefix: Option<String>,

    /// Leave CONFIG GET out: the commands will run with --assume-durable.
    #[arg(long)]
    pub assume_durable: bool,
}

/// What a command that yaraus runs inherits.
#[derive(Args, Debug, Clone, Default)]
pub struct ChildEnvArgs {
    /// Let COMMAND inherit the variable NAME. Otherwise the variables that
    /// carry yaraus's credentials (YARAUS_REDIS, YARAUS_REDIS_PASSWORD,
    /// YARAUS_REDIS_PASSWORD_FILE, REDISCLI_AUTH, YARAUS_SEQ_PASSWORD) are
    /// removed from its environment. Repeatable.
    #[arg(long = "pass-env", value_name = "NAME")]
    pub pass_env: Vec<String>,
}

impl ChildEnvArgs {
    /// The variables to remove from the command's environment; a `--pass-env`
    /// NAME that would not be removed anyway is a usage error (a typo would
    /// otherwise pass unnoticed).
    pub fn removed(&self) -> crate::error::Result<Vec<String>> {
        use crate::store::credentials::SECRET_VARS;
        if let Some(unknown) = self
            .pass_env
            .iter()
            .find(|n| !SECRET_VARS.contains(&n.as_str()))
        {
            return Err(crate::error::Error::Usage(format!(
                "--pass-env {unknown}: COMMAND inherits it anyway; only {} are removed",
                SECRET_VARS.join(", ")
            )));
        }
        Ok(SECRET_VARS
            .iter()
            .filter(|n| !self.pass_env.iter().any(|p| p == *n))
            .map(|n| n.to_string())
            .collect())
    }
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// Smallest worker id.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub min: u64,
    /// Largest worker id (a pool holds at most 2^24 ids).
    #[arg(long, default_value_t = 1023, allow_negative_numbers = true)]
    pub max: u64,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Text replaced by the worker id in COMMAND's arguments.
    #[arg(long, default_value = "<>", value_name = "TEXT")]
    pub replacement: String,

    /// How often the lease is renewed.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = positive_duration)]
    pub interval: Duration,

    /// Wait this long after leasing before starting COMMAND. [default: 2 x interval + kill-after]
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub delay: Option<Duration>,

    /// Lease length written to Redis at each renewal.
    #[arg(long, default_value = "30m", value_name = "DURATION", value_parser = positive_duration)]
    pub expire: Duration,

    /// Time COMMAND gets to stop: SIGTERM this long before the lease runs out (or when it is
    /// lost), SIGKILL when it runs out. Must leave room for a renewal. [default: 5s, or a quarter
    /// of the lease when that is less]
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub kill_after: Option<Duration>,

    /// Give up (exit 75) if no id is free within this time. [default: wait forever]
    #[arg(long, short = 'w', value_name = "DURATION", value_parser = duration)]
    pub wait: Option<Duration>,

    /// Accept --expire, --interval and --delay as given, even when unsafe.
    #[arg(long, visible_alias = "i-am-a-database-removable-specialist")]
    pub no_safeguards: bool,

    #[command(flatten)]
    pub child_env: ChildEnvArgs,

    /// The command to run, and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<String>,
}

/// Exit statuses of `yaraus lock`.
const LOCK_EXIT_STATUS: &str = "\
Exit status:
  0..123  COMMAND's own exit status; 0 for --acquire, --extend, --release, --info
  2       usage error: no command, bad duration, --limit with several masters, ...
  69      a majority of the Redis masters could not be reached (or --info: fewer than a majority
          answered); a master refused authentication or a command (ACL: see acl-rules)
  75      the lock is busy (-n, or --wait ran out); -E/--conflict-exit-code changes it
  124     the lock was lost while COMMAND ran, and COMMAND was killed;
          --extend/--release: the token does not hold the lock (any more)
  125     another failure (a key of another type at NAME, a node without appendfsync always, ...)
  126     COMMAND could not be executed
  127     COMMAND was not found
  128+N   COMMAND died of signal N (or yaraus was stopped by signal N while waiting)

Examples:
  yaraus lock nightly-backup --ttl 30s --wait 5m -- ./backup.sh
  yaraus lock deploy --redis redis://a --redis redis://b --redis redis://c -n -E 99 -- ./deploy.sh
  yaraus lock cron-report -c 'report > /tmp/report.txt'
  out=$(yaraus lock --acquire batch --ttl 10m) || exit; eval \"$out\"
  yaraus lock --extend batch --ttl 10m --token \"$YARAUS_LOCK_TOKEN\"
  yaraus lock --release batch --token \"$YARAUS_LOCK_TOKEN\"
  yaraus lock --info deploy";

#[derive(Args, Debug)]
#[command(
    long_about = "Take the lock NAME, run COMMAND while holding it, release it when COMMAND ends: \
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
anything, `acquire` included.",
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

    /// Run this shell command with `sh -c`, as flock -c does, instead of COMMAND.
    #[arg(
        short = 'c',
        long = "command",
        value_name = "SHELL_COMMAND",
        conflicts_with = "argv"
    )]
    pub shell_command: Option<String>,

    /// How long the lock lives unless extended (it is extended every ttl/3 while COMMAND runs).
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = positive_duration)]
    pub ttl: Duration,

    /// Give up when the lock is still busy after this long. [default: wait forever]
    #[arg(short = 'w', long, value_name = "DURATION", value_parser = duration)]
    pub wait: Option<Duration>,

    /// Do not wait: give up at once when the lock is busy (same as --wait 0).
    #[arg(short = 'n', long, visible_alias = "nonblock", conflicts_with = "wait")]
    pub no_wait: bool,

    /// Exit status when the lock is busy (after -n, or when --wait runs out).
    #[arg(short = 'E', long, default_value_t = 75, value_name = "N")]
    pub conflict_exit_code: u8,

    /// Time COMMAND gets to stop: SIGTERM this long before the lock runs out (or when it is lost),
    /// SIGKILL when it runs out. Must leave room for an extension (every ttl/3). [default: 5s, or
    /// a quarter of the ttl when that is less]
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub kill_after: Option<Duration>,

    /// Text put in front of NAME to make the Redis key. [default: none]
    #[arg(
        long,
        default_value = "",
        hide_default_value = true,
        value_name = "TEXT"
    )]
    pub prefix: String,

    /// Admit up to N holders at once: a semaphore, like `consul lock -n`. One Redis master only.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: u32,

    /// Text replaced by the fencing token in COMMAND's arguments ('' to turn off; not applied to -c).
    #[arg(long, default_value = "<>", value_name = "TEXT")]
    pub replacement: String,

    /// With several masters, accept nodes that may lose a write: without appendfsync always, or
    /// with an allkeys-* maxmemory-policy (fencing tokens could then repeat after a node crashes
    /// or evicts). Skips the check (CONFIG GET); as --assume-durable, for a user the ACL denies
    /// CONFIG, once the settings have been checked by hand.
    #[arg(long, visible_aliases = ["no-fsync-check", "assume-durable"])]
    pub allow_volatile: bool,

    /// Take the lock, print its token and fencing token, and exit; the lock stays held for --ttl.
    #[arg(long)]
    pub acquire: bool,

    /// Extend the lock held with --token to a full --ttl.
    #[arg(long)]
    pub extend: bool,

    /// Release the lock held with --token.
    #[arg(long)]
    pub release: bool,

    /// Print what every master knows about the lock (holder, age, ttl, fencing counter) as JSON.
    #[arg(long)]
    pub info: bool,

    /// The lock's token, as --acquire printed it (YARAUS_LOCK_TOKEN); for --extend and --release.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,

    /// How --acquire prints what it took.
    #[arg(long, value_enum, default_value_t = AcquireFormat::Shell)]
    pub format: AcquireFormat,

    #[command(flatten)]
    pub child_env: ChildEnvArgs,

    /// The command to run while holding the lock, and its arguments.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub argv: Vec<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcquireFormat {
    /// NAME=value lines for `eval` (YARAUS_LOCK_NAME, YARAUS_LOCK_TOKEN, YARAUS_FENCING_TOKEN, ...).
    Shell,
    /// One JSON object.
    Json,
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = StatsFormat::Json)]
    pub format: StatsFormat,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatsFormat {
    /// A JSON object, with the Go yaraus's field names.
    Json,
    /// Prometheus text exposition format (for node_exporter's textfile collector).
    Prometheus,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Json)]
    pub format: ListFormat,
    /// Only the ids leased now (what the Go tool's list shows).
    #[arg(long)]
    pub using: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListFormat {
    /// A JSON array of {client_id, id, expire_at, using, ttl}, streamed.
    Json,
    /// Aligned columns for people.
    Table,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// A humantime duration (`500ms`, `2s`, `30m`, `1h 30m`); a bare `0` is zero.
pub fn duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    humantime::parse_duration(s).map_err(|e| {
        format!("'{s}' is not a duration ({e}); write it like 500ms, 2s, 30m or 1h30m")
    })
}

/// A duration that must be more than zero.
pub fn positive_duration(s: &str) -> Result<Duration, String> {
    let d = duration(s)?;
    if d.is_zero() {
        return Err(format!("'{s}' must be more than zero"));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    /// The exit-status tables of `--help` and the man pages name every code
    /// that `error.rs` defines, each on a line of its own.
    #[test]
    fn the_exit_status_tables_name_every_code_of_error_rs() {
        use crate::error::*;
        let codes = [
            EXIT_USAGE,
            EXIT_UNAVAILABLE,
            EXIT_TEMPFAIL,
            EXIT_LOST,
            EXIT_SOFTWARE,
            EXIT_CANNOT_EXECUTE,
            EXIT_NOT_FOUND,
        ];
        for (name, table) in [
            ("EXIT_STATUS", EXIT_STATUS),
            ("LOCK_EXIT_STATUS", LOCK_EXIT_STATUS),
        ] {
            for code in codes {
                let listed = table
                    .lines()
                    .any(|l| l.trim_start().starts_with(&format!("{code} ")));
                assert!(listed, "{name} does not list exit status {code}:\n{table}");
            }
        }
    }

    #[test]
    fn durations() {
        assert_eq!(duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(duration("0").unwrap(), Duration::ZERO);
        assert!(duration("soon").is_err());
        assert!(duration("-1s").is_err());
        assert!(positive_duration("0s").is_err());
    }
}
