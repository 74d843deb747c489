//! One Redis deployment as the rest of yaraus talks to it ([`Store`]): a
//! handle whose clones share one connection (link.rs), dialed on demand
//! and again after a failure, every request bounded by the timeouts, every
//! error sorted into its kind (errors.rs), and a write confirmed by the
//! replicas ([`Store::confirm`]). The design: the module docs of `store`.

use super::connection::{Connection, Dialer};
use super::deadline;
use super::errors::{classify, not_redis};
use super::link::Link;
use super::listen::Listener;
use super::probe;
use super::redis_error::{is_denied, is_stale, said};
use super::reply;
use super::target::Target;
use crate::base::setting::Setting;
use crate::error::{Error, Result};
use crate::timing::Timeouts;
use std::sync::Arc;

/// A call of one of our scripts with its `keys`, in their order: the start
/// of every builder of a script's KEYS and ARGV (a `script.rs` beside the
/// script), which then pushes the arguments.
pub fn invoke(script: &'static redis::Script, keys: &[&str]) -> redis::ScriptInvocation<'static> {
    let mut invocation = script.prepare_invoke();
    for key in keys {
        invocation.key(*key);
    }
    invocation
}

/// One Redis server and, while it lasts, a connection to it. Clones share
/// that connection, and its replacement after a failure (`link.rs`).
#[derive(Clone)]
pub struct Store {
    /// The URL and the client's settings, which never change.
    remote: Arc<Remote>,
    link: Arc<Link>,
    /// The generation of the connection this handle last used: a failure
    /// drops that one, not a newer one another clone dialed since.
    used: u64,
}

/// Where a store connects, and how.
struct Remote {
    target: Target,
    dialer: Dialer,
    timeouts: Timeouts,
}

impl Store {
    /// A store for `target`; nothing is dialed until the first request.
    pub fn new(target: &Target, timeouts: Timeouts) -> Result<Store> {
        let dialer = Dialer::new(target, timeouts.connect(), timeouts.response()).map_err(|e| {
            Error::Usage(format!(
                "invalid Redis URL '{}': {}",
                target.display(),
                said(&e)
            ))
        })?;
        Ok(Store {
            remote: Arc::new(Remote {
                target: target.clone(),
                dialer,
                timeouts,
            }),
            link: Arc::default(),
            used: 0,
        })
    }

    /// A store for `target`, connected now, so that a wrong address, password
    /// or database number is reported before anything else happens.
    pub async fn connect(target: &Target, timeouts: Timeouts) -> Result<Store> {
        let mut store = Store::new(target, timeouts)?;
        store.connection().await?;
        Ok(store)
    }

    pub fn target(&self) -> &Target {
        &self.remote.target
    }

    /// Takes the reply of one of our scripts apart, naming this server in
    /// its errors.
    pub fn answer(&self, reply: redis::Value) -> Result<reply::Answer> {
        reply::Answer::new(self.target().display().to_string().into(), reply)
    }

    pub fn timeouts(&self) -> Timeouts {
        self.remote.timeouts
    }

    /// A connection of its own that listens on `channels` (a connection in
    /// subscribed mode can send nothing else), dialed with the same URL,
    /// TLS material and credentials as [`connection`](Self::connection),
    /// and bounded by the connect timeout. `Err` when the dial or the
    /// subscription fails, which a waiter takes as "poll" (listen.rs).
    pub async fn listen(&self, channels: &[&str]) -> redis::RedisResult<Listener> {
        let remote = &self.remote;
        match tokio::time::timeout(remote.timeouts.connect(), remote.dialer.listen(channels)).await
        {
            Ok(result) => result,
            Err(_) => Err(std::io::Error::from(std::io::ErrorKind::TimedOut).into()),
        }
    }

    /// The live connection, shared with every clone; dialed (once for all
    /// of them) if there is none.
    pub async fn connection(&mut self) -> Result<Connection> {
        let remote = Arc::clone(&self.remote);
        let (conn, generation) = self
            .link
            .get(move || {
                Box::pin(async move {
                    let response = remote.timeouts.response();
                    remote.dial(Some(response)).await
                })
            })
            .await?;
        self.used = generation;
        Ok(conn)
    }

    /// Whether the connection this handle last used is still the live one
    /// (false before the first request, and once it failed).
    pub fn is_connected(&self) -> bool {
        self.link.live() == Some(self.used)
    }

    /// The generation of the connection this handle last used.
    pub(super) fn used(&self) -> u64 {
        self.used
    }

    /// The generation of the live connection, if there is one: a new
    /// generation is a new connection, to a server that may have restarted.
    pub fn generation(&self) -> Option<u64> {
        self.link.live()
    }

    /// A connection of its own, dialed as [`connection`](Self::connection)
    /// is, whose requests carry no response timeout: for a caller that
    /// bounds its waits itself (`list`, by its progress). It closes when
    /// its last clone is dropped.
    pub async fn connection_without_timeout(&self) -> Result<Connection> {
        self.remote.dial(None).await
    }

    /// Runs one command, mapping its error.
    pub async fn query<T: redis::FromRedisValue>(&mut self, cmd: &redis::Cmd) -> Result<T> {
        let mut conn = self.connection().await?;
        match cmd.query_async(&mut conn).await {
            Ok(v) => Ok(v),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Runs a pipeline, mapping its error.
    pub async fn pipeline<T: redis::FromRedisValue>(
        &mut self,
        pipe: &redis::Pipeline,
    ) -> Result<T> {
        let mut conn = self.connection().await?;
        match pipe.query_async(&mut conn).await {
            Ok(v) => Ok(v),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Runs a Lua script (EVALSHA, falling back to EVAL when the server does
    /// not know it yet), returning Redis's own error untouched for the caller
    /// to inspect, after dropping the connection if the error says it died.
    pub async fn script<T: redis::FromRedisValue>(
        &mut self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<std::result::Result<T, redis::RedisError>> {
        let mut conn = self.connection().await?;
        match invocation.invoke_async(&mut conn).await {
            Ok(v) => Ok(Ok(v)),
            Err(e) if is_stale(&e) => Err(self.fail(e)),
            Err(e) => Ok(Err(e)),
        }
    }

    /// [`script`](Self::script), and when the server's ACL refuses it and
    /// `without` gives the same script without a key it may do without (a
    /// queue of waiters, for a user made from older rules: claim/wake.rs),
    /// that one instead. The ACL checks a script's keys before it runs, so
    /// the refused one did nothing.
    pub async fn script_or<T: redis::FromRedisValue>(
        &mut self,
        invocation: &redis::ScriptInvocation<'_>,
        without: impl FnOnce() -> Option<redis::ScriptInvocation<'static>>,
    ) -> Result<std::result::Result<T, redis::RedisError>> {
        match self.script(invocation).await? {
            Err(e) if is_denied(&e) => match without() {
                Some(other) => self.script(&other).await,
                None => Ok(Err(e)),
            },
            reply => Ok(reply),
        }
    }

    /// Waits until the replicas have every write made so far through this
    /// connection, `key` being one of the keys written (in a Cluster, the
    /// `WAIT` goes to its slot's master).
    ///
    /// With `--min-replicas N`, waits for N, and the write counts only if N
    /// confirmed. Without it, waits for a majority of the master's replicas
    /// ([`replica_count`](Self::replica_count)); fewer is a
    /// [`Replicated::shortfall`], not a failure.
    pub async fn confirm(&mut self, key: &str) -> Result<Replicated> {
        let min = i64::from(self.target().min_replicas());
        let majority = self.majority_wanted(key).await?;
        let wanted = majority.max(min);
        if wanted == 0 {
            return Ok(Replicated {
                acked: 0,
                majority,
                min,
            });
        }
        let bound = deadline::wait_bound(self.timeouts().replica_wait());
        let ms = bound.as_millis().max(1) as u64;
        let mut conn = self.connection().await?;
        let acked = match conn.wait(key, wanted, ms).await {
            Ok(acked) => acked,
            Err(e) => return Err(self.fail(e)),
        };
        Ok(Replicated {
            acked,
            majority,
            min,
        })
    }

    /// The majority of the master's replicas that [`confirm`](Self::confirm)
    /// waits for without `--min-replicas` (0 with it, or without replicas).
    /// Asking it before a first write makes a refused `INFO` refuse the
    /// command with nothing written.
    pub async fn majority_wanted(&mut self, key: &str) -> Result<i64> {
        if self.target().min_replicas() > 0 {
            return Ok(0);
        }
        Ok(match self.replica_count(key).await? {
            0 => 0,
            n => n / 2 + 1,
        })
    }

    /// How many replicas the master of `key` has: `--redis-replicas`, else
    /// what `INFO replication` says, asked once per connection. A user the
    /// ACL denies `INFO` is refused with the options that do without it.
    pub async fn replica_count(&mut self, key: &str) -> Result<i64> {
        if let Some(n) = self.target().declared_replicas() {
            return Ok(i64::from(n));
        }
        let mut conn = self.connection().await?;
        if let Some(n) = self.link.replicas(self.used) {
            return Ok(n);
        }
        let n = match conn.connected_replicas(key).await {
            Ok(n) => n,
            Err(e) if is_denied(&e) => {
                return Err(Error::Refused(format!(
                    "Redis at {} denies this user INFO, so yaraus cannot learn how many \
                     replicas must confirm a lease (a majority of them); grant it \
                     `+info|replication`, or say it with {} N (0 for none) or {} N",
                    self.target().display(),
                    Setting::Replicas,
                    Setting::MinReplicas
                )));
            }
            Err(e) => return Err(self.fail(e)),
        };
        self.link.set_replicas(self.used, n);
        Ok(n)
    }

    /// Maps an error, dropping the connection when the error says it is dead
    /// or no longer a master's (the next request dials again, and finds the
    /// new master through Sentinel).
    pub fn fail(&mut self, e: redis::RedisError) -> Error {
        if is_stale(&e) {
            self.link.drop_generation(self.used);
        }
        classify(self.target(), e)
    }
}

impl Remote {
    /// Dials a connection whose requests time out after `response` (None:
    /// never), and checks that it is to a Redis that takes us.
    async fn dial(&self, response: Option<std::time::Duration>) -> Result<Connection> {
        let connect = self.timeouts.connect();
        // The connection timeout of redis-rs covers dialing; the outer one
        // also covers a server that accepts but never answers the handshake.
        let dial = async {
            let mut conn = self.dialer.dial(connect, response).await?;
            // Without a password and with db 0, the handshake sends nothing:
            // a server that requires a password, or one that is not Redis at
            // all, would otherwise be found out by the first real request,
            // whose failure reads as an outage (an HTTP server closes the
            // connection after its answer). Sentinel's dial asks ROLE.
            if self.dialer.is_server() {
                redis::cmd("PING").query_async::<()>(&mut conn).await?;
            }
            Ok::<_, redis::RedisError>(conn)
        };
        match tokio::time::timeout(connect, dial).await {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(e)) if e.kind() == redis::ErrorKind::MasterNameNotFoundBySentinel => {
                Err(self.no_master(e).await)
            }
            Ok(Err(e)) => Err(self.connect_error(e).await),
            Err(_) => Err(Error::Unavailable(format!(
                "cannot reach Redis at {}: no answer within {}",
                self.target.display(),
                crate::base::duration::shown(connect)
            ))),
        }
    }

    /// No sentinel named a master that answers as one: a failover in
    /// progress (wait), unless every sentinel that answers says it does
    /// not know the name at all (a mistake: say so at once).
    async fn no_master(&self, e: redis::RedisError) -> Error {
        match self.dialer.master_is_known(self.timeouts.connect()).await {
            Some(false) => Error::Refused(format!(
                "no sentinel of {} knows a master named {} (SENTINEL MASTERS lists the names \
                 they watch); check the name in {} or {}",
                self.target.display(),
                self.dialer.master().unwrap_or("?"),
                Setting::Redis,
                Setting::Sentinel
            )),
            _ => classify(&self.target, e),
        }
    }

    async fn connect_error(&self, e: redis::RedisError) -> Error {
        let d = self.target.display();
        if e.kind() == redis::ErrorKind::Parse {
            let answer = probe::first_line(&self.target, self.timeouts.connect()).await;
            return not_redis(&self.target, answer);
        }
        let text = e.to_string();
        // A SELECT refused for want of AUTH comes back from redis-rs as
        // "refused to switch database: Authentication required.", its NOAUTH
        // code dropped.
        if e.kind() == redis::ErrorKind::AuthenticationFailed
            || matches!(e.code(), Some("NOAUTH") | Some("WRONGPASS"))
            || text.contains("Authentication required")
        {
            return Error::Refused(format!("Redis at {d} refused authentication: {}", said(&e)));
        }
        if text.contains("DB index is out of range") || text.contains("invalid DB index") {
            return Error::Refused(format!("Redis at {d} has no such database: {}", said(&e)));
        }
        classify(&self.target, e)
    }
}

/// Outcome of [`Store::confirm`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replicated {
    /// How many replicas confirmed (or, when fewer than `min` are
    /// connected, how many are).
    pub acked: i64,
    /// A majority of the replicas the server reported connected.
    pub majority: i64,
    /// `--min-replicas`.
    pub min: i64,
}

impl Replicated {
    /// Whether the write counts: `--min-replicas` confirmed it.
    pub fn ok(&self) -> bool {
        self.acked >= self.min
    }

    /// Fewer than a majority of the connected replicas confirmed: logged and
    /// counted (`wait_shortfall`), a failure only below `--min-replicas`.
    pub fn shortfall(&self) -> bool {
        self.acked < self.majority
    }

    /// What happened, for messages: "only 0 of the 1 replicas needed confirmed it".
    pub fn describe(&self) -> String {
        let needed = self.majority.max(self.min);
        format!(
            "only {} of the {needed} replicas needed confirmed it",
            self.acked
        )
    }
}
