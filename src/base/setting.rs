//! The settings a user gives, as messages name them.
//!
//! An error or a warning often names a setting ("ttl 50ms is too short",
//! "give the same interval"). The library names each by what it is, a
//! [`Setting`], never by how a front end spells it: the `yaraus` binary
//! calls them `--ttl` and `--interval`, a program that embeds the library
//! has its own field names. Formatting a `Setting` writes the name that the
//! front end registered once at start ([`name_settings`]); without one, the
//! library's own name ([`Setting::name`]), that of the option it sets.

use std::fmt;
use std::sync::OnceLock;

/// A setting that messages may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Setting {
    /// The Redis servers (URLs).
    Redis,
    /// The Sentinel master name, when the servers are sentinels.
    Sentinel,
    /// Any of the TLS options (certificate authority, client certificate).
    Tls,
    /// The file the Redis password is read from.
    PasswordFile,
    /// How many replicas must confirm a write.
    MinReplicas,
    /// How many replicas the master has, declared instead of asked.
    Replicas,
    /// The key namespace.
    Namespace,
    /// The bound on waiting for Redis, per request.
    Timeout,
    /// The bound on a whole command's waiting (a busy claim, servers out
    /// of reach), across its attempts.
    Wait,
    /// Whether nodes that may lose acknowledged writes are accepted.
    AllowVolatile,
    /// Whether the durability check is skipped (nodes known durable).
    AssumeDurable,
    /// The smallest worker id of a pool.
    Min,
    /// The largest worker id of a pool.
    Max,
    /// A lease's length.
    Expire,
    /// How often a claim is renewed (or an index ticked).
    Interval,
    /// The grace delay before a command starts.
    Delay,
    /// The time a command gets between SIGTERM and SIGKILL.
    KillAfter,
    /// An index replica's offset into its interval.
    Skew,
    /// A lock's time to live.
    Ttl,
    /// How many may hold a semaphore at once.
    Limit,
    /// A lock token the user passes back.
    Token,
    /// The prefix of a lock's key.
    Prefix,
    /// The prefix of the lock keys an ACL must allow.
    LockPrefix,
    /// How many hilo ids one reservation takes.
    Batch,
    /// How many ids a hilo window holds.
    WindowSize,
    /// How many hilo windows the agent keeps open per shard.
    MinOpen,
    /// The longest a worker id's new holder waits for its wall clock to
    /// pass the previous holder's horizon.
    MaxClockWait,
    /// The largest offset from the server's clock a holder accepts.
    MaxClockOffset,
    /// Whether a wall clock stepping back stops the command.
    StopOnClockStep,
    /// Whether `init` may take leased ids from their holders.
    Force,
    /// How many shards a pool is split into.
    Shards,
}

impl Setting {
    /// The library's name of the setting: that of the option it sets.
    pub const fn name(self) -> &'static str {
        match self {
            Setting::Redis => "redis",
            Setting::Sentinel => "sentinel",
            Setting::Tls => "tls",
            Setting::PasswordFile => "password_file",
            Setting::MinReplicas => "min_replicas",
            Setting::Replicas => "replicas",
            Setting::Namespace => "namespace",
            Setting::Timeout => "timeout",
            Setting::Wait => "wait",
            Setting::AllowVolatile => "allow_volatile",
            Setting::AssumeDurable => "assume_durable",
            Setting::Min => "min",
            Setting::Max => "max",
            Setting::Expire => "expire",
            Setting::Interval => "interval",
            Setting::Delay => "delay",
            Setting::KillAfter => "kill_after",
            Setting::Skew => "skew",
            Setting::Ttl => "ttl",
            Setting::Limit => "limit",
            Setting::Token => "token",
            Setting::Prefix => "prefix",
            Setting::LockPrefix => "lock_prefix",
            Setting::Batch => "batch",
            Setting::WindowSize => "window_size",
            Setting::MinOpen => "min_open",
            Setting::MaxClockWait => "max_clock_wait",
            Setting::MaxClockOffset => "max_clock_offset",
            Setting::StopOnClockStep => "stop_on_clock_step",
            Setting::Force => "force",
            Setting::Shards => "shards",
        }
    }

    /// Every setting, for a front end that checks it names them all.
    pub const ALL: [Setting; 31] = [
        Setting::Redis,
        Setting::Sentinel,
        Setting::Tls,
        Setting::PasswordFile,
        Setting::MinReplicas,
        Setting::Replicas,
        Setting::Namespace,
        Setting::Timeout,
        Setting::Wait,
        Setting::AllowVolatile,
        Setting::AssumeDurable,
        Setting::Min,
        Setting::Max,
        Setting::Expire,
        Setting::Interval,
        Setting::Delay,
        Setting::KillAfter,
        Setting::Skew,
        Setting::Ttl,
        Setting::Limit,
        Setting::Token,
        Setting::Prefix,
        Setting::LockPrefix,
        Setting::Batch,
        Setting::WindowSize,
        Setting::MinOpen,
        Setting::MaxClockWait,
        Setting::MaxClockOffset,
        Setting::StopOnClockStep,
        Setting::Force,
        Setting::Shards,
    ];
}

static NAMES: OnceLock<fn(Setting) -> &'static str> = OnceLock::new();

/// Makes every message name settings with `names` from now on; the first
/// call wins. For the front end, before it calls anything else.
pub fn name_settings(names: fn(Setting) -> &'static str) {
    let _ = NAMES.set(names);
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = NAMES.get().map_or(self.name(), |names| names(*self));
        f.write_str(name)
    }
}
