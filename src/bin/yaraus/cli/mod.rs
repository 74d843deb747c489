//! The command line, as clap derive types.
//!
//! The parser, the man pages (`man/*.1`, checked by a test) and the shell
//! completions (`yaraus completions SHELL`) all come from these definitions,
//! so they cannot disagree. Options shared by every subcommand are `global`:
//! they may stand before or after the subcommand's name.

mod acl;
pub mod command_env;
mod duration;
mod examples;
mod exit_status;
mod flags;
mod health;
mod hilo;
mod index;
mod knobs;
mod lock;
mod logging;
#[cfg(test)]
mod man;
mod run;
mod seq;

pub use acl::AclRulesArgs;
pub use duration::{duration, positive_duration};
use exit_status::{EXIT_STATUS, POOL_EXIT_STATUS, PRINT_EXIT_STATUS, RUN_EXIT_STATUS};
pub use flags::flag;
pub use health::{HealthArgs, HealthFormat};
pub use hilo::{HiloAgentArgs, HiloArgs, HiloCommand, HiloNextArgs};
pub use index::IndexArgs;
pub use knobs::{WaitKnobs, WakePolicyArg};
pub use lock::{AcquireFormat, LockArgs};
pub use logging::{LogArgs, LogFormat};
pub use run::RunArgs;
pub use seq::{SeqArgs, SeqCommand, SeqNextArgs, SeqServeArgs, SeqSetFloorArgs};

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::time::Duration;

/// Lease scarce cluster-wide things from Redis to the processes that need them.
#[derive(Parser, Debug)]
#[command(
    name = "yaraus",
    version = VERSION,
    long_version = LONG_VERSION,
    about,
    long_about = "yaraus hands out scarce, cluster-wide things from Redis to ordinary processes: \
a unique worker id for a snowflake-style id generator (run), or a distributed lock with a \
fencing token for a shell script (lock), held for as long as the process runs, renewed in the \
background, and taken away (the process killed) if it is lost.",
    after_long_help = examples::with_examples(EXIT_STATUS, examples::YARAUS),
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// `-V`: the crate's version and the commit it was built from (build.rs
/// works it out: a short hash, `-dirty`, or `unknown` outside a checkout).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (rev ",
    env!("YARAUS_GIT_COMMIT"),
    ")"
);

/// `--version`: the same and, on a second line, the enabled cargo features
/// if there are any, as `rg --version`.
const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (rev ",
    env!("YARAUS_GIT_COMMIT"),
    ")",
    include_str!(concat!(env!("OUT_DIR"), "/features_line"))
);

/// The command line's definition, with a pointer from every `-h` to what
/// only `--help` shows.
pub fn command() -> clap::Command {
    with_more_help(<Cli as clap::CommandFactory>::command())
}

fn with_more_help(mut cmd: clap::Command) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        cmd = cmd.mut_subcommand(name, with_more_help);
    }
    cmd.after_help(MORE_HELP)
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

/// The heading of the options every subcommand shares (`-h` shows the
/// common ones; `--help` all of them).
const CONNECTION: &str = "Connection options";

/// What `-h` says of what it leaves out.
const MORE_HELP: &str = "More: --help shows every connection and TLS option (and their \
environment variables), the exit status and examples.";

