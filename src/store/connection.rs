//! Dialing the three deployments a [`Target`] names, and the one connection
//! type the rest of yaraus talks through.
//!
//! * **One server**: a redis-rs multiplexed connection (TLS material from
//!   `--tls-*` when given).
//! * **Sentinel**: the master is looked up through the sentinels on *every*
//!   dial (redis-rs's `SentinelClient` asks them in turn and checks the node
//!   it names), and the new connection must answer `ROLE` with `master`
//!   before anything is written through it. A connection never follows a
//!   failover by itself: [`super::Store`] drops it after an I/O error or a
//!   `READONLY`/`MASTERDOWN` reply, and the next request dials again, which
//!   asks the sentinels again. That is how a keeper renewing every second
//!   finds the promoted replica.
//! * **Cluster**: redis-rs's cluster connection, which follows `MOVED`/`ASK`
//!   and refreshes its slot map on failover. Commands without keys are
//!   routed explicitly where it matters: `WAIT` to the master of the key
//!   just written ([`Connection::wait`]), the durability check to every master.

use super::listen::Listener;
use super::target::Endpoint;
use super::target::Target;
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{
    MultipleNodeRoutingInfo, Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr,
};
use redis::{Cmd, Pipeline, RedisFuture, RedisResult, Value};
use std::time::Duration;

/// How to open a new connection to a target.
pub(super) enum Dialer {
    Server(redis::Client),
    Sentinel {
        client: tokio::sync::Mutex<redis::sentinel::SentinelClient>,
        /// The sentinels and the master's name, asked again when none
        /// names a master ([`Dialer::master_is_known`]).
        sentinels: Vec<redis::ConnectionInfo>,
        master: String,
    },
    Cluster {
        client: redis::cluster::ClusterClient,
        /// What a pub/sub client is built from (listen.rs): it needs RESP3
        /// and a push sender of its own, so it cannot share `client`.
        nodes: Vec<redis::ConnectionInfo>,
        /// Connect and response timeouts.
        timeouts: (Duration, Duration),
    },
}

/// The Cluster client's settings: our timeouts (`response` None: requests
/// without one), the URL's credentials.
fn cluster_builder(
    nodes: &[redis::ConnectionInfo],
    connect: Duration,
    response: Option<Duration>,
) -> redis::cluster::ClusterClientBuilder {
    let settings = nodes[0].redis_settings();
    let mut builder = redis::cluster::ClusterClientBuilder::new(nodes.to_vec())
        .connection_timeout(connect)
        // A request is bounded by our own timeouts; redis-rs's
        // default of 16 retries with back-off would outlast them.
        .retries(2);
    builder = match response {
        Some(response) => builder.response_timeout(response),
        // Its overall timeout would otherwise be the response timeout's.
        None => builder.overall_response_timeout(None),
    };
    if let Some(user) = settings.username() {
        builder = builder.username(user);
    }
    if let Some(pass) = settings.password() {
        builder = builder.password(pass);
    }
    builder
}

/// A live connection: to one server (possibly found through Sentinel), or
/// to a Cluster. Cheap to clone; clones share it.
#[derive(Clone)]
pub enum Connection {
    Server(MultiplexedConnection),
    Cluster(ClusterConnection),
}

impl Dialer {
    /// A dialer for `target`; nothing is dialed yet.
    pub(super) fn new(
        target: &Target,
        connect: Duration,
        response: Duration,
    ) -> RedisResult<Dialer> {
        Ok(match target.endpoint() {
            Endpoint::Server(info) => match target.tls() {
                Some(tls) if tls.ca.is_some() || tls.client.is_some() => {
                    let certs = redis::TlsCertificates {
                        client_tls: tls
                            .client
                            .as_ref()
                            .map(|(cert, key)| redis::ClientTlsConfig {
                                client_cert: cert.clone(),
                                client_key: key.clone(),
                            }),
                        root_cert: tls.ca.clone(),
                    };
                    Dialer::Server(redis::Client::build_with_tls(info.clone(), certs)?)
                }
                _ => Dialer::Server(redis::Client::open(info.clone())?),
            },
            Endpoint::Sentinel {
                sentinels,
                master,
                node,
            } => {
                let node = redis::sentinel::SentinelNodeConnectionInfo::default()
                    .set_redis_connection_info(node.clone());
                Dialer::Sentinel {
                    client: tokio::sync::Mutex::new(redis::sentinel::SentinelClient::build(
                        sentinels.clone(),
                        master.clone(),
                        Some(node),
                        redis::sentinel::SentinelServerType::Master,
                    )?),
                    sentinels: sentinels.clone(),
                    master: master.clone(),
                }
            }
            Endpoint::Cluster { nodes } => Dialer::Cluster {
                client: cluster_builder(nodes, connect, Some(response)).build()?,
                nodes: nodes.clone(),
                timeouts: (connect, response),
            },
        })
    }

