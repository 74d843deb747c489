//! The least a Redis ACL user must be allowed for yaraus to work:
//! `yaraus acl-rules` prints it as one `ACL SETUSER` line.
//!
//! Three parts, each taken from the code rather than written down twice:
//!
//! * **keys**: the patterns of the keys each subcommand touches, under its
//!   namespace (and the lock prefix, since a lock's key is its name). Not
//!   read-only (`%R~`) even for `stats`: Redis counts every key of `EVALSHA`
//!   as written, whatever the script does;
//! * **commands in scripts**: read out of the very Lua sources the
//!   subcommands run ([`script_commands`]), so that a script that starts to
//!   call a new command gets it into the rules without anyone remembering;
//! * **channels**: the wake-up channel of each lock (`&NS:wake:PREFIX*`)
//!   and of the pool (`&NS:wake:NS:ids`, and its waiters' own
//!   `&NS:wake:NS:ids:*`; src/claim/wake.rs), published on by the release
//!   scripts and subscribed to by waiters (`SSUBSCRIBE` on a Cluster); a
//!   user without them still locks and runs, and its waiters poll;
//! * **commands sent directly**: a table per subcommand (`Part::direct`),
//!   checked by the tests that run every subcommand as a user made from
//!   these rules. What the deployment adds: `ROLE` (Sentinel),
//!   `CLUSTER SLOTS` and `ASKING` (Cluster), `SELECT` (a db other than 0), `WAIT` and
//!   `INFO replication` (replicas), `CONFIG GET` (the durability check).
//!
//! The two commands of the `@dangerous` category yaraus can use are optional,
//! and each has a flag that does without it: `INFO` (the replica count,
//! replaced by `--redis-replicas N` or `--min-replicas N`) and `CONFIG GET`
//! (which can read every setting, `requirepass` included: replaced by
//! `--assume-durable` once the operator has checked the settings by hand).
//! `acl-rules` takes the same flags, and leaves them out.

use crate::base::setting::Setting;
use crate::error::{Error, Result};
use std::collections::BTreeSet;

/// A subcommand, as far as Redis permissions go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    Init,
    Run,
    Stats,
    List,
    Lock,
    Seq,
    Index,
    Health,
    Hilo,
}

/// Where and how the subcommands will run: what the command line of
/// `acl-rules` says about the deployment, besides the namespace.
#[derive(Clone, Debug, Default)]
pub struct Deployment {
    /// `redis+cluster://`: pool keys carry `{ns}`, `CLUSTER SLOTS` is asked.
    pub cluster: bool,
    /// Through Sentinel: the master is checked with `ROLE`.
    pub sentinel: bool,
    /// A database other than 0: `SELECT` on every connection.
    pub select: bool,
    /// Several independent masters (lock): their durability is checked.
    pub several_masters: bool,
    /// `--min-replicas N`.
    pub min_replicas: u32,
    /// `--redis-replicas N`.
    pub replicas: Option<u32>,
    /// `--assume-durable`: no `CONFIG GET`.
    pub assume_durable: bool,
}

/// The rules for a set of subcommands.
#[derive(Clone, Debug)]
pub struct Rules {
    keys: BTreeSet<String>,
    /// Pub/sub channel patterns (`&pattern`), escaped like the keys.
    channels: BTreeSet<String>,
    commands: BTreeSet<String>,
}

const POOL_SCRIPTS: &[&str] = &[
    include_str!("lease/acquire.lua"),
    include_str!("lease/renew.lua"),
    include_str!("lease/release.lua"),
    include_str!("claim/wake.lua"),
];
const INIT_SCRIPTS: &[&str] = &[
    include_str!("lease/layout.lua"),
    include_str!("lease/finalize_init.lua"),
    include_str!("lease/resize.lua"),
    include_str!("lease/shrink.lua"),
];
const STATS_SCRIPTS: &[&str] = &[include_str!("lease/stats.lua")];
const LIST_SCRIPTS: &[&str] = &[include_str!("lease/leased.lua")];
const LOCK_SCRIPTS: &[&str] = &[
    include_str!("base/counter.lua"),
    include_str!("lock/acquire.lua"),
    include_str!("lock/extend.lua"),
    include_str!("lock/release.lua"),
    include_str!("lock/undo.lua"),
    include_str!("lock/inspect.lua"),
    include_str!("lock/semaphore_acquire.lua"),
    include_str!("lock/semaphore_extend.lua"),
    include_str!("lock/semaphore_release.lua"),
    include_str!("claim/wake.lua"),
    include_str!("lock/shared.lua"),
    include_str!("lock/shared_acquire.lua"),
    // A lock over several masters heals its fencing counter as a sequence does.
    include_str!("seq/heal.lua"),
];
const SEQ_SCRIPTS: &[&str] = &[
    include_str!("base/counter.lua"),
    include_str!("seq/propose.lua"),
    include_str!("seq/read.lua"),
    include_str!("seq/transition.lua"),
    include_str!("seq/set_floor.lua"),
    include_str!("seq/heal.lua"),
    include_str!("seq/census.lua"),
];
const INDEX_SCRIPTS: &[&str] = &[
    include_str!("index/tick.lua"),
    include_str!("index/confirm.lua"),
];
/// What `health` runs of hilo's: the read-only look at a shard.
const HILO_STATUS_SCRIPTS: &[&str] = &[
    include_str!("hilo/keys.lua"),
    include_str!("hilo/status.lua"),
];
const HILO_SCRIPTS: &[&str] = &[
    include_str!("hilo/keys.lua"),
    include_str!("hilo/reserve.lua"),
    include_str!("hilo/fence.lua"),
    include_str!("hilo/raise.lua"),
    include_str!("hilo/create.lua"),
    include_str!("hilo/status.lua"),
];