/// Options every subcommand understands.
// The doc comments of fields are the `--help` text, where `[user:password@]`
// is usage notation, not an intra-doc link.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Args, Debug, Clone)]
pub struct GlobalArgs {
    /// Redis URL: redis://host[:port][/db], rediss://, unix://, redis+sentinel://,
    /// redis+cluster://; repeatable where a subcommand uses several servers.
    ///
    /// In full: redis://[user:password@]host[:port][/db], rediss:// (TLS),
    /// unix:///path/redis.sock, redis+unix:///path?db=N,
    /// redis+sentinel://[user:password@]host:26379[,host:26379...]/MASTER[/db]
    /// (the master a Sentinel group names, looked up again after a failover)
    /// or redis+cluster://[user:password@]host:7000[,host:7001...] (Redis
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
        hide_env_values = true, help_heading = CONNECTION)]
    pub redis: Vec<String>,

    /// ACL user to log in as, where the URL names none. Without a password
    /// from any source, yaraus logs in with an empty one (which only a
    /// nopass user accepts), never silently as the default user.
    #[arg(long, env = "YARAUS_REDIS_USER", global = true, value_name = "NAME", help_heading = CONNECTION, hide_short_help = true, hide_env_values = true)]
    pub redis_user: Option<String>,

    /// Read the Redis password from the first line of PATH, which only its
    /// owner may read (chmod 600), where the URL has none. Without it, the
    /// password comes from the systemd credential redis-password
    /// ($CREDENTIALS_DIRECTORY/redis-password, LoadCredential=), else
    /// YARAUS_REDIS_PASSWORD, else REDISCLI_AUTH. These keep it out of the
    /// process list, where a password in --redis is visible to every local
    /// user.
    #[arg(
        long,
        env = "YARAUS_REDIS_PASSWORD_FILE",
        global = true,
        value_name = "PATH", help_heading = CONNECTION, hide_short_help = true, hide_env_values = true)]
    pub redis_password_file: Option<std::path::PathBuf>,

    /// The --redis URLs are the sentinels (redis://host:26379) of the group
    /// whose master is called MASTER; same as one redis+sentinel:// URL.
    #[arg(long, env = "YARAUS_SENTINEL", global = true, value_name = "MASTER", help_heading = CONNECTION, hide_short_help = true, hide_env_values = true)]
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
        default_value_t = 0, help_heading = CONNECTION, hide_short_help = true, hide_env_values = true)]
    pub min_replicas: u32,

    /// How many replicas the master has, instead of asking it (INFO, which
    /// a restricted ACL user may not run): run then waits for a majority of
    /// N. 0 for a server without replicas.
    #[arg(long, env = "YARAUS_REDIS_REPLICAS", global = true, value_name = "N", help_heading = CONNECTION, hide_short_help = true, hide_env_values = true)]
    pub redis_replicas: Option<u32>,

    /// PEM file of the certificate authorities that sign the server's
    /// certificate (rediss:// only), instead of the system's.
    #[arg(long, global = true, value_name = "PATH", help_heading = CONNECTION, hide_short_help = true)]
    pub tls_ca: Option<std::path::PathBuf>,

    /// PEM client certificate, for servers that require one (with --tls-key).
    #[arg(long, global = true, value_name = "PATH", requires = "tls_key", help_heading = CONNECTION, hide_short_help = true)]
    pub tls_cert: Option<std::path::PathBuf>,

    /// PEM private key of --tls-cert.
    #[arg(long, global = true, value_name = "PATH", requires = "tls_cert", help_heading = CONNECTION, hide_short_help = true)]
    pub tls_key: Option<std::path::PathBuf>,

    /// Accept any server certificate (rediss:// only). For tests: anyone on
    /// the path can then pose as the server.
    #[arg(long, global = true, help_heading = CONNECTION, hide_short_help = true)]
    pub tls_insecure: bool,

    /// Key namespace (prefix of every key); overrides ?ns= in the URL. [default: yaraus]
    #[arg(
        long,
        short = 'N',
        env = "YARAUS_NAMESPACE",
        global = true,
        value_name = "NAME", help_heading = CONNECTION, hide_env_values = true)]
    pub namespace: Option<String>,

    /// The bound on one request to Redis (not the wait: that is -w/--wait).
    ///
    /// How long to wait for Redis to connect, and for replicas to confirm a write: the bound
    /// on one dial or request (a request that carries a WAIT gets twice this). A server that
    /// does not answer within it is out of reach, which the command rides out, retrying, for
    /// up to its --wait. Not the wait for a busy lock or a free id: that is -w/--wait.
    #[arg(long, global = true, value_name = "DURATION", default_value = "2s", value_parser = positive_duration, allow_hyphen_values = true, help_heading = CONNECTION)]
    pub timeout: Duration,

    #[command(flatten)]
    pub log: LogArgs,
}

