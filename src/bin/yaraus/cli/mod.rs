//! The command line, as clap derive types.
//!
//! The parser, the man pages (`man/*.1`, checked by a test) and the shell
//! completions (`yaraus completions SHELL`) all come from these definitions,
//! so they cannot disagree. Options shared by every subcommand are `global`:
//! they may stand before or after the subcommand's name.

mod acl;
mod duration;
mod flags;
mod hilo;
mod index;
mod lock;
#[cfg(test)]
mod man;
mod seq;

pub use acl::AclRulesArgs;
pub use duration::{duration, positive_duration};
pub use flags::flag;
pub use hilo::{HiloAgentArgs, HiloArgs, HiloCommand, HiloNextArgs};
pub use index::IndexArgs;
pub use lock::{AcquireFormat, LockArgs};
pub use seq::{SeqArgs, SeqCommand, SeqNextArgs, SeqServeArgs, SeqSetFloorArgs};

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::time::Duration;

/// Exit statuses, for `--help` and the man page.
const EXIT_STATUS: &str = "\
Exit status:
  0..123  the command's own exit status (run)
  2       usage error: bad flag, malformed URL, nonsense duration or range
  69      Redis unreachable or timed out for as long as --wait allowed; refused authentication or
          a command (ACL), no such db, not a Redis server, TLS refused, unknown Sentinel master
  75      nothing available within --wait (no free id)
  124     the claim was lost while the command ran; the command was killed
  125     another failure of yaraus (pool not initialised and no --min/--max, key of the wrong
          type, ...)
  126     the command could not be executed
  127     the command was not found
  128+N   the command died of signal N (or yaraus was stopped by signal N before it ran)

Waiting: what passes (a refused connection, a restart, a failover, LOADING, MASTERDOWN, too few
nodes) is retried, with growing pauses, until --wait: run, lock and index wait as long as it
takes by default, one-shot commands 5 x --timeout (10s); --timeout bounds each request. What is
misconfigured (password, ACL, master name, key type, URL) fails at once.";

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

    /// How long to wait for Redis to connect, and for replicas to confirm a write: the bound
    /// on one dial or request (a request that carries a WAIT gets twice this). A server that
    /// does not answer within it is out of reach, which the command rides out, retrying, for
    /// up to its --wait. Not the wait for a busy lock or a free id: that is -w/--wait.
    #[arg(long, global = true, value_name = "DURATION", default_value = "2s", value_parser = positive_duration, allow_hyphen_values = true)]
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
Redis out of reach (a restart, a failover) is waited out like a busy pool, up to --wait \
(default: as long as it takes). With --min and --max, a pool that is gone (a Redis restarted \
without persistence) is re-created with that range instead of failing; --delay still holds \
the command back, which protects a previous holder whose record was lost with it.\n\n\
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
    #[command(after_long_help = lock::LOCK_EXIT_STATUS)]
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
    #[command(long_about = acl::ACL_RULES_ABOUT)]
    AclRules(AclRulesArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
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

/// The bound of a one-shot command's wait for servers out of reach.
#[derive(Args, Debug, Clone, Default)]
pub struct WaitArgs {
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

    #[command(flatten)]
    pub wait: WaitArgs,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Text replaced by the worker id in COMMAND's arguments.
    #[arg(long, default_value = "<>", value_name = "TEXT")]
    pub replacement: String,

    /// How often the lease is renewed.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = positive_duration, allow_hyphen_values = true)]
    pub interval: Duration,

    /// Wait this long after leasing before starting COMMAND. [default: 2 x interval + kill-after]
    #[arg(long, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub delay: Option<Duration>,

    /// Lease length written to Redis at each renewal.
    #[arg(long, default_value = "30m", value_name = "DURATION", value_parser = positive_duration, allow_hyphen_values = true)]
    pub expire: Duration,

    /// Time COMMAND gets to stop: SIGTERM this long before the lease runs out (or when it is
    /// lost), SIGKILL when it runs out. Must leave room for a renewal. [default: 5s, or a quarter
    /// of the lease when that is less]
    #[arg(long, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub kill_after: Option<Duration>,

    /// Give up if no id is free within this time (exit 75), or Redis stays out of reach (a
    /// restart, a failover, a refused connection: exit 69). Each request is still bounded by
    /// --timeout, and one in flight at this bound is cut off there; 0: one attempt. A wrong
    /// password, URL or master name fails at once. [default: wait forever]
    #[arg(long, short = 'w', value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub wait: Option<Duration>,

    /// With --max: the pool's smallest id, for re-creating the pool if it is gone (a Redis
    /// restarted without persistence) instead of failing. A pool that exists is left alone.
    #[arg(
        long,
        requires = "max",
        value_name = "ID",
        allow_negative_numbers = true
    )]
    pub min: Option<u64>,

    /// With --min: the pool's largest id (see --min).
    #[arg(
        long,
        requires = "min",
        value_name = "ID",
        allow_negative_numbers = true
    )]
    pub max: Option<u64>,

    /// Accept --expire, --interval and --delay as given, even when unsafe.
    #[arg(long, visible_alias = "i-am-a-database-removable-specialist")]
    pub no_safeguards: bool,

    /// Clock guard: the longest to wait, beyond --delay, for this host's wall clock to pass the
    /// last instant at which the id's previous holder could make ids (on that holder's clock).
    /// A longer lag is refused (exit 75, the id given back): a clock that far behind is broken.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub max_clock_wait: Duration,

    /// Clock guard: stop COMMAND (as on a lost lease, exit 124) when this host's clock is
    /// surely further than this from the Redis server's, and refuse to lease (exit 75). Set on
    /// every host, it also guards an id whose record was lost (a pool restarted empty): the new
    /// holder waits until no holder within this offset can have made a later id. [default:
    /// only warn, beyond half of --delay]
    #[arg(long, value_name = "DURATION", value_parser = positive_duration, allow_hyphen_values = true)]
    pub max_clock_offset: Option<Duration>,

    /// Clock guard: stop COMMAND (as on a lost lease, exit 124) when this host's wall clock
    /// steps back while it runs (an NTP step, a restored VM snapshot). Without it the step is
    /// logged and counted (stats: clock_step_back), and the id's record keeps the highest time
    /// the clock showed.
    #[arg(long)]
    pub stop_on_clock_step: bool,

    #[command(flatten)]
    pub child_env: ChildEnvArgs,

    /// The command to run, and its arguments.
    #[arg(required = true, trailing_var_arg = true, value_name = "COMMAND")]
    pub command: Vec<String>,
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