    /// Opens a connection (without an overall deadline: the caller adds it)
    /// whose requests time out after `response`, or never (None: a Cluster's
    /// client is then built without one; else it has the dialer's own).
    pub(super) async fn dial(
        &self,
        connect: Duration,
        response: Option<Duration>,
    ) -> RedisResult<Connection> {
        let config = &redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(connect))
            .set_response_timeout(response);
        match self {
            Dialer::Server(client) => Ok(Connection::Server(
                client
                    .get_multiplexed_async_connection_with_config(config)
                    .await?,
            )),
            Dialer::Sentinel { client, .. } => {
                let mut conn = client
                    .lock()
                    .await
                    .get_async_connection_with_config(config)
                    .await?;
                // The sentinels' answer may be stale by the time we are
                // connected: write only to a node that says it is the master.
                let role: Vec<Value> = redis::cmd("ROLE").query_async(&mut conn).await?;
                match role.first() {
                    Some(Value::BulkString(r)) if r.as_slice() == b"master" => {
                        Ok(Connection::Server(conn))
                    }
                    other => Err(redis::RedisError::from((
                        redis::ErrorKind::Server(redis::ServerErrorKind::ReadOnly),
                        "the node Sentinel named is not a master (ROLE)",
                        format!("{other:?}"),
                    ))),
                }
            }
            Dialer::Cluster { client, nodes, .. } => Ok(Connection::Cluster(match response {
                Some(_) => client.get_async_connection().await?,
                None => {
                    let client = cluster_builder(nodes, connect, None).build()?;
                    client.get_async_connection().await?
                }
            })),
        }
    }
}

impl Dialer {
    /// Whether this dials one server named by its URL (not through
    /// Sentinel, not a Cluster).
    pub(super) fn is_server(&self) -> bool {
        matches!(self, Dialer::Server(_))
    }

    /// A connection that listens on `channel` (listen.rs): `SUBSCRIBE` on
    /// the server (the master the sentinels name now, through Sentinel:
    /// after a failover it may sit on the old master and hear nothing,
    /// which costs the fallback poll); `SSUBSCRIBE` on a Cluster, where the
    /// channel carries the key's hash tag and so lives on its shard.
    pub(super) async fn listen(&self, channels: &[&str]) -> RedisResult<Listener> {
        let client = match self {
            Dialer::Server(client) => client.clone(),
            Dialer::Sentinel { client, .. } => client.lock().await.async_get_client().await?,
            Dialer::Cluster {
                nodes, timeouts, ..
            } => {
                return Listener::sharded(
                    cluster_builder(nodes, timeouts.0, Some(timeouts.1)),
                    channels,
                )
                .await;
            }
        };
        Listener::plain(&client, channels).await
    }

    /// The master's name, for a Sentinel group.
    pub(super) fn master(&self) -> Option<&str> {
        match self {
            Dialer::Sentinel { master, .. } => Some(master),
            _ => None,
        }
    }

    /// Whether any sentinel knows the master's name, when none named a
    /// master that answers as one: `Some(true)` when one does (a failover
    /// in progress: wait), `Some(false)` when every sentinel that answered
    /// does not (a wrong name: say so at once), `None` when none answered
    /// within `within` (the sentinels are out of reach: wait) or the
    /// target is not a Sentinel group.
    pub(super) async fn master_is_known(&self, within: Duration) -> Option<bool> {
        let Dialer::Sentinel {
            sentinels, master, ..
        } = self
        else {
            return None;
        };
        let mut asks = tokio::task::JoinSet::new();
        for info in sentinels {
            let (info, master) = (info.clone(), master.clone());
            asks.spawn(async move {
                let ask = async {
                    let client = redis::Client::open(info)?;
                    let mut conn = client.get_multiplexed_async_connection().await?;
                    redis::cmd("SENTINEL")
                        .arg("GET-MASTER-ADDR-BY-NAME")
                        .arg(master)
                        .query_async::<Option<Vec<String>>>(&mut conn)
                        .await
                };
                tokio::time::timeout(within, ask).await.ok()?.ok()
            });
        }
        let mut answered = false;
        while let Some(answer) = asks.join_next().await {
            match answer.ok().flatten() {
                Some(Some(_)) => return Some(true),
                Some(None) => answered = true,
                None => {}
            }
        }
        answered.then_some(false)
    }
}

