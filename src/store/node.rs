//! One master of a [`super::Quorum`]: its [`Store`], the scripts it must know,
//! and whether it has been seen to keep every write. A majority protocol
//! counts a node's vote only if the node cannot forget it: persisted before
//! the reply (`appendonly yes` + `appendfsync always`) and never evicted
//! (`maxmemory-policy` `noeviction` or `volatile-*`: counters have no ttl).
//! That is checked once per node, on first contact ([`Node::prepare`]).

use super::{Connection, Store, Target, Timeouts, classify, script_error};
use crate::base::setting::Setting;
use crate::error::{Error, Result};
use std::sync::Arc;

/// Whether a node has been seen to fsync every write before replying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Durability {
    /// Nobody asked us to check.
    NotRequired,
    /// Required, not checked yet (the node has not answered so far).
    Unchecked,
    /// Checked: `appendonly yes`, `appendfsync always`, and a
    /// `maxmemory-policy` that never evicts a key without a ttl.
    Verified,
}

/// One Redis master of a [`super::Quorum`].
#[derive(Clone)]
pub struct Node {
    store: Store,
    label: Arc<str>,
    durability: Durability,
    /// Scripts to load before the first request (see [`super::Quorum::preload`]).
    scripts: Arc<[&'static str]>,
    loaded: bool,
}

impl Node {
    /// A node for `target`, each dial and request bounded by `timeouts`;
    /// with `require_durable`, [`prepare`](Self::prepare) checks that it
    /// keeps every write. Nothing is dialed yet.
    pub(super) fn new(target: &Target, timeouts: Timeouts, require_durable: bool) -> Result<Node> {
        Ok(Node {
            store: Store::new(target, timeouts)?,
            label: Arc::from(target.display().to_string()),
            durability: if require_durable {
                Durability::Unchecked
            } else {
                Durability::NotRequired
            },
            scripts: Arc::from([]),
            loaded: false,
        })
    }

    /// Scripts to load before the next request ([`super::Quorum::preload`]).
    pub(super) fn preload(&mut self, scripts: &Arc<[&'static str]>) {
        self.scripts = Arc::clone(scripts);
        self.loaded = false;
    }

    /// The URL, password hidden, for messages.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Whether [`prepare`](Self::prepare) has nothing left to do.
    pub(super) fn is_prepared(&self) -> bool {
        self.durability != Durability::Unchecked && (self.loaded || self.scripts.is_empty())
    }

    pub fn store(&mut self) -> &mut Store {
        &mut self.store
    }

    /// Gets the node ready before its first request, in one round trip:
    /// checks that it persists every write before replying, when the quorum
    /// was told to require it (`CONFIG GET`), and loads the scripts of
    /// [`super::Quorum::preload`] (`SCRIPT LOAD`). Done once per node. A node that
    /// does not persist every write is an [`Error::State`]: the caller must
    /// refuse, not retry.
    pub async fn prepare(&mut self) -> Result<()> {
        let check = self.durability == Durability::Unchecked;
        let load = !self.loaded && !self.scripts.is_empty();
        if !check && !load {
            return Ok(());
        }
        let mut conn = self.store.connection().await?;
        let configs = if let Connection::Cluster(_) = conn {
            // Scripts load on first use there (EVALSHA falls back to EVAL);
            // the check asks every master, whichever holds the keys.
            self.loaded = true;
            if !check {
                return Ok(());
            }
            match every_master_config(&mut conn).await {
                Ok(configs) => configs,
                Err(e) => return Err(self.prepare_error(e, check)),
            }
        } else {
            let mut pipe = redis::pipe();
            if check {
                for name in DURABILITY_SETTINGS {
                    pipe.cmd("CONFIG").arg("GET").arg(name);
                }
            }
            for script in self.scripts.iter().filter(|_| load) {
                pipe.cmd("SCRIPT").arg("LOAD").arg(*script).ignore();
            }
            let replies: Vec<Vec<String>> = match pipe.query_async(&mut conn).await {
                Ok(replies) => replies,
                Err(e) => return Err(self.prepare_error(e, check)),
            };
            self.loaded = true;
            if !check {
                return Ok(());
            }
            let value = |i: usize| {
                replies
                    .get(i)
                    .and_then(|pair| pair.get(1))
                    .cloned()
                    .unwrap_or_default()
            };
            vec![(self.label.to_string(), [value(0), value(1), value(2)])]
        };
        let shown = |v: &str| {
            if v.is_empty() {
                "?".to_string()
            } else {
                v.to_string()
            }
        };
        for (label, [aof, fsync, policy]) in &configs {
            if aof != "yes" || fsync != "always" {
                return Err(Error::State(format!(
                    "Redis at {label} has appendonly {} and appendfsync {}: a crash could lose the \
                     latest sequence value and a number could be handed out twice; set \
                     `CONFIG SET appendonly yes` and `CONFIG SET appendfsync always` (and in \
                     redis.conf) on every node, or pass {} to accept the risk",
                    shown(aof),
                    shown(fsync),
                    Setting::AllowVolatile,
                )));
            }
            if !keeps_keys_without_ttl(policy) {
                return Err(Error::State(format!(
                    "Redis at {label} has maxmemory-policy {}, which can evict a sequence counter when \
                     memory runs short, and a number could then be handed out twice; set \
                     `CONFIG SET maxmemory-policy noeviction` (or a volatile-* policy, and in \
                     redis.conf) on every node, or pass {} to accept the risk",
                    shown(policy),
                    Setting::AllowVolatile,
                )));
            }
        }
        self.durability = Durability::Verified;
        Ok(())
    }

    /// The error of a failed [`prepare`](Self::prepare).
    fn prepare_error(&mut self, e: redis::RedisError, check: bool) -> Error {
        if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() {
            return self.store.fail(e);
        }
        let detail = super::said(&e);
        if check && super::is_denied(&e) {
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

    /// Gets the node ready ([`prepare`](Self::prepare)) and runs one of our
    /// scripts on `key` with `args`, taking its reply apart.
    pub async fn ask(
        &mut self,
        script: &redis::Script,
        key: &str,
        args: &[&str],
    ) -> Result<super::reply::Answer> {
        self.ask_keys(script, &[key], args).await
    }

    /// [`ask`](Self::ask) for a script of several keys.
    pub async fn ask_keys(
        &mut self,
        script: &redis::Script,
        keys: &[&str],
        args: &[&str],
    ) -> Result<super::reply::Answer> {
        self.prepare().await?;
        let mut invocation = script.prepare_invoke();
        for key in keys {
            invocation.key(*key);
        }
        for arg in args {
            invocation.arg(*arg);
        }
        let reply: redis::Value = self.script(&invocation).await?;
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
        match self.store.script_or(invocation, without).await? {
            Ok(v) => Ok(v),
            Err(e) => Err(match script_error(&e) {
                Some((_, msg)) => Error::State(format!("Redis at {}: {msg}", self.label)),
                None => classify(self.store.target(), e),
            }),
        }
    }
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