/// What every connection may send: `PING` (the first request, which
/// reports a wrong password at once), and running our scripts (`EVALSHA`,
/// with `SCRIPT LOAD` when the server does not know one yet).
const EVERYWHERE: &[&str] = &["ping", "evalsha", "script|load"];

impl Part {
    /// Every subcommand, in the order of `yaraus --help`.
    pub fn all() -> &'static [Part] {
        &[
            Part::Init,
            Part::Run,
            Part::Stats,
            Part::List,
            Part::Lock,
            Part::Seq,
            Part::Index,
            Part::Health,
            Part::Hilo,
        ]
    }

    /// The subcommand's name.
    pub fn name(self) -> &'static str {
        match self {
            Part::Init => "init",
            Part::Run => "run",
            Part::Stats => "stats",
            Part::List => "list",
            Part::Lock => "lock",
            Part::Seq => "seq",
            Part::Index => "index",
            Part::Health => "health",
            Part::Hilo => "hilo",
        }
    }

    /// The part of subcommand `name`.
    pub fn named(name: &str) -> Option<Part> {
        Part::all().iter().copied().find(|p| p.name() == name)
    }

    fn scripts(self) -> Vec<&'static str> {
        match self {
            Part::Init => INIT_SCRIPTS.to_vec(),
            Part::Run => POOL_SCRIPTS.to_vec(),
            Part::Stats => STATS_SCRIPTS.to_vec(),
            Part::List => LIST_SCRIPTS.to_vec(),
            Part::Lock => LOCK_SCRIPTS.to_vec(),
            Part::Seq => SEQ_SCRIPTS.to_vec(),
            Part::Index => INDEX_SCRIPTS.to_vec(),
            // It reads counters, heals them (--wait), reads hilo marks and
            // the pool's figures.
            Part::Health => [SEQ_SCRIPTS, HILO_STATUS_SCRIPTS, STATS_SCRIPTS].concat(),
            // The agent holds a lock while it stocks windows.
            Part::Hilo => [HILO_SCRIPTS, LOCK_SCRIPTS].concat(),
        }
    }

    /// The commands the Rust code sends itself (besides [`EVERYWHERE`]).
    fn direct(self) -> &'static [&'static str] {
        match self {
            // GET: the layout of a sharded pool (lease/layout.rs), which
            // `init`, `stats` and `list` read first, and `run` when the
            // pool turns out to be sharded. SCAN: before it makes a pool,
            // whether shards of a lost layout live on (lease/layout.rs).
            Part::Init => &[
                "type", "time", "get", "hset", "hmget", "zadd", "zcard", "zscan", "pexpire", "scan",
            ],
            // wait_shortfall; a waiter's wake-up subscription
            // (src/claim/wake.rs); SCAN: a run given the pool's range looks
            // for shards that outlived their layout before it makes the
            // pool (lease/layout.rs).
            Part::Run => &["get", "hincrby", "subscribe", "scan"],
            Part::Stats => &["get", "hmget"],
            // `--using`: how much of the pool is leased (list.rs).
            // ZSCAN: the walk measures a pool that records no range (the
            // Go tool's).
            Part::List => &[
                "type", "time", "get", "zmscore", "hmget", "zcard", "zcount", "zscan",
            ],
            // A waiter's wake-up subscription (src/claim/wake.rs).
            Part::Lock => &["subscribe"],
            // The agent's sweep of its lock's counter reads the clocks.
            Part::Hilo => &["subscribe", "time"],
            // `seq serve`'s sweep lists the counters and reads the nodes'
            // clocks (seq/census.rs).
            Part::Seq => &["scan", "time"],
            // Every counter and hilo sequence of the namespace, the nodes'
            // clocks, whether the pool exists (health/survey.rs).
            // (and each index's figures, each wake-up queue's length).
            Part::Health => &["scan", "time", "exists", "get", "hmget", "zcard"],
            Part::Index => &[
                "type", "get", "hget", "hmget", "hgetall", "scard", "smembers",
            ],
        }
    }

    /// `CONFIG GET` of the durability check, unless `--assume-durable`.
    fn checks_durability(self, d: &Deployment) -> bool {
        match self {
            Part::Lock | Part::Health => d.several_masters,
            Part::Seq | Part::Hilo => true,
            _ => false,
        }
    }

    /// The channel patterns, before escaping, as [`keys`](Self::keys):
    /// the wake channels of the locks it takes, named like their fencing
    /// counters.
    fn channels(self, ns: &str, lock_prefix: Option<&str>, cluster: bool) -> Vec<(String, bool)> {
        match (self, lock_prefix) {
            (Part::Lock, Some(prefix)) => {
                let mut channels = vec![(format!("{ns}:wake:{prefix}"), true)];
                if cluster {
                    channels.push((format!("{ns}:wake:{{{prefix}"), true));
                }
                channels
            }
            (Part::Hilo, _) => vec![(format!("{ns}:wake:{ns}:hilo:"), true)],
            // The pool's channel, as PoolKeys names it, and its waiters'
            // own channels (`CHANNEL:MEMBER`); those of a sharded pool's
            // shards (`NS:wake:SHARD:ids`, and theirs).
            (Part::Run, _) => {
                let (pool, shards) = pool_prefixes(ns, cluster);
                let channel = format!("{ns}:wake:{pool}:ids");
                let shards = format!("{ns}:wake:{shards}");
                vec![
                    (format!("{channel}:"), true),
                    (channel, false),
                    (shards, true),
                ]
            }
            _ => Vec::new(),
        }
    }

    /// The key patterns, before escaping: `(literal prefix, wildcard?)`.
    fn keys(
        self,
        ns: &str,
        lock_prefix: Option<&str>,
        cluster: bool,
    ) -> Result<Vec<(String, bool)>> {
        let (pool, shards) = pool_prefixes(ns, cluster);
        let pool_keys = || {
            // The pool's four keys, or a sharded pool's marks in two of
            // them, its layout record and its shards' keys (lease/layout.rs).
            let mut keys: Vec<(String, bool)> = ["ids", "clients", "stats", "clock", "layout"]
                .iter()
                .map(|k| (format!("{pool}:{k}"), false))
                .collect();
            keys.push((shards.clone(), true));
            keys
        };
        Ok(match self {
            Part::Init => {
                let mut keys = pool_keys();
                keys.push((format!("{pool}:ids:building:"), true));
                keys
            }
            Part::Run => {
                // The queue of runs waiting for an id (claim/wake.rs), and
                // each shard's.
                let mut keys = pool_keys();
                keys.push((format!("{ns}:queue:{pool}:ids"), false));
                keys.push((format!("{ns}:queue:{shards}"), true));
                keys
            }
            Part::Stats | Part::List => pool_keys(),
            Part::Lock => {
                let prefix = lock_prefix.ok_or_else(|| {
                    Error::Usage(format!(
                        "the keys of `lock` are the lock names themselves: give {} P (and run \
                         `yaraus lock {} P`), so that the rules can name them",
                        Setting::LockPrefix,
                        Setting::Prefix
                    ))
                })?;
                if prefix.is_empty() {
                    return Err(Error::Usage(format!(
                        "{} '' would allow every key; give the prefix your locks use",
                        Setting::LockPrefix
                    )));
                }
                // The lock, its fencing counter and its queue of waiters.
                let mut keys = vec![(prefix.to_string(), true)];
                for companion in ["fencing", "queue"] {
                    keys.push((format!("{ns}:{companion}:{prefix}"), true));
                    if cluster {
                        keys.push((format!("{ns}:{companion}:{{{prefix}"), true));
                    }
                }
                keys
            }
            Part::Seq => vec![(format!("{ns}:seq:"), true)],
            Part::Health => {
                let mut keys = pool_keys();
                for kind in ["seq", "fencing", "hilo", "index", "queue"] {
                    keys.push((format!("{ns}:{kind}:"), true));
                }
                keys
            }
            Part::Index => vec![(format!("{ns}:index:"), true)],
            Part::Hilo => vec![
                (format!("{ns}:hilo:"), true),
                (format!("{ns}:fencing:{ns}:hilo:"), true),
                (format!("{ns}:queue:{ns}:hilo:"), true),
            ],
        })
    }
}

