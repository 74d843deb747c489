//! Several independent Redis masters, and asking all of them at once.
//!
//! Both the majority sequence and the Redlock lock talk to N masters that know
//! nothing of each other, and both need the same three things, kept here:
//!
//! * a [`Node`] per master: its [`Store`] (timeouts, reconnecting, error
//!   sorting) and whether it has been seen to keep every write: persisted
//!   before the reply (`appendonly yes` + `appendfsync always`), and never
//!   evicted (`maxmemory-policy` `noeviction` or `volatile-*`: counters have
//!   no ttl). The majority sequence needs both and checks them once per
//!   node, on first contact;
//! * the majority, `N/2 + 1`;
//! * [`gather`]: send one request to every node concurrently, bound each by a
//!   timeout, and stop waiting as soon as the outcome is decided. A node that
//!   is down or frozen then costs at most the timeout, and a healthy majority
//!   decides without waiting for it. The requests are futures polled in one
//!   task, so a caller can drop the whole round (a signal arrived) and nothing
//!   keeps running behind its back.

use super::{Connection, Store, Target, Timeouts, classify, script_error};
use crate::base::setting::Setting;
use crate::error::{Error, Result};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

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

/// One Redis master of a [`Quorum`].
#[derive(Clone)]
pub struct Node {
    store: Store,
    label: Arc<str>,
    durability: Durability,
    /// Scripts to load before the first request (see [`Quorum::preload`]).
    scripts: Arc<[&'static str]>,
    loaded: bool,
}

impl Node {
    /// The URL, password hidden, for messages.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Whether [`prepare`](Self::prepare) has nothing left to do.
    fn is_prepared(&self) -> bool {
        self.durability != Durability::Unchecked && (self.loaded || self.scripts.is_empty())
    }

    pub fn store(&mut self) -> &mut Store {
        &mut self.store
    }

    /// Gets the node ready before its first request, in one round trip:
    /// checks that it persists every write before replying, when the quorum
    /// was told to require it (`CONFIG GET`), and loads the scripts of
    /// [`Quorum::preload`] (`SCRIPT LOAD`). Done once per node. A node that
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
        let detail = e.detail().unwrap_or(&e.to_string()).to_string();
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
        match self.store.script(invocation).await? {
            Ok(v) => Ok(v),
            Err(e) => Err(match script_error(&e) {
                Some((_, msg)) => Error::State(format!("Redis at {}: {msg}", self.label)),
                None => classify(self.store.target(), e),
            }),
        }
    }
}

/// N independent masters: no replication between them, each may fail alone.
#[derive(Clone)]
pub struct Quorum {
    nodes: Vec<Node>,
    /// The nodes' labels, shared: every round names its nodes in messages.
    labels: Arc<[String]>,
    request_timeout: Duration,
}