const INIT_ABOUT: &str = "Create the pool of worker ids MIN..=MAX. Running it again with the same range \
says \"already initialized\". A different range grows the pool (new ids are free at once) or \
shrinks it: the ids removed are said on stderr, and a shrink is refused, changing nothing, \
while any id to be removed is leased, unless --force takes them from their holders. Large \
pools are written in chunks, and a new pool becomes visible only when complete. --shards N splits \
a new pool into N shards, each in its own Redis Cluster slot (a pool of 2 or more shards is for \
this yaraus only: the Go yaraus and older yaraus are refused by it).";

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create a pool of worker ids, or grow or shrink it.
    #[command(long_about = INIT_ABOUT, after_long_help = examples::with_examples(POOL_EXIT_STATUS, examples::INIT))]
    Init(InitArgs),
    /// Lease a worker id and run COMMAND with it for as long as it runs.
    #[command(long_about = run::RUN_ABOUT, after_long_help = examples::with_examples(RUN_EXIT_STATUS, examples::RUN))]
    Run(RunArgs),
    /// Print the pool's statistics.
    #[command(after_long_help = examples::with_examples(POOL_EXIT_STATUS, examples::STATS))]
    Stats(StatsArgs),
    /// List every id of the pool, who holds it, and until when.
    #[command(after_long_help = examples::with_examples(POOL_EXIT_STATUS, examples::LIST))]
    List(ListArgs),
    /// Run COMMAND while holding a lock (flock(1) over one or N Redis masters).
    #[command(long_about = lock::LOCK_ABOUT, after_long_help = lock::LOCK_EXIT_STATUS)]
    Lock(LockArgs),
    /// Globally monotonic ids from a majority of Redis nodes: next, get, set-floor, serve.
    #[command(long_about = seq::SEQ_ABOUT, after_long_help = seq::SEQ_EXIT_STATUS)]
    Seq(SeqArgs),
    /// Learn (index, replicas) of a fleet each interval, and run COMMAND with it.
    #[command(long_about = index::INDEX_ABOUT, after_long_help = index::INDEX_EXIT_STATUS)]
    Index(IndexArgs),
    /// Where the deployment stands on every node; --wait: heal and wait until all is held.
    #[command(long_about = health::HEALTH_ABOUT, after_long_help = health::HEALTH_EXIT_STATUS)]
    Health(HealthArgs),
    /// Ids in blocks from windows on several Redis shards: agent, next, status.
    #[command(long_about = hilo::HILO_ABOUT, after_long_help = hilo::HILO_EXIT_STATUS)]
    Hilo(HiloArgs),
    /// Print the ACL SETUSER rules of a Redis user that may do what yaraus needs, and nothing more.
    #[command(long_about = acl::ACL_RULES_ABOUT, after_long_help = examples::with_examples(PRINT_EXIT_STATUS, acl::ACL_RULES_EXAMPLES))]
    AclRules(AclRulesArgs),
    /// Print a shell completion script.
    #[command(after_long_help = examples::with_examples(PRINT_EXIT_STATUS, examples::COMPLETIONS))]
    Completions(CompletionsArgs),
}