/// The prefix of the pool's keys (`ns`, `{ns}` on a Cluster), and the
/// one all its shards' keys start with (`ns:shard:`, `{ns:shard:`), as
/// `PoolKeys` names them.
fn pool_prefixes(ns: &str, cluster: bool) -> (String, String) {
    match cluster {
        true => (format!("{{{ns}}}"), format!("{{{ns}:shard:")),
        false => (ns.to_string(), format!("{ns}:shard:")),
    }
}

/// The commands a Lua script calls (`redis.call('X', …)`, `redis.pcall`),
/// lowercased.
pub fn script_commands(source: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for piece in source.split("redis.").skip(1) {
        let Some(rest) = piece
            .strip_prefix("call(")
            .or_else(|| piece.strip_prefix("pcall("))
        else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(quote) = rest.chars().next().filter(|c| *c == '\'' || *c == '"') else {
            continue;
        };
        if let Some(name) = rest[1..].split(quote).next() {
            found.insert(name.to_ascii_lowercase());
        }
    }
    found
}

/// A namespace or prefix goes into a glob pattern: its own glob characters
/// are escaped, and whitespace (which would split the rule) is refused.
fn glob_escape(what: &str, text: &str) -> Result<String> {
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::Usage(format!(
            "the {what} {text:?} contains whitespace, which an ACL rule cannot hold; use one without"
        )));
    }
    Ok(text
        .chars()
        .flat_map(|c| match c {
            '*' | '?' | '[' | ']' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect())
}

impl Rules {
    /// The rules for `parts`, in namespace `ns`, for `deployment`.
    pub fn new(
        parts: &[Part],
        ns: &str,
        lock_prefix: Option<&str>,
        d: &Deployment,
    ) -> Result<Rules> {
        let mut keys = BTreeSet::new();
        let mut channels = BTreeSet::new();
        let mut commands: BTreeSet<String> = EVERYWHERE.iter().map(|c| c.to_string()).collect();
        for &part in parts {
            for (literal, wildcard) in part.keys(ns, lock_prefix, d.cluster)? {
                let what = if part == Part::Lock && !literal.starts_with(ns) {
                    "lock prefix"
                } else {
                    "namespace"
                };
                let mut pattern = glob_escape(what, &literal)?;
                if wildcard {
                    pattern.push('*');
                }
                keys.insert(pattern);
            }
            for (literal, wildcard) in part.channels(ns, lock_prefix, d.cluster) {
                let mut pattern = glob_escape("namespace", &literal)?;
                if wildcard {
                    pattern.push('*');
                }
                channels.insert(pattern);
            }
            for script in part.scripts() {
                commands.extend(script_commands(script));
            }
            commands.extend(part.direct().iter().map(|c| c.to_string()));
            if part.checks_durability(d) && !d.assume_durable {
                commands.insert("config|get".into());
            }
            let waits = match part {
                Part::Run => d.min_replicas > 0 || d.replicas != Some(0),
                Part::Lock | Part::Hilo => d.min_replicas > 0,
                _ => false,
            };
            if waits {
                commands.insert("wait".into());
            }
            if part == Part::Health
                || (part == Part::Run && d.min_replicas == 0 && d.replicas.is_none())
            {
                commands.insert("info|replication".into());
            }
        }
        if d.sentinel {
            commands.insert("role".into());
        }
        if d.cluster {
            // The slot map, and the redirection of a slot being migrated.
            commands.insert("cluster|slots".into());
            commands.insert("asking".into());
            // Its channels are sharded: waiters listen with SSUBSCRIBE.
            if commands.remove("subscribe") {
                commands.insert("ssubscribe".into());
            }
        }
        if d.select {
            commands.insert("select".into());
        }
        Ok(Rules {
            keys,
            channels,
            commands,
        })
    }

    /// The commands allowed, lowercased (`config|get` for a subcommand).
    pub fn commands(&self) -> impl Iterator<Item = &str> {
        self.commands.iter().map(String::as_str)
    }

    /// The rules after the user name: `reset on` (no password: the operator
    /// adds `>PASSWORD`), the key patterns, the commands.
    pub fn to_rules(&self) -> String {
        let mut out = vec!["reset".to_string(), "on".to_string()];
        out.extend(self.keys.iter().map(|pattern| format!("~{pattern}")));
        out.extend(self.channels.iter().map(|pattern| format!("&{pattern}")));
        out.push("-@all".into());
        out.extend(self.commands.iter().map(|c| format!("+{c}")));
        out.join(" ")
    }
}

#[cfg(test)]
mod tests;
