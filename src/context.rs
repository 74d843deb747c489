//! The resolved settings every subcommand shares, worked out once.
//!
//! A front end (the `yaraus` binary, or a program that embeds the library)
//! turns what its user gave into one [`Context`] before anything else runs:
//! the servers, parsed, with their credentials and TLS material already
//! read; the namespace, agreed on once; and the [`Timeouts`] that every
//! wait derives from. Nothing below parses a URL or reads a file after that:
//! each subcommand takes from the context the shape it needs, one server
//! ([`Context::server`]) or a quorum of independent masters
//! ([`Context::quorum`]), and the key layout of its domain
//! ([`crate::lease::PoolKeys`], [`crate::seq::SeqKeys`],
//! [`crate::hilo::HiloKeys`], [`crate::index::IndexKeys`]) from the
//! namespace. The context also says how long the command rides out servers
//! out of reach ([`Context::wait`]): the bound of its [`Patience`].

use crate::base::setting::Setting;
use crate::claim::Patience;
use crate::error::{Error, Result};
use crate::lease::PoolKeys;
use crate::lock::{LockOptions, Locker};
use crate::store::{Quorum, Store, Target};
use crate::timing::Timeouts;
use std::time::Duration;

/// The namespace when neither the user nor a URL names one.
pub const DEFAULT_NAMESPACE: &str = "yaraus";

/// The servers, the namespace, the timeouts and the durability policy of
/// one invocation.
#[derive(Clone, Debug)]
pub struct Context {
    targets: Vec<Target>,
    namespace: String,
    timeouts: Timeouts,
    durable: bool,
    wait: Option<Duration>,
}

impl Context {
    /// The context of `targets`: the namespace is `namespace`, else the
    /// `?ns=` the URLs agree on, else [`DEFAULT_NAMESPACE`].
    pub fn new(
        targets: Vec<Target>,
        namespace: Option<&str>,
        timeouts: Timeouts,
    ) -> Result<Context> {
        let namespace = agreed_namespace(&targets, namespace)?;
        Ok(Context {
            targets,
            namespace,
            timeouts,
            durable: true,
            wait: None,
        })
    }

    /// The same, waiting out what passes (servers out of reach, a busy
    /// claim) for at most `wait` (`None`, the default: as long as it takes;
    /// zero: one attempt).
    pub fn waiting(mut self, wait: Option<Duration>) -> Context {
        self.wait = wait;
        self
    }

    /// How long the command waits out what passes.
    pub fn wait(&self) -> Option<Duration> {
        self.wait
    }

    /// A wait of [`wait`](Self::wait), starting now.
    pub fn patience(&self) -> Patience {
        Patience::new(self.wait)
    }

    /// The same, requiring (the default) or not that a majority protocol's
    /// nodes persist every write before they answer (`appendfsync always`,
    /// no eviction): without it, a node restarted after a crash may have
    /// forgotten a number it handed out.
    pub fn requiring_durable(mut self, durable: bool) -> Context {
        self.durable = durable;
        self
    }

    /// Whether nodes that may lose an acknowledged write are refused.
    pub fn requires_durable(&self) -> bool {
        self.durable
    }

    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// The one server that `what` lives on (with its replicas): the pool,
    /// an index.
    pub fn server(&self, what: &str) -> Result<&Target> {
        match self.targets.as_slice() {
            [target] => Ok(target),
            targets => Err(Error::Usage(format!(
                "{what} lives on one Redis server (with its replicas); got {} {} URLs",
                targets.len(),
                Setting::Redis
            ))),
        }
    }

    /// The independent masters, each asked with `request` as the bound on
    /// one request (a rule of [`Timeouts`]); a node that may lose an
    /// acknowledged write is refused unless the context does not require it.
    pub fn quorum(&self, request: Duration) -> Result<Quorum> {
        Quorum::new(&self.targets, request, self.durable)
    }

    /// The options of a lock of `ttl` here: its keys in the context's
    /// namespace, a bound on each request that leaves most of the ttl as
    /// validity ([`Timeouts::lock_request`]), nodes that may lose a write
    /// refused as the context requires. Change any field before
    /// [`locker`](Self::locker).
    pub fn lock_options(&self, ttl: Duration) -> LockOptions {
        LockOptions {
            request_timeout: self.timeouts.lock_request(ttl),
            require_fsync: self.durable,
            ..LockOptions::new(&self.namespace, ttl)
        }
    }

    /// The lock `name` on the context's servers (one master, or N
    /// independent masters), ready to take as `options` say.
    pub fn locker(&self, name: &str, options: LockOptions) -> Result<Locker> {
        Locker::new(&self.targets, name, options)
    }

    /// What the worker-id pool subcommands need: its server and its keys.
    pub fn pool(&self) -> Result<PoolContext> {
        let target = self.server("the worker-id pool")?.clone();
        let keys = if target.is_cluster() {
            PoolKeys::in_cluster(&self.namespace)
        } else {
            PoolKeys::new(&self.namespace)
        };
        Ok(PoolContext {
            target,
            keys,
            timeouts: self.timeouts,
            wait: self.wait,
        })
    }
}

/// The worker-id pool's server, keys and timeouts.
#[derive(Clone, Debug)]
pub struct PoolContext {
    pub target: Target,
    pub keys: PoolKeys,
    pub timeouts: Timeouts,
    /// How long the command waits out what passes ([`Context::wait`]).
    pub wait: Option<Duration>,
}

impl PoolContext {
    /// Connects now, so that a wrong address, password or database is
    /// reported before anything else happens.
    pub async fn connect(&self) -> Result<Store> {
        Store::connect(&self.target, self.timeouts).await
    }

    /// A store for the pool's server, not dialed yet: the first request
    /// dials (for a command that waits out a server out of reach).
    pub fn store(&self) -> Result<Store> {
        Store::new(&self.target, self.timeouts)
    }

    /// A wait of [`wait`](Self::wait), starting now.
    pub fn patience(&self) -> Patience {
        Patience::new(self.wait)
    }
}

/// `given`, else the `?ns=` every URL agrees on, else the default; URLs
/// that disagree are a usage error, as is a namespace that is empty or, in
/// a Cluster, would change the hash tags of yaraus's keys.
fn agreed_namespace(targets: &[Target], given: Option<&str>) -> Result<String> {
    let first = targets
        .first()
        .ok_or_else(|| Error::Usage(format!("no Redis server given ({} URL)", Setting::Redis)))?;
    if given.is_none()
        && let Some(other) = targets.iter().find(|t| t.namespace() != first.namespace())
    {
        return Err(Error::Usage(format!(
            "the {} URLs disagree on ?ns= ({} has {:?}, {} has {:?}); give {}",
            Setting::Redis,
            first.display(),
            first.namespace().unwrap_or("none"),
            other.display(),
            other.namespace().unwrap_or("none"),
            Setting::Namespace
        )));
    }
    let ns = given
        .or_else(|| first.namespace())
        .unwrap_or(DEFAULT_NAMESPACE)
        .to_string();
    if ns.is_empty() {
        return Err(Error::Usage("the namespace must not be empty".into()));
    }
    if first.is_cluster() && ns.contains(['{', '}']) {
        return Err(Error::Usage(format!(
            "the namespace {ns:?} contains braces, which would change the Redis Cluster hash \
             tags of yaraus's keys; use one without"
        )));
    }
    Ok(ns)
}
