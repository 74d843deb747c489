//! One master of a [`super::Quorum`]: its [`Store`], the scripts it must know,
//! and whether it keeps every write. A majority protocol counts a node's
//! vote only if the node cannot forget it: persisted before the reply
//! (`appendonly yes` + `appendfsync always`) and never evicted
//! (`maxmemory-policy` `noeviction` or `volatile-*`: counters have no ttl).
//!
//! That is checked on every new connection ([`Node::prepare`]: a node that
//! restarted may have restarted with other settings), and again whenever
//! a long-running caller asks ([`Node::recheck`]: `seq serve`'s probe, every
//! second, finds a `CONFIG SET appendfsync everysec`). What was found is
//! shared by every clone of the node, like its connection: a node found
//! not durable is not asked to vote by anyone until it is found durable
//! again.
//!
//! A fault of the node itself (it refuses our password or a command, or
//! does not keep every write) stops a command that is starting: what is
//! misconfigured is said at once, before anything is written
//! ([`super::Quorum::prepare_all`]). Once a long-running caller has put the
//! quorum in service ([`super::Quorum::put_in_service`]), the same fault
//! found later (a node restarted with another `requirepass`) costs that
//! node's vote, not the call: it reads as the node being out of reach, and
//! a majority of the others goes on.

use super::connection::Connection;
use super::errors::classify;
use super::redis_error::{is_denied, said, script_error};
use super::server::Store;
use super::target::Target;
use crate::base::setting::Setting;
use crate::error::{Error, Result};
use crate::timing::Timeouts;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// What a check of the node found: whether it may vote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fitness {
    /// It answers and, where required, keeps every write.
    Fit,
    /// No answer, or no connection.
    Down(String),
    /// It answers, but does not keep every write: it must not vote.
    NotDurable(String),
    /// It refuses us: a password, an ACL, a TLS handshake.
    Refused(String),
}

/// One Redis master of a [`super::Quorum`].
#[derive(Clone)]
pub struct Node {
    store: Store,
    label: Arc<str>,
    /// What is known of the node, shared by every clone.
    status: Arc<Mutex<Status>>,
}

struct Status {
    /// Whether the node must keep every write to vote.
    require_durable: bool,
    /// The durability check's verdict, and the connection it was made on.
    checked: Option<(u64, std::result::Result<(), String>)>,
    /// Scripts to load before the first request on each connection
    /// ([`super::Quorum::preload`]), and the connection they were loaded on.
    scripts: Arc<[&'static str]>,
    loaded: Option<u64>,
    /// The quorum passed its start-up check: a fault of this node found
    /// from now on costs its vote, not the call.
    in_service: bool,
}

impl Status {
    fn needs_check(&self, generation: Option<u64>) -> bool {
        self.require_durable && (generation.is_none() || self.checked_on() != generation)
    }

    fn needs_load(&self, generation: Option<u64>) -> bool {
        !self.scripts.is_empty() && (generation.is_none() || self.loaded != generation)
    }

    fn checked_on(&self) -> Option<u64> {
        self.checked.as_ref().map(|(g, _)| *g)
    }
}

impl Node {
    /// A node for `target`, each dial and request bounded by `timeouts`;
    /// with `require_durable`, [`prepare`](Self::prepare) checks that it
    /// keeps every write. Nothing is dialed yet.
    pub(super) fn new(target: &Target, timeouts: Timeouts, require_durable: bool) -> Result<Node> {
        Ok(Node {
            store: Store::new(target, timeouts)?,
            label: Arc::from(target.display().to_string()),
            status: Arc::new(Mutex::new(Status {
                require_durable,
                checked: None,
                scripts: Arc::from([]),
                loaded: None,
                in_service: false,
            })),
        })
    }

