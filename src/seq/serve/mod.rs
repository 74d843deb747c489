//! `yaraus seq serve`: the majority sequence behind the Redis protocol
//! (RESP2, and RESP3 after `HELLO 3`), so that `redis-cli`,
//! `redis-benchmark` and every Redis client library get ids with `INCR
//! name`; docs/seq.md, "`seq serve`", says what it answers.
//!
//! How a request flows:
//!
//! ```text
//! accept (mod.rs)        --max-clients: when full, the oldest connection that never
//!                          authenticated gives its slot; without one, the new one gets
//!                          `-ERR max number of clients reached`
//! handler.rs             one per connection: conn.rs reads → resp.rs parser (limits)
//!                          → dispatch.rs → conn.rs writes the replies in request order,
//!                          with their effects in order (a GET after an INCR sees it)
//! dispatch.rs            command.rs's table parses the request once into a Command
//!                          (arguments checked), then runs it, or queues it inside MULTI
//! limits.rs              what one client may take: replies held, time and slot
//!                          before AUTH, wrong passwords
//! session.rs             AUTH, HELLO (the protocol), CLIENT, RESET: the connection's state
//! MULTI … EXEC           → multi.rs queues the parsed commands, EXEC hands them back
//!                          to dispatch.rs, which runs them at once
//! INCR / INCRBY          → the name's queue → its sequencer (batch.rs): one majority round
//!                          for every request waiting (group commit), ids in arrival order
//! GET                    → a read of the nodes (MajoritySequence::current), on its own task
//! INFO                   → info.rs counters, health.rs readiness (a probe of the
//!                          nodes every second, on its own task)
//! (no request)           → a sweep of every sequence every 5 s, on its own task
//!                          (crate::seq::sweep): a wiped node is quarantined and set
//!                          again though no client asks for its sequences
//! replies                → reply.rs: the Outcome of each request, the RESP encoders
//! ```
//!
//! The imports run one way, down that list; all share the state
//! (`state.rs`) and write through `reply.rs`, which knows none of them.
//! What a command is (its arguments, whether it may come before `AUTH`,
//! what it does inside `MULTI`) is said once, in `command.rs`'s table.
//! The ids' safety is the library's ([`crate::seq`]); group commit only
//! changes when a round starts (docs/seq.md, "Group commit").
//!
//! One runtime thread does it all: a request costs a parse and a channel
//! send, and rounds are waits on the nodes' fsyncs, so the nodes keep the
//! other cores. Stopping ([`Server::run`]'s `stop`) closes the listener and
//! the idle connections, answers what is in a round or queued, then returns.

mod batch;
mod command;
mod conn;
mod dispatch;
mod handler;
mod health;
mod info;
mod limits;
mod metrics;
mod multi;
mod reply;
mod resp;
mod session;
mod state;

pub use metrics::ServeMetrics;
pub use state::Server;

use super::SeqKeys;
use super::census::Kind;
use super::sweep::{Scope, sweep_forever};
use crate::store::Quorum;
use crate::timing::listen::ACCEPT_WARNING_EVERY;
use crate::timing::serve::DRAIN_GRACE;
use batch::{Registry, Settings};
use health::Health;
use info::ServerStats;
use reply::Proto;
use state::Client;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};

/// What the server is told at start.
pub struct Config {
    /// The nodes; cloned per sequence and per read (clones share connections).
    pub quorum: Quorum,
    /// Where each sequence's counter lives.
    pub keys: SeqKeys,
    /// Bounds each request's wait for its round, and each `GET`.
    pub timeout: Duration,
    /// Connections beyond this many are refused with an error reply.
    pub max_clients: u64,
    /// A connection that sends no complete request for this long is closed.
    pub idle_timeout: Option<Duration>,
    /// Most ids one round hands out.
    pub max_batch: u64,
    /// Clients must `AUTH` with it first.
    pub password: Option<String>,
    /// Whether the nodes were required to persist every write (what
    /// `CONFIG GET appendonly` reports).
    pub durable: bool,
    /// Rounds, ids and readiness for `--metrics-listen` (off without it).
    pub metrics: ServeMetrics,
    /// A sequence idle this long is forgotten ([`RETIRE_AFTER`](crate::timing::serve::RETIRE_AFTER)).
    pub retire_after: Duration,
}

