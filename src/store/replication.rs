//! Where a master's replicas stand, read from its `INFO replication`: for
//! each replica, whether it receives the write stream, how far behind it
//! is, or whether it is still waiting for a full sync.
//!
//! Why: Sentinel promotes a replica without asking whether it holds
//! anything. A replica that has not finished its full sync (a diskless one
//! is delayed by `repl-diskless-sync-delay`, 5 s by default) holds none of
//! the master's keys, and a failover to it loses them all, the worker-id
//! pool with them. Only the master's `INFO replication` says so in advance;
//! [`Replication::failover_risks`] puts it into one line per replica.
//!
//! The master read is the one the [`Store`] writes to: the server of its
//! URL, the master the sentinels name now, or, in a Cluster, the master of
//! a given key's slot (as `WAIT` is routed). A URL that names a replica
//! reads that replica, whose own view ([`Role::Replica`]: its link to its
//! master, a sync in progress) is the other half of the picture.
//!
//! The figures are the master's: a replica's offset is what it last
//! acknowledged (every second, and on `WAIT`), so the byte lag of a healthy
//! replica is seldom 0 for long and overstates what it lacks by up to a
//! second of writes; whether it is online, not the lag, is what says it is
//! in sync. Parsing is a pure function ([`Replication::parse`]) so that the
//! texts real servers print can be tested without one.

use super::redis_error::is_denied;
use super::server::Store;
use crate::error::{Error, Result};

/// What one node's `INFO replication` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replication {
    /// The node read, as messages name it: the store's URL, and in a
    /// Cluster the key whose slot's master answered.
    pub node: String,
    pub role: Role,
    /// `master_repl_offset`: on a master, the end of its write stream; on a
    /// replica, how much of its master's stream it has applied.
    pub offset: u64,
    /// The replicas connected to this node, in the order it lists them.
    pub replicas: Vec<Replica>,
}

/// Whether the node read is a master or a replica.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    Master,
    /// A replica (`role:slave`), with its own view of its master.
    Replica {
        /// `master_host:master_port`.
        master: String,
        /// `master_link_status:up`: it receives its master's writes.
        link_up: bool,
        /// `master_sync_in_progress:1`: it is receiving a full copy.
        sync_in_progress: bool,
    },
}

/// One replica as its master lists it (`slaveN:ip=…,port=…,state=…,…`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replica {
    /// `ip:port` (`[ip]:port` for IPv6), as the replica announced it.
    pub address: String,
    pub state: ReplicaState,
    /// The master's offset this replica last acknowledged.
    pub offset: u64,
    /// How many bytes of the write stream it has not acknowledged: the
    /// master's offset minus its own, 0 if it is ahead.
    pub lag_bytes: u64,
    /// Seconds since its last acknowledgement (Redis's `lag`), for an
    /// online replica only: Redis prints 0 for the others.
    pub ack_age_s: Option<u64>,
}

/// Where a replica is in its life, by the master's `state=`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplicaState {
    /// `online`: it has the master's data set and receives every write.
    Online,
    /// `wait_bgsave` (the master is making, or delaying, the copy) or
    /// `send_bulk` (sending it): a full sync has not ended, and the
    /// replica does not hold the master's data set. The Redis word is kept
    /// for messages.
    FullSync(String),
    /// A state this version does not know (Redis may add some): not in sync.
    Other(String),
}

impl Replication {
    /// Parses the text of `INFO replication` (or of a bare `INFO`) from
    /// `node`. `Err` names what is missing or malformed.
    pub fn parse(node: &str, info: &str) -> Result<Replication, String> {
        let mut role = None;
        let (mut offset, mut master_host, mut master_port) = (None, None, None);
        let (mut link_up, mut sync_in_progress) = (false, false);
        let mut listed = Vec::new();
        for line in info.lines().map(str::trim) {
            let Some((field, value)) = line.split_once(':') else {
                continue;
            };
            match field {
                "role" => role = Some(value),
                "master_repl_offset" => offset = Some(number(field, value)?),
                "master_host" => master_host = Some(value),
                "master_port" => master_port = Some(value),
                "master_link_status" => link_up = value == "up",
                "master_sync_in_progress" => sync_in_progress = value == "1",
                _ if is_replica_field(field) => listed.push(value),
                _ => {}
            }
        }
        let offset = offset.ok_or("no master_repl_offset")?;
        let role = match role.ok_or("no role")? {
            "master" => Role::Master,
            "slave" => Role::Replica {
                master: format!(
                    "{}:{}",
                    master_host.ok_or("a replica without master_host")?,
                    master_port.ok_or("a replica without master_port")?
                ),
                link_up,
                sync_in_progress,
            },
            other => return Err(format!("role:{other} is neither master nor slave")),
        };
        let replicas = listed
            .into_iter()
            .map(|entry| Replica::parse(entry, offset))
            .collect::<Result<_, _>>()?;
        Ok(Replication {
            node: node.to_string(),
            role,
            offset,
            replicas,
        })
    }