    fn status(&self) -> MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Scripts to load before the next request ([`super::Quorum::preload`]).
    pub(super) fn preload(&mut self, scripts: &Arc<[&'static str]>) {
        let mut status = self.status();
        status.scripts = Arc::clone(scripts);
        status.loaded = None;
    }

    /// The URL, password hidden, for messages.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Whether [`prepare`](Self::prepare) has nothing left to do.
    pub(super) fn is_prepared(&self) -> bool {
        let status = self.status();
        if !status.require_durable && status.scripts.is_empty() {
            return true;
        }
        let generation = self.store.generation();
        generation.is_some() && !status.needs_check(generation) && !status.needs_load(generation)
    }

    /// From now on, a fault of this node costs its vote, not the call.
    pub(super) fn put_in_service(&self) {
        self.status().in_service = true;
    }

    pub fn store(&mut self) -> &mut Store {
        &mut self.store
    }

    /// Gets the node ready for a request, in one round trip on a new
    /// connection and none otherwise: checks that it persists every write
    /// before replying, when the quorum was told to require it (`CONFIG
    /// GET`), and loads the scripts of [`super::Quorum::preload`] (`SCRIPT
    /// LOAD`). A node that does not persist every write is an
    /// [`Error::State`] (the caller must refuse, not retry) until the quorum
    /// is in service, an [`Error::Unavailable`] for this node after that.
    pub async fn prepare(&mut self) -> Result<()> {
        let outcome = self.check(false).await;
        outcome.map_err(|e| self.node_fault(e))
    }

    /// Checks the node again now, whatever was found before (a long-running
    /// caller's probe), and says whether it may vote. What it finds is what
    /// every clone's next [`prepare`](Self::prepare) goes by.
    pub async fn recheck(&mut self) -> Fitness {
        let outcome = match self.check(true).await {
            // Without a durability check, an answer is what shows it is up.
            Ok(()) if !self.status().require_durable => self
                .store
                .query::<String>(&redis::cmd("PING"))
                .await
                .map(drop),
            outcome => outcome,
        };
        match outcome {
            Ok(()) => Fitness::Fit,
            Err(Error::Unavailable(m)) => Fitness::Down(m),
            Err(e @ Error::State(_)) if self.status().require_durable => {
                Fitness::NotDurable(e.to_string())
            }
            Err(e) => Fitness::Refused(e.to_string()),
        }
    }

    /// A fault of the node itself, once the quorum is in service, reads as
    /// the node out of reach: it costs this node's vote, not the call.
    fn node_fault(&self, e: Error) -> Error {
        match e {
            Error::Refused(m) | Error::State(m) if self.status().in_service => {
                Error::Unavailable(format!("{m} (it does not vote until that is mended)"))
            }
            e => e,
        }
    }

    /// [`prepare`](Self::prepare)'s work, its errors as found; `force`
    /// checks durability again even on a connection checked before.
    async fn check(&mut self, force: bool) -> Result<()> {
        let mut conn = self.store.connection().await?;
        let generation = Some(self.store.used());
        let (check, load) = {
            let status = self.status();
            let check = status.require_durable && (force || status.needs_check(generation));
            if !check
                && let Some((g, Err(found))) = &status.checked
                && Some(*g) == generation
            {
                return Err(Error::State(found.clone()));
            }
            (check, status.needs_load(generation))
        };
        if !check && !load {
            return Ok(());
        }
        let configs = match self.ask_settings(&mut conn, check, load).await {
            Ok(configs) => configs,
            Err(e) => return Err(self.prepare_error(e, check)),
        };
        let verdict = if check {
            durability_verdict(&configs)
        } else {
            Ok(())
        };
        let mut status = self.status();
        if let Some(g) = generation {
            if load {
                status.loaded = Some(g);
            }
            if check {
                status.checked = Some((g, verdict.clone()));
            }
        }
        verdict.map_err(Error::State)
    }

    /// Asks the durability settings (`check`) and loads the scripts
    /// (`load`) in one round trip; a Cluster's settings from every master.
    async fn ask_settings(
        &self,
        conn: &mut Connection,
        check: bool,
        load: bool,
    ) -> redis::RedisResult<Vec<(String, [String; 3])>> {
        if let Connection::Cluster(_) = conn {
            // Scripts load on first use there (EVALSHA falls back to EVAL);
            // the check asks every master, whichever holds the keys.
            return if check {
                every_master_config(conn).await
            } else {
                Ok(Vec::new())
            };
        }
        let mut pipe = redis::pipe();
        if check {
            for name in DURABILITY_SETTINGS {
                pipe.cmd("CONFIG").arg("GET").arg(name);
            }
        }
        let scripts = Arc::clone(&self.status().scripts);
        for script in scripts.iter().filter(|_| load) {
            pipe.cmd("SCRIPT").arg("LOAD").arg(*script).ignore();
        }
        let replies: Vec<Vec<String>> = pipe.query_async(conn).await?;
        let value = |i: usize| {
            replies
                .get(i)
                .and_then(|pair| pair.get(1))
                .cloned()
                .unwrap_or_default()
        };
        Ok(vec![(
            self.label.to_string(),
            [value(0), value(1), value(2)],
        )])
    }

    /// The error of a failed [`prepare`](Self::prepare).
    fn prepare_error(&mut self, e: redis::RedisError, check: bool) -> Error {
        if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() {
            return self.store.fail(e);
        }
        let detail = said(&e);
        if check && is_denied(&e) {
            return Error::Refused(format!(
                "Redis at {} denies this user CONFIG GET, so yaraus cannot verify that it keeps \
                 every write (appendonly yes, appendfsync always, maxmemory-policy noeviction); \
                 grant it `+config|get`, or, once you have checked those settings on every \
                 node yourself, pass {}",
                self.label,
                Setting::AssumeDurable
            ));
        }
        Error::State(if check {
            format!(
                "cannot check that Redis at {} keeps every write: CONFIG GET failed \
                 ({detail}); make sure every node runs with appendonly yes, \
                 appendfsync always and maxmemory-policy noeviction, then pass {}",
                self.label,
                Setting::AssumeDurable
            )
        } else {
            format!(
                "cannot load yaraus's scripts into Redis at {}: {detail}",
                self.label
            )
        })
    }

    /// Gets the node ready ([`prepare`](Self::prepare)), runs one of our
    /// scripts and takes its reply apart.
    pub async fn ask(
        &mut self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<super::reply::Answer> {
        self.prepare().await?;
        let reply: redis::Value = self.script(invocation).await?;
        self.answer(reply)
    }

    /// Takes the reply of one of our scripts apart, naming this node in
    /// its errors.
    pub fn answer(&self, reply: redis::Value) -> Result<super::reply::Answer> {
        super::reply::Answer::new(Arc::clone(&self.label), reply)
    }

    /// With `--min-replicas N`, waits until N replicas have the write just
    /// made on `key` ([`Store::confirm`]); fewer is an [`Error::Unavailable`]
    /// and this node's write does not count. Without it, does nothing.
    pub async fn confirm(&mut self, key: &str) -> Result<()> {
        if self.store.target().min_replicas() == 0 {
            return Ok(());
        }
        let r = self.store.confirm(key).await?;
        if r.ok() {
            Ok(())
        } else {
            Err(Error::Unavailable(format!(
                "Redis at {}: {} ({} {})",
                self.label,
                r.describe(),
                Setting::MinReplicas,
                r.min
            )))
        }
    }

    /// Runs one of our scripts. An error our script raised (`YARAUS_…`) is an
    /// [`Error::State`] carrying the script's message and this node's URL;
    /// anything else is sorted by [`classify`].
    pub async fn script<T: redis::FromRedisValue>(
        &mut self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<T> {
        self.script_or(invocation, || None).await
    }

    /// [`script`](Self::script), or the script `without` gives when the ACL
    /// refuses this one ([`Store::script_or`]).
    pub async fn script_or<T: redis::FromRedisValue>(
        &mut self,
        invocation: &redis::ScriptInvocation<'_>,
        without: impl FnOnce() -> Option<redis::ScriptInvocation<'static>>,
    ) -> Result<T> {
        let reply = match self.store.script_or(invocation, without).await {
            Ok(reply) => reply,
            Err(e) => return Err(self.node_fault(e)),
        };
        match reply {
            Ok(v) => Ok(v),
            Err(e) => Err(match script_error(&e) {
                Some((_, msg)) => Error::State(format!("Redis at {}: {msg}", self.label)),
                // A denied command is the node's fault; a key of another
                // type is the data's, and stays the caller's error.
                None => match classify(self.store.target(), e) {
                    refused @ Error::Refused(_) => self.node_fault(refused),
                    other => other,
                },
            }),
        }
    }
}

/// Whether the settings read from a node (or each master of a Cluster)
/// keep every write; what to set when they do not.
fn durability_verdict(configs: &[(String, [String; 3])]) -> std::result::Result<(), String> {
    let shown = |v: &str| {
        if v.is_empty() {
            "?".to_string()
        } else {
            v.to_string()
        }
    };
    for (label, [aof, fsync, policy]) in configs {
        if aof != "yes" || fsync != "always" {
            return Err(format!(
                "Redis at {label} has appendonly {} and appendfsync {}: a crash could lose the \
                 latest sequence value and a number could be handed out twice; set \
                 `CONFIG SET appendonly yes` and `CONFIG SET appendfsync always` (and in \
                 redis.conf) on every node, or pass {} to accept the risk",
                shown(aof),
                shown(fsync),
                Setting::AllowVolatile,
            ));
        }
        if !keeps_keys_without_ttl(policy) {
            return Err(format!(
                "Redis at {label} has maxmemory-policy {}, which can evict a sequence counter when \
                 memory runs short, and a number could then be handed out twice; set \
                 `CONFIG SET maxmemory-policy noeviction` (or a volatile-* policy, and in \
                 redis.conf) on every node, or pass {} to accept the risk",
                shown(policy),
                Setting::AllowVolatile,
            ));
        }
    }
    Ok(())
}

/// The settings the durability check reads, in this order.
const DURABILITY_SETTINGS: [&str; 3] = ["appendonly", "appendfsync", "maxmemory-policy"];

/// The durability settings of every master of a Cluster, by address.
async fn every_master_config(
    conn: &mut Connection,
) -> redis::RedisResult<Vec<(String, [String; 3])>> {
    let mut by_master: std::collections::BTreeMap<String, [String; 3]> = Default::default();
    for (i, name) in DURABILITY_SETTINGS.iter().enumerate() {
        let mut cmd = redis::cmd("CONFIG");
        cmd.arg("GET").arg(*name);
        for (addr, reply) in conn.on_every_master(cmd).await? {
            let pair: Vec<String> = redis::from_redis_value(reply)?;
            by_master.entry(addr).or_default()[i] = pair.get(1).cloned().unwrap_or_default();
        }
    }
    Ok(by_master.into_iter().collect())
}

/// Whether a `maxmemory-policy` leaves keys without a ttl alone, as every
/// counter is: `noeviction` and the `volatile-*` policies do; `allkeys-*`
/// (and anything this yaraus does not know) may evict them.
fn keeps_keys_without_ttl(policy: &str) -> bool {
    policy == "noeviction" || policy.starts_with("volatile-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_policies_that_never_evict_a_key_without_ttl_keep_counters() {
        for policy in ["noeviction", "volatile-lru", "volatile-lfu", "volatile-ttl"] {
            assert!(keeps_keys_without_ttl(policy), "{policy}");
        }
        for policy in ["allkeys-lru", "allkeys-lfu", "allkeys-random", "", "?"] {
            assert!(!keeps_keys_without_ttl(policy), "{policy}");
        }
    }
}