impl Quorum {
    /// A quorum over `targets`. Each request to a node is bounded by
    /// `request_timeout` (dialing is bounded by it too). `require_durable`:
    /// [`Node::prepare`] checks each node once; otherwise it does
    /// nothing. Nothing is dialed yet.
    pub fn new(
        targets: &[Target],
        request_timeout: Duration,
        require_durable: bool,
    ) -> Result<Quorum> {
        if targets.is_empty() {
            return Err(Error::Usage(format!(
                "no Redis server given ({} URL)",
                Setting::Redis
            )));
        }
        for (i, a) in targets.iter().enumerate() {
            if targets[..i].iter().any(|b| b.display() == a.display()) {
                return Err(Error::Usage(format!(
                    "Redis at {} is given twice: each {} must be a different, independent master",
                    a.display(),
                    Setting::Redis
                )));
            }
        }
        let timeouts = Timeouts::per_request(request_timeout);
        let durability = if require_durable {
            Durability::Unchecked
        } else {
            Durability::NotRequired
        };
        let nodes = targets
            .iter()
            .map(|t| {
                Ok(Node {
                    store: Store::new(t, timeouts)?,
                    label: Arc::from(t.display().to_string()),
                    durability,
                    scripts: Arc::from([]),
                    loaded: false,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let labels = nodes.iter().map(|n| n.label.to_string()).collect();
        Ok(Quorum {
            nodes,
            labels,
            request_timeout,
        })
    }

    /// How many masters.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Prepares every node that answers ([`Node::prepare`]) before anything
    /// is written to any: a node that must be refused (not durable) then
    /// stops the command before it left a trace on the others. Waits for a
    /// majority to be ready, and the others for a grace period ([`gather`]);
    /// a node that does not answer is checked on first contact later.
    pub async fn prepare_all(&mut self) -> Result<()> {
        if self.nodes.iter().all(Node::is_prepared) {
            return Ok(());
        }
        let m = self.majority();
        let labels = self.labels();
        let limit = self.round_timeout();
        let futures: Vec<_> = self.nodes.iter_mut().map(Node::prepare).collect();
        let replies = gather(futures, &labels, limit, |replies| {
            replies.iter().filter(|r| matches!(r, Some(Ok(())))).count() >= m
        })
        .await;
        match replies
            .into_iter()
            .flatten()
            .find_map(|r| r.err().filter(Error::is_fatal))
        {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// How many of them make a majority: `N/2 + 1`.
    pub fn majority(&self) -> usize {
        majority(self.nodes.len())
    }

    /// The bound on one request to one node.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// The bound on one node's part of a round: a (re)dial and a request, or
    /// a persistence check and a request.
    pub fn round_timeout(&self) -> Duration {
        self.request_timeout * 2
    }

    /// Scripts every node loads before its first request ([`Node::prepare`],
    /// in the round trip of the durability check when there is one).
    ///
    /// Why: a round settles on a majority, and the stragglers get a grace
    /// period and are then dropped; redis-rs does not send a request whose
    /// caller is gone. A script the node does not know yet costs it three
    /// round trips (`NOSCRIPT`, `SCRIPT LOAD`, `EVALSHA`) where the others
    /// take one, so its release, say, could be dropped unsent and leave the
    /// key there until its ttl.
    pub fn preload(&mut self, scripts: &[&'static str]) {
        let scripts: Arc<[&'static str]> = Arc::from(scripts);
        for node in &mut self.nodes {
            node.scripts = Arc::clone(&scripts);
            node.loaded = false;
        }
    }

    /// The URLs, passwords hidden, in the order given.
    pub fn labels(&self) -> Arc<[String]> {
        Arc::clone(&self.labels)
    }

    pub fn nodes_mut(&mut self) -> &mut [Node] {
        &mut self.nodes
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

/// `N/2 + 1`.
pub fn majority(n: usize) -> usize {
    n / 2 + 1
}

/// One outcome per node of a round: `None` when the round was decided before
/// that node answered.
pub type Replies<T> = Vec<Option<Result<T>>>;

/// Polls `futures` (one per node, in node order) concurrently until each has
/// finished or `decided` says the replies so far settle the round. Each future
/// is bounded by `limit`; one that runs out gives [`Error::Unavailable`]
/// naming `labels[i]`.
///
/// Once the round is decided, the stragglers get a grace period as long as
/// the round has taken so far: a healthy node that was only a little slower
/// (still dialing, say) still gets the write, so that a lock usually sits on
/// every master, not on a bare majority; a frozen node costs at most twice
/// what the majority took. Futures still running after that are dropped,
/// which cancels them.
pub async fn gather<F, T>(
    futures: Vec<F>,
    labels: &[String],
    limit: Duration,
    mut decided: impl FnMut(&[Option<Result<T>>]) -> bool,
) -> Replies<T>
where
    F: Future<Output = Result<T>>,
{
    let started = tokio::time::Instant::now();
    let mut pending: Vec<Option<Pin<Box<tokio::time::Timeout<F>>>>> = futures
        .into_iter()
        .map(|f| Some(Box::pin(tokio::time::timeout(limit, f))))
        .collect();
    let mut replies: Replies<T> = pending.iter().map(|_| None).collect();
    let mut poll_all = |cx: &mut std::task::Context<'_>, replies: &mut Replies<T>| {
        let mut progress = false;
        for (i, slot) in pending.iter_mut().enumerate() {
            let Some(fut) = slot else { continue };
            if let Poll::Ready(outcome) = fut.as_mut().poll(cx) {
                replies[i] = Some(outcome.unwrap_or_else(|_| {
                    Err(Error::Unavailable(format!(
                        "Redis at {} did not answer within {}",
                        labels.get(i).map(String::as_str).unwrap_or("?"),
                        humantime::format_duration(limit)
                    )))
                }));
                *slot = None;
                progress = true;
            }
        }
        (progress, pending.iter().all(Option::is_none))
    };
    let mut all_done = false;
    std::future::poll_fn(|cx| {
        let (progress, done) = poll_all(cx, &mut replies);
        all_done = done;
        if done || (progress && decided(&replies)) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    if !all_done {
        let grace = tokio::time::sleep(started.elapsed());
        tokio::pin!(grace);
        std::future::poll_fn(|cx| {
            let (_, done) = poll_all(cx, &mut replies);
            if done || grace.as_mut().poll(cx).is_ready() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }
    replies
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

    #[test]
    fn majorities() {
        assert_eq!(
            (1..=7).map(majority).collect::<Vec<_>>(),
            [1, 2, 2, 3, 3, 4, 4]
        );
    }

    #[tokio::test]
    async fn gather_stops_when_decided_and_bounds_each_future() {
        let labels: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let futures: Vec<Pin<Box<dyn Future<Output = Result<u32>>>>> = vec![
            Box::pin(async { Ok(1) }),
            Box::pin(async { Ok(2) }),
            Box::pin(async {
                std::future::pending::<()>().await;
                Ok(3)
            }),
        ];
        let replies = gather(futures, &labels, Duration::from_secs(3600), |r| {
            r.iter().flatten().filter(|x| x.is_ok()).count() >= 2
        })
        .await;
        assert!(matches!(replies[0], Some(Ok(1))));
        assert!(matches!(replies[1], Some(Ok(2))));
        assert!(replies[2].is_none());

        let futures: Vec<Pin<Box<dyn Future<Output = Result<u32>>>>> = vec![
            Box::pin(async { Ok(1) }),
            Box::pin(async {
                std::future::pending::<()>().await;
                Ok(2)
            }),
        ];
        let replies = gather(futures, &labels, Duration::from_millis(20), |_| false).await;
        assert!(matches!(replies[0], Some(Ok(1))));
        match &replies[1] {
            Some(Err(Error::Unavailable(m))) => assert!(m.contains("Redis at b"), "{m}"),
            other => panic!("{:?}", other.as_ref().map(|r| r.is_ok())),
        }
    }
}
