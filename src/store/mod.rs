//! Talking to one Redis server: connecting with a deadline, reconnecting after
//! a failure, running our Lua scripts, and waiting for replicas.
//!
//! A [`Store`] owns at most one multiplexed connection. Any error that says the
//! connection is gone (I/O, timeout) drops it, and the next call dials again:
//! a keeper that renews every second must survive a Redis restart without the
//! caller knowing about sockets. Every request carries a response timeout, so
//! a SIGSTOPped server turns into an error within [`Timeouts::response`] and
//! never into a hang.
//!
//! Errors are sorted here, once, into the kinds the user sees (unreachable,
//! refused, wrong type, other), so that every subcommand prints the same line
//! for the same fault. The kind is the [`Error`] variant: callers decide
//! whether to retry by it, never by the words of a message.
//!
//! Several independent masters are a [`Quorum`] of [`Node`]s, asked all at
//! once by [`gather`]; [`reply`] reads what our scripts return.

pub mod quorum;
pub mod reply;
mod target;

pub use quorum::{Node, Quorum, Replies, gather, majority};
pub use target::Target;

use crate::error::{Error, Result};
use redis::aio::MultiplexedConnection;
use std::sync::Arc;
use std::time::Duration;

/// How long to wait for Redis.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// Dialing, TLS and the handshake (AUTH, SELECT) together.
    pub connect: Duration,
    /// One request and its reply.
    pub response: Duration,
}

impl Timeouts {
    /// Timeouts derived from the user's `--timeout`: a request may also carry a
    /// `WAIT` of up to `timeout`, so it gets that much again on top.
    pub fn from_timeout(timeout: Duration) -> Timeouts {
        Timeouts {
            connect: timeout,
            response: timeout * 2,
        }
    }
}

/// One Redis server and, while it lasts, a connection to it. A clone shares
/// the connection it has now, and dials its own after a failure.
#[derive(Clone)]
pub struct Store {
    /// Shared by clones, which are made per lock held (and per cycle of the
    /// benchmark): the URL and the client's settings never change.
    target: Arc<Target>,
    client: Arc<redis::Client>,
    timeouts: Timeouts,
    conn: Option<MultiplexedConnection>,
}

impl Store {
    /// A store for `target`; nothing is dialed until the first request.
    pub fn new(target: &Target, timeouts: Timeouts) -> Result<Store> {
        let client = redis::Client::open(target.connection_info().clone())
            .map_err(|e| Error::Usage(format!("invalid Redis URL '{}': {e}", target.display())))?;
        Ok(Store {
            target: Arc::new(target.clone()),
            client: Arc::new(client),
            timeouts,
            conn: None,
        })
    }

    /// A store for `target`, connected now, so that a wrong address, password
    /// or database number is reported before anything else happens.
    pub async fn connect(target: &Target, timeouts: Timeouts) -> Result<Store> {
        let mut store = Store::new(target, timeouts)?;
        let mut conn = store.connection().await?;
        // Without a password and with db 0, the handshake sends nothing a
        // server that requires a password would refuse: ask once, so that
        // its NOAUTH is reported here rather than retried as an outage.
        if let Err(e) = redis::cmd("PING").query_async::<()>(&mut conn).await {
            return Err(store.connect_error(e));
        }
        Ok(store)
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// The live connection, dialing a new one if there is none.
    pub async fn connection(&mut self) -> Result<MultiplexedConnection> {
        if let Some(conn) = &self.conn {
            return Ok(conn.clone());
        }
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.timeouts.connect))
            .set_response_timeout(Some(self.timeouts.response));
        // The connection timeout of redis-rs covers dialing; the outer one
        // also covers a server that accepts but never answers the handshake.
        let dial = self
            .client
            .get_multiplexed_async_connection_with_config(&config);
        let conn = match tokio::time::timeout(self.timeouts.connect, dial).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => return Err(self.connect_error(e)),
            Err(_) => {
                return Err(Error::Unavailable(format!(
                    "cannot reach Redis at {}: no answer within {}",
                    self.target.display(),
                    humantime::format_duration(self.timeouts.connect)
                )));
            }
        };
        self.conn = Some(conn.clone());
        Ok(conn)
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
            Err(e) if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() => {
                Err(self.fail(e))
            }
            Err(e) => Ok(Err(e)),
        }
    }

    /// Waits until a majority of the replicas connected to this server have
    /// every write we made so far. `replicas` is the count the server reported
    /// (a script returns it with its result, so this costs nothing when there
    /// are none). Returns how many acknowledged and how many were needed, or
    /// `None` when that is not a majority.
    pub async fn wait_for_replicas(&mut self, replicas: i64) -> Result<Replicated> {
        if replicas <= 0 {
            return Ok(Replicated {
                acked: 0,
                needed: 0,
            });
        }
        let needed = replicas / 2 + 1;
        let ms = self.timeouts.connect.as_millis().max(1) as u64;
        let acked: i64 = self.query(redis::cmd("WAIT").arg(needed).arg(ms)).await?;
        Ok(Replicated { acked, needed })
    }

    /// Maps an error, dropping the connection when the error says it is dead.
    pub fn fail(&mut self, e: redis::RedisError) -> Error {
        if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() {
            self.conn = None;
        }
        classify(&self.target, e)
    }

    fn connect_error(&self, e: redis::RedisError) -> Error {
        let d = self.target.display();
        let text = e.to_string();
        // A SELECT refused for want of AUTH comes back from redis-rs as
        // "refused to switch database: Authentication required.", its NOAUTH
        // code dropped.
        if e.kind() == redis::ErrorKind::AuthenticationFailed
            || matches!(e.code(), Some("NOAUTH") | Some("WRONGPASS"))
            || text.contains("Authentication required")
        {
            return Error::Refused(format!(
                "Redis at {d} refused authentication: {}",
                detail(&e)
            ));
        }
        if text.contains("DB index is out of range") || text.contains("invalid DB index") {
            return Error::Refused(format!("Redis at {d} has no such database: {}", detail(&e)));
        }
        classify(&self.target, e)
    }
}