impl Server {
    /// Serves on `listener` until `stop` resolves, then drains (see the
    /// module doc) and returns.
    pub async fn run(listener: TcpListener, config: Config, stop: impl Future<Output = ()>) {
        let listen = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        let server = Server::new(config, listen);
        let (shutdown_tx, shutdown) = watch::channel(false);
        tokio::spawn(health::probe_forever(
            Arc::clone(&server.health),
            server.quorum.clone(),
            shutdown.clone(),
        ));
        let sequences = Scope::Namespace {
            namespace: server.keys.namespace().to_string(),
            kinds: vec![Kind::Sequence],
        };
        tokio::spawn(sweep_forever(
            server.quorum.clone(),
            sequences,
            server.metrics.sweeps(),
            shutdown.clone(),
        ));
        tokio::pin!(stop);
        let mut next_id = 0u64;
        let mut warnings = crate::base::Throttle::new(ACCEPT_WARNING_EVERY);
        loop {
            let accepted = tokio::select! {
                () = &mut stop => break,
                accepted = listener.accept() => accepted,
            };
            match accepted {
                Ok((stream, peer)) => {
                    next_id += 1;
                    log::debug!("seq serve: connection {next_id} from {peer:?}");
                    server.clone().admit(stream, next_id, shutdown.clone());
                }
                Err(e) => {
                    // Out of file descriptors, mostly: a pause lets
                    // connections close instead of spinning on the error.
                    if let Some(held) = warnings.admit(std::time::Instant::now()) {
                        log::warn!("seq serve: cannot accept a connection: {e}{held}");
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        drop(listener);
        let _ = shutdown_tx.send(true);
        server.registry.close();
        let drained = async {
            loop {
                let emptied = server.emptied.notified();
                if server.stats.connected.load(Relaxed) == 0 {
                    return;
                }
                emptied.await;
            }
        };
        let limit = server.timeout * 2 + DRAIN_GRACE;
        if tokio::time::timeout(limit, drained).await.is_err() {
            log::warn!(
                "seq serve: {} connections still open {} after the stop; closing them",
                server.stats.connected.load(Relaxed),
                crate::base::duration::shown(limit)
            );
        }
    }

    /// The state the connections share, from `config`; `listen` is the
    /// address listened on (for `INFO`).
    fn new(config: Config, listen: String) -> Arc<Server> {
        Arc::new(Server {
            registry: Registry::new(Settings {
                quorum: config.quorum.clone(),
                timeout: config.timeout,
                max_batch: config.max_batch,
                metrics: config.metrics.clone(),
                retire_after: config.retire_after,
            }),
            keys: config.keys,
            timeout: config.timeout,
            max_clients: config.max_clients,
            idle_timeout: config.idle_timeout,
            password: config.password,
            durable: config.durable,
            stats: ServerStats::default(),
            health: Arc::new(Health::new(&config.quorum, config.metrics.clone())),
            listen,
            nodes: config.quorum.labels().to_vec(),
            quorum: config.quorum,
            emptied: Notify::new(),
            guard: limits::Guard::default(),
            metrics: config.metrics,
        })
    }

    /// Serves `stream` on a task of its own, or refuses it over the limit:
    /// when every slot is taken, the oldest connection that never
    /// authenticated gives its slot (`limits.rs`), and only when there is
    /// none is the new one refused.
    fn admit(self: Arc<Self>, stream: TcpStream, id: u64, shutdown: watch::Receiver<bool>) {
        self.stats.received.fetch_add(1, Relaxed);
        let _ = stream.set_nodelay(true);
        if self.stats.connected.load(Relaxed) >= self.max_clients {
            if !self.guard.evict_oldest() {
                refuse(stream, &self.stats);
                return;
            }
            self.stats.evicted.fetch_add(1, Relaxed);
        }
        self.stats.connected.fetch_add(1, Relaxed);
        let authenticated = self.password.is_none();
        let client = Client {
            id,
            peer: stream
                .peer_addr()
                .map_or_else(|_| "an unknown address".into(), |a| a.to_string()),
            authenticated,
            stranger: (!authenticated).then(|| self.guard.stranger(id)),
            auth_failures: 0,
            name: None,
            proto: Proto::Resp2,
            multi: None,
        };
        tokio::spawn(async move {
            handler::serve(&self, stream, client, shutdown).await;
            if self.stats.connected.fetch_sub(1, Relaxed) == 1 {
                self.emptied.notify_waiters();
            }
        });
    }
}

/// Refuses a connection over `--max-clients`, as Redis does.
fn refuse(stream: TcpStream, stats: &ServerStats) {
    stats.rejected.fetch_add(1, Relaxed);
    tokio::spawn(async move {
        let mut stream = stream;
        let refuse = async {
            stream
                .write_all(b"-ERR max number of clients reached\r\n")
                .await?;
            stream.shutdown().await
        };
        let _ = tokio::time::timeout(Duration::from_secs(1), refuse).await;
    });
}
