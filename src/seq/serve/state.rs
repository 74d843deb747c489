//! The state of the server: what every connection shares ([`Server`]) and
//! what one connection has ([`Client`]).
//!
//! They live apart from the accept loop (`mod.rs`) so that the parts that
//! read them (the dispatcher, the sessions, the connection loop) import
//! them without importing the loop that starts those parts: the imports of
//! `seq serve` run one way, from the loop down to the replies.

use super::batch::Registry;
use super::health::Health;
use super::info::ServerStats;
use super::limits::Guard;
use super::metrics::ServeMetrics;
use super::multi::Transaction;
use super::reply::Proto;
use crate::seq::SeqKeys;
use crate::store::Quorum;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, oneshot};

/// The state every connection shares.
pub struct Server {
    pub(super) registry: Arc<Registry>,
    /// Cloned for each `GET` (clones share the connections).
    pub(super) quorum: Quorum,
    pub(super) keys: SeqKeys,
    /// `--timeout`: bounds each request's wait for its round, and each `GET`.
    pub(super) timeout: Duration,
    pub(super) max_clients: u64,
    pub(super) idle_timeout: Option<Duration>,
    pub(super) password: Option<String>,
    /// Whether the nodes were required to persist every write (what
    /// `CONFIG GET appendonly` reports).
    pub(super) durable: bool,
    pub(super) stats: ServerStats,
    /// What the last probe of the nodes found (`INFO health`).
    pub(super) health: Arc<Health>,
    pub(super) listen: String,
    pub(super) nodes: Vec<String>,
    /// Told when the last connection closes.
    pub(super) emptied: Notify,
    /// The unauthenticated connections, and the logs of clients over a
    /// limit (`limits.rs`).
    pub(super) guard: Guard,
    /// Counts wrong passwords for `--metrics-listen`.
    pub(super) metrics: ServeMetrics,
}

/// One connection's session state.
pub struct Client {
    pub(super) id: u64,
    /// The client's address, for log lines.
    pub(super) peer: String,
    pub(super) authenticated: bool,
    /// Until it first authenticates (with `--requirepass`): resolves when
    /// the connection is to give its slot to a new one.
    pub(super) stranger: Option<oneshot::Receiver<()>>,
    /// Wrong passwords it sent.
    pub(super) auth_failures: u32,
    pub(super) name: Option<Vec<u8>>,
    /// RESP2 until `HELLO 3`.
    pub(super) proto: Proto,
    /// The queue, between `MULTI` and `EXEC`.
    pub(super) multi: Option<Transaction>,
}
