//! The pool's Redis of the `run` clients: a master and a replica without
//! persistence, watched by three sentinels (quorum 2), and its two faults.
//!
//! * *Restart empty*: the master the sentinels name is SIGKILLed and
//!   started again at once, empty. Its replica reconnects, finds a new
//!   replication id and resynchronises the empty dataset: the pool has
//!   vanished from both. The sentinels call a master down only after 5 s,
//!   longer than the restart takes, so that they do not promote the replica
//!   (which would keep the pool) in the meantime.
//! * *Failover*: `SENTINEL FAILOVER`, a planned promotion of the replica.
//!   The old master stays up and takes writes until Sentinel turns it into
//!   a replica of the new one (some seconds later): the run clients'
//!   `--min-replicas 1` is what makes those writes count for nothing, as
//!   neither master has a replica in the meantime.
//!
//! Both servers start as masters; the replica is made one by `REPLICAOF`, so
//! that a restart of either (by its stored arguments) starts a master, as a
//! restart of a master should.

use crate::chaos::common::sentinel::{MASTER_NAME, Sentinel, wait_failover};
use crate::chaos::common::{RedisServer, ServerOptions, wait_until};
use std::time::Duration;

/// How long the group may take to be whole again after a fault (Sentinel
/// turns an old master into a replica only after some seconds), and to
/// accept a failover.
pub const GROUP_BOUND: Duration = Duration::from_secs(60);

/// When the sentinels call a master down: longer than a restart takes on
/// a loaded machine, so that the faults are the test's (an empty restart
/// stays one, a failover happens when asked), not Sentinel flapping (see
/// [`crate::chaos::failover`]).
const DOWN_AFTER: Duration = Duration::from_secs(5);

pub struct Group {
    servers: [RedisServer; 2],
    sentinels: Vec<Sentinel>,
    /// Restarts of the master with no data.
    pub restarts: usize,
    /// Failovers asked of Sentinel.
    pub failovers: usize,
}

fn tcp_server() -> RedisServer {
    RedisServer::start_with(ServerOptions {
        tcp: true,
        ..ServerOptions::default()
    })
}

/// One `field:value` of an INFO text.
fn field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|l| l.trim_end().strip_prefix(name)?.strip_prefix(':'))
}

impl Group {
    /// The group, its replica synchronised, its sentinels watching.
    pub fn start() -> Group {
        let servers = [tcp_server(), tcp_server()];
        let port = servers[0].port().expect("tcp").to_string();
        let _: redis::Value = servers[1].query(&["REPLICAOF", "127.0.0.1", &port]);
        servers[1].wait_replica_synced(&servers[0]);
        let sentinels = (0..3)
            .map(|_| Sentinel::start_with(&servers[0], 2, DOWN_AFTER))
            .collect();
        Group {
            servers,
            sentinels,
            restarts: 0,
            failovers: 0,
        }
    }

    /// The sentinels' addresses, `redis://127.0.0.1:PORT`.
    pub fn sentinel_urls(&self) -> Vec<String> {
        self.sentinels
            .iter()
            .map(|s| format!("redis://{}", s.address()))
            .collect()
    }

    /// Awaits the group whole: every sentinel names the same master, which
    /// is one of ours and a master, and the other server is its replica
    /// with its link up. Returns the master's index.
    pub fn wait_whole(&self) -> usize {
        let mut master = 0;
        let what = "the pool's group to be whole (one master named, its replica linked)";
        wait_until(what, GROUP_BOUND, || {
            let named: Vec<Option<u16>> = self.sentinels.iter().map(|s| s.master_port()).collect();
            let Some(port) = named[0].filter(|&p| named.iter().all(|&q| q == Some(p))) else {
                return false;
            };
            let Some(m) = self.servers.iter().position(|s| s.port() == Some(port)) else {
                return false;
            };
            let info = |s: &RedisServer| s.try_query::<String>(&["INFO", "replication"]);
            let (Ok(top), Ok(other)) = (info(&self.servers[m]), info(&self.servers[1 - m])) else {
                return false;
            };
            master = m;
            field(&top, "role") == Some("master")
                && field(&other, "role") == Some("slave")
                && field(&other, "master_port") == Some(&port.to_string())
                && field(&other, "master_link_status") == Some("up")
        });
        master
    }

    /// SIGKILLs the master `m` and starts it again, empty.
    pub fn restart_empty(&mut self, m: usize) {
        self.servers[m].restart_empty();
        self.restarts += 1;
    }

    /// `SENTINEL FAILOVER` away from the master `m` (asked again while
    /// Sentinel refuses: a replica it has not yet seen as good, a failover
    /// of its own in progress), then awaits every sentinel naming the other.
    pub fn failover(&mut self, m: usize) {
        let old = self.servers[m].port().expect("tcp");
        wait_until("Sentinel to accept SENTINEL FAILOVER", GROUP_BOUND, || {
            let accepted = ask_failover(&self.sentinels[0]).is_ok();
            if !accepted {
                std::thread::sleep(Duration::from_millis(200));
            }
            accepted
        });
        wait_failover(&self.sentinels, old, GROUP_BOUND);
        self.failovers += 1;
    }

    /// How many times the first sentinel switched masters (the failovers
    /// asked for, and any it decided on by itself on a loaded machine).
    pub fn switches(&self) -> usize {
        self.sentinels[0].log().matches("+switch-master").count()
    }
}

fn ask_failover(sentinel: &Sentinel) -> redis::RedisResult<()> {
    let client = redis::Client::open(format!("redis://{}", sentinel.address()))?;
    let mut conn = client.get_connection_with_timeout(Duration::from_secs(2))?;
    redis::cmd("SENTINEL")
        .arg("FAILOVER")
        .arg(MASTER_NAME)
        .query(&mut conn)
}

impl Drop for Group {
    /// On a failure (or with `CHAOS_DUMP`, as the fleet's logs), the
    /// sentinels' last lines say what they did.
    fn drop(&mut self) {
        if !std::thread::panicking() && std::env::var_os("CHAOS_DUMP").is_none() {
            return;
        }
        for s in &self.sentinels {
            let log = s.log();
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines[lines.len().saturating_sub(40)..].join("\n");
            eprintln!("--- last lines of sentinel {}:\n{tail}", s.port());
        }
    }
}