impl Connection {
    /// `WAIT replicas timeout` on the master that holds `key`: on one server
    /// that is the server; in a Cluster, the master of the key's slot (redis-rs
    /// would otherwise ask every master and report the smallest count).
    pub async fn wait(&mut self, key: &str, replicas: i64, timeout_ms: u64) -> RedisResult<i64> {
        let mut cmd = redis::cmd("WAIT");
        cmd.arg(replicas).arg(timeout_ms);
        Ok(redis::from_redis_value(self.on_master_of(key, cmd).await?)?)
    }

    /// How many replicas the master that holds `key` has connected
    /// (`connected_slaves` of `INFO replication`, routed like [`wait`](Self::wait)).
    pub async fn connected_replicas(&mut self, key: &str) -> RedisResult<i64> {
        let text = self.info_replication(key).await?;
        Ok(text
            .lines()
            .find_map(|l| l.trim().strip_prefix("connected_slaves:"))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0))
    }

    /// The text of `INFO replication` of the master that holds `key`, routed
    /// like [`wait`](Self::wait).
    pub async fn info_replication(&mut self, key: &str) -> RedisResult<String> {
        let mut cmd = redis::cmd("INFO");
        cmd.arg("replication");
        Ok(redis::from_redis_value(self.on_master_of(key, cmd).await?)?)
    }

    /// Runs `cmd`, which names no key, on the master that holds `key`.
    async fn on_master_of(&mut self, key: &str, cmd: Cmd) -> RedisResult<Value> {
        match self {
            Connection::Server(conn) => cmd.query_async(conn).await,
            Connection::Cluster(conn) => {
                let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(
                    Route::with_key(key, SlotAddr::Master),
                ));
                conn.route_command(cmd, route).await
            }
        }
    }

    /// Runs `cmd` on the node at `addr` (`host:port`, as
    /// [`on_every_master`](Self::on_every_master) names it); on one
    /// server, on that server whatever `addr` says.
    pub async fn on_node(&mut self, addr: &str, cmd: Cmd) -> RedisResult<Value> {
        match self {
            Connection::Server(conn) => cmd.query_async(conn).await,
            Connection::Cluster(conn) => {
                let (host, port) = addr
                    .rsplit_once(':')
                    .and_then(|(h, p)| Some((h.to_string(), p.parse().ok()?)))
                    .ok_or_else(|| {
                        redis::RedisError::from((
                            redis::ErrorKind::Client,
                            "not a node address",
                            addr.to_string(),
                        ))
                    })?;
                let route =
                    RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress { host, port });
                conn.route_command(cmd, route).await
            }
        }
    }

    /// Runs `cmd` on every master and returns each one's reply with its
    /// address; on one server, that server's reply alone.
    pub async fn on_every_master(&mut self, cmd: Cmd) -> RedisResult<Vec<(String, Value)>> {
        match self {
            Connection::Server(conn) => Ok(vec![(String::new(), cmd.query_async(conn).await?)]),
            Connection::Cluster(conn) => {
                let route = RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None));
                match conn.route_command(cmd, route).await? {
                    Value::Map(pairs) => Ok(pairs
                        .into_iter()
                        .map(|(addr, v)| (redis::from_redis_value(addr).unwrap_or_default(), v))
                        .collect()),
                    other => Ok(vec![(String::new(), other)]),
                }
            }
        }
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Connection::Server(c) => c.req_packed_command(cmd),
            Connection::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Connection::Server(c) => c.req_packed_commands(pipeline, offset, count),
            Connection::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Connection::Server(c) => c.get_db(),
            Connection::Cluster(c) => c.get_db(),
        }
    }
}