/// Checks a NAME that goes inside a Cluster hash tag (`ns:WHAT:{NAME}:…`):
/// one word, not empty, no whitespace or control characters, no braces
/// (they delimit the tag). `what` names the subcommand in the message.
pub fn check_tagged_name(what: &str, name: &str) -> Result<()> {
    let bad = name
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || *c == '{' || *c == '}');
    match (name.is_empty(), bad) {
        (true, _) => Err(Error::Usage(format!("the {what} NAME must not be empty"))),
        (false, Some(c)) => Err(Error::Usage(format!(
            "the {what} NAME {name:?} contains {c:?}; use letters, digits and punctuation \
             other than braces, without spaces"
        ))),
        (false, None) => Ok(()),
    }
}

/// Outcome of [`Store::wait_for_replicas`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replicated {
    pub acked: i64,
    pub needed: i64,
}

impl Replicated {
    pub fn ok(&self) -> bool {
        self.acked >= self.needed
    }
}

fn detail(e: &redis::RedisError) -> String {
    match (e.code(), e.detail()) {
        (Some(code), Some(d)) => format!("{code} {d}"),
        (None, Some(d)) => d.to_string(),
        _ => e.to_string(),
    }
}

/// Sorts a redis-rs error into what the user must be told.
pub fn classify(target: &Target, e: redis::RedisError) -> Error {
    let d = target.display();
    if e.is_timeout() {
        return Error::Unavailable(format!("Redis at {d} did not answer in time"));
    }
    if e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() {
        return Error::Unavailable(format!("cannot reach Redis at {d}: {e}"));
    }
    if e.kind() == redis::ErrorKind::AuthenticationFailed
        || matches!(e.code(), Some("NOAUTH") | Some("WRONGPASS"))
    {
        return Error::Refused(format!(
            "Redis at {d} refused authentication: {}",
            detail(&e)
        ));
    }
    if e.code() == Some("WRONGTYPE") {
        return Error::State(format!("Redis at {d}: {}", detail(&e)));
    }
    if matches!(
        e.code(),
        Some("READONLY") | Some("MASTERDOWN") | Some("LOADING")
    ) {
        return Error::Unavailable(format!(
            "Redis at {d} cannot take writes now: {}",
            detail(&e)
        ));
    }
    Error::Redis(format!("Redis at {d}: {}", detail(&e)))
}

/// Splits an error raised by one of our scripts with `redis.error_reply`,
/// whose first word is a code of ours (`YARAUS_…`), into code and message.
pub fn script_error(e: &redis::RedisError) -> Option<(&str, &str)> {
    let code = e.code()?;
    if code.starts_with("YARAUS_") {
        Some((code, e.detail().unwrap_or("").trim()))
    } else {
        None
    }
}