    /// Whether every replica listed is online (true without replicas).
    pub fn all_online(&self) -> bool {
        self.replicas
            .iter()
            .all(|r| r.state == ReplicaState::Online)
    }

    /// One line for each replica a failover to which would lose something
    /// now, e.g. "the replica 127.0.0.1:6381 of redis://…/0 is waiting for
    /// a full sync (wait_bgsave): a failover to it now would lose every key
    /// it lacks, all of them if it started empty".
    pub fn failover_risks(&self) -> Vec<String> {
        self.replicas
            .iter()
            .filter_map(|r| {
                let (stands, loss) = r.failover_loss()?;
                Some(format!(
                    "the replica {} of {} {stands}: a failover to it now {loss}",
                    r.address, self.node
                ))
            })
            .collect()
    }
}

impl Replica {
    /// One `slaveN:` value: `ip=…,port=…,state=…,offset=…,lag=…`.
    fn parse(entry: &str, master_offset: u64) -> Result<Replica, String> {
        let field = |name: &str| {
            entry
                .split(',')
                .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
                .ok_or_else(|| format!("no {name}= in the replica entry '{entry}'"))
        };
        let (ip, port) = (field("ip")?, field("port")?);
        let address = match ip.contains(':') {
            true => format!("[{ip}]:{port}"),
            false => format!("{ip}:{port}"),
        };
        let offset = number("offset", field("offset")?)?;
        let state = match field("state")? {
            "online" => ReplicaState::Online,
            s @ ("wait_bgsave" | "send_bulk") => ReplicaState::FullSync(s.to_string()),
            s => ReplicaState::Other(s.to_string()),
        };
        // Older servers print no lag for a replica that is not online.
        let ack_age_s = match (&state, field("lag")) {
            (ReplicaState::Online, Ok(lag)) => Some(number("lag", lag)?),
            _ => None,
        };
        Ok(Replica {
            address,
            state,
            offset,
            lag_bytes: master_offset.saturating_sub(offset),
            ack_age_s,
        })
    }

    /// Where this replica stands and what a failover to it would lose now,
    /// as the two halves of a sentence; None when it lacks nothing.
    pub fn failover_loss(&self) -> Option<(String, String)> {
        match &self.state {
            ReplicaState::Online if self.lag_bytes == 0 => None,
            ReplicaState::Online => Some((
                format!(
                    "has not acknowledged the last {} bytes of writes",
                    self.lag_bytes
                ),
                "could lose them".to_string(),
            )),
            ReplicaState::FullSync(state) => Some((
                format!("is waiting for a full sync ({state})"),
                "would lose every key it lacks, all of them if it started empty".to_string(),
            )),
            ReplicaState::Other(state) => Some((
                format!("is in the state {state}, not online"),
                "could lose any part of the data".to_string(),
            )),
        }
    }
}

impl Store {
    /// `INFO replication` of the master this store writes to (in a Cluster,
    /// the master of `key`'s slot; elsewhere `key` is unused), parsed. A
    /// user the ACL denies `INFO` is refused, naming the grant it lacks.
    pub async fn replication(&mut self, key: &str) -> Result<Replication> {
        let mut conn = self.connection().await?;
        let text = match conn.info_replication(key).await {
            Ok(text) => text,
            Err(e) if is_denied(&e) => {
                return Err(Error::Refused(format!(
                    "Redis at {} denies this user INFO, so yaraus cannot read how its \
                     replicas stand; grant it `+info|replication`",
                    self.target().display()
                )));
            }
            Err(e) => return Err(self.fail(e)),
        };
        let node = match self.target().is_cluster() {
            true => format!("{} (the master of {key})", self.target().display()),
            false => self.target().display().to_string(),
        };
        Replication::parse(&node, &text).map_err(|why| {
            Error::Redis(format!(
                "{node} answered INFO replication with a text yaraus cannot read: {why}"
            ))
        })
    }
}

/// `slave0`, `slave1`…: a replica's entry in its master's listing.
fn is_replica_field(field: &str) -> bool {
    field
        .strip_prefix("slave")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn number(field: &str, value: &str) -> Result<u64, String> {
    value
        .parse()
        .map_err(|_| format!("{field}:{value} is not a count"))
}

#[cfg(test)]
#[path = "replication_tests.rs"]
mod tests;