/// What a command that yaraus runs inherits.
#[derive(Args, Debug, Clone, Default)]
pub struct ChildEnvArgs {
    /// Let COMMAND inherit NAME, one of the credential variables (removed otherwise).
    ///
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
    pub fn removed(&self) -> yaraus::error::Result<Vec<String>> {
        use crate::settings::credentials::SECRET_VARS;
        if let Some(unknown) = self
            .pass_env
            .iter()
            .find(|n| !SECRET_VARS.contains(&n.as_str()))
        {
            return Err(yaraus::error::Error::Usage(format!(
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

/// `--metrics-listen`, flattened into the long-running subcommands (seq
/// serve, hilo agent, index, run).
#[derive(Args, Debug, Clone, Default)]
pub struct MetricsArgs {
    /// Serve /metrics (Prometheus), /healthz and /readyz over HTTP at HOST:PORT.
    ///
    /// Serve /metrics (the Prometheus text format, or OpenMetrics when the request's Accept asks
    /// for it), /healthz (200 while the process answers) and /readyz (200 when ready, 503
    /// otherwise) over HTTP at HOST:PORT; port 0 picks a free one, printed on stderr. Off by
    /// default. A port in use exits 2 before Redis is asked anything. At most 64 connections at
    /// once: one more closes the least recently active.
    #[arg(long, env = "YARAUS_METRICS_LISTEN", hide_env_values = true, value_name = "HOST:PORT", value_parser = host_port)]
    pub metrics_listen: Option<String>,
}

/// `HOST:PORT` with a numeric port (`[::1]:9100` for IPv6); the host is
/// resolved when the listener binds.
fn host_port(text: &str) -> Result<String, String> {
    let bad =
        || format!("{text:?} is not HOST:PORT (like 127.0.0.1:9464; port 0 picks a free one)");
    let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(bad());
    }
    Ok(text.to_string())
}

/// The bound of a one-shot command's wait for servers out of reach.
#[derive(Args, Debug, Clone, Default)]
pub struct WaitArgs {
    /// Give up after this long with servers out of reach (exit 69); 0: one attempt.
    ///
    /// Ride out servers out of reach (refused connections, a restart or LOADING, a failover,
    /// MASTERDOWN, too few nodes of a majority) for up to this long, retrying with growing
    /// pauses, then give up (exit 69); 0: one attempt. Each request is still bounded by
    /// --timeout, and one in flight at this bound is cut off there. A wrong password, URL,
    /// master name or key type fails at once. [default: 5 x --timeout]
    #[arg(long, short = 'w', value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub wait: Option<Duration>,
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// Smallest worker id.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub min: u64,
    /// Largest worker id (a pool holds at most 2^24 ids).
    #[arg(long, default_value_t = 1023, allow_negative_numbers = true)]
    pub max: u64,
    /// Shrink even when ids to be removed are leased: their holders lose them.
    ///
    /// Shrink the pool even when ids to be removed are leased: each holder loses its id at its
    /// next renewal (within --interval) and its command is stopped, as when a lease is lost.
    /// Without it, such a shrink is refused and nothing is changed (exit 125).
    #[arg(long)]
    pub force: bool,
    /// Split the pool into N shards, each in its own Redis Cluster slot (default 1: not split).
    ///
    /// Split the pool into N shards of contiguous ids, each a pool of its own under its own hash
    /// tag, so that a Redis Cluster spreads the pool, and its renewals, over its masters (give at
    /// least as many shards as masters; a multiple of their number spreads them evenly). `run`
    /// leases from one shard and renews there only. 1, the default for a new pool, is the layout
    /// the Go yaraus and every yaraus share; a pool of 2 or more is refused by them. A pool keeps
    /// its number of shards: leave --shards out to grow or shrink it (a different number is
    /// refused, exit 125).
    #[arg(long, value_name = "N")]
    pub shards: Option<usize>,

    #[command(flatten)]
    pub wait: WaitArgs,
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = StatsFormat::Json)]
    pub format: StatsFormat,

    #[command(flatten)]
    pub wait: WaitArgs,
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

    #[command(flatten)]
    pub wait: WaitArgs,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListFormat {
    /// A JSON array of {client_id, id, expire_at (null: never leased), using, ttl,
    /// clock_offset_ms, clock_error_ms}, streamed.
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn definitions_are_consistent() {
        Cli::command().debug_assert();
        command().debug_assert();
    }

    /// A short flag means one thing in every subcommand: `-c` is lock's
    /// --command, never a count.
    #[test]
    fn one_meaning_per_short_flag() {
        fn walk(cmd: &clap::Command, seen: &mut std::collections::HashMap<char, String>) {
            for arg in cmd.get_arguments() {
                if let (Some(short), Some(long)) = (arg.get_short(), arg.get_long()) {
                    let first = seen.entry(short).or_insert_with(|| long.to_string());
                    assert_eq!(
                        first,
                        long,
                        "-{short} is --{first} and --{long} (in {})",
                        cmd.get_name()
                    );
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, seen);
            }
        }
        let mut cmd = command();
        cmd.build();
        walk(&cmd, &mut Default::default());
    }

    /// The exit-status tables of `--help` and the man pages name every code
    /// that `error.rs` defines, each on a line of its own.
    #[test]
    fn the_exit_status_tables_name_every_code_of_error_rs() {
        use yaraus::error::*;
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
            ("RUN_EXIT_STATUS", RUN_EXIT_STATUS),
            ("LOCK_EXIT_STATUS", lock::LOCK_EXIT_STATUS),
        ] {
            for code in codes {
                let listed = table
                    .lines()
                    .any(|l| l.trim_start().starts_with(&format!("{code} ")));
                assert!(listed, "{name} does not list exit status {code}:\n{table}");
            }
        }
    }
}
