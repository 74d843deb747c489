//! Redis Sentinel processes for the tests: `redis-server sentinel.conf
//! --sentinel`, each in its own temporary directory (Sentinel rewrites its
//! config file as it learns the group), watching one master by name.
//!
//! Failure detection is made fast (`down-after-milliseconds` of a few hundred
//! ms) so that a failover test awaits an event of about a second, not the
//! production default of 30 s.

use std::fs::{self, OpenOptions};
use std::os::unix::process::CommandExt;
use std::process::{Child, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tempfile::TempDir;

use super::server::{
    PORT_ATTEMPTS, START_TIMEOUT, make_tempdir, path_str, percent_encode, port_in_use,
};
use super::spawn::{command, spawn_tied};
use super::{RedisServer, ensure_redis_server_installed, free_port, wait_until};

/// The master name every test group uses.
pub const MASTER_NAME: &str = "mymaster";

/// How long a master may be silent before Sentinel calls it down.
pub const DOWN_AFTER: Duration = Duration::from_millis(400);

/// One `redis-server --sentinel` process. Dropping it SIGKILLs it.
pub struct Sentinel {
    child: Option<Child>,
    pid: u32,
    port: u16,
    dir: TempDir,
}

impl Sentinel {
    /// A sentinel on a free port watching `master` (started with
    /// `tcp: true`) as [`MASTER_NAME`], calling it objectively down once
    /// `quorum` sentinels agree. Waits until it answers PING and knows the master.
    pub fn start(master: &RedisServer, quorum: usize) -> Sentinel {
        Sentinel::start_with(master, quorum, DOWN_AFTER)
    }

    /// [`start`](Self::start), calling the master down after `down_after`
    /// instead of [`DOWN_AFTER`]: a group whose failovers the test asks for
    /// (`SENTINEL FAILOVER`), where Sentinel should not decide on its own
    /// ones when a loaded machine answers slowly, or a master restarts.
    pub fn start_with(master: &RedisServer, quorum: usize, down_after: Duration) -> Sentinel {
        ensure_redis_server_installed();
        let master_port = master
            .port()
            .expect("Sentinel::start: the master must be started with `tcp: true`");
        let dir = make_tempdir();
        let mut attempt = 1;
        loop {
            let port = free_port();
            let conf = dir.path().join("sentinel.conf");
            let mut text = format!(
                "port {port}\nbind 127.0.0.1\ndir {dir}\n\
                 sentinel monitor {MASTER_NAME} 127.0.0.1 {master_port} {quorum}\n\
                 sentinel down-after-milliseconds {MASTER_NAME} {down}\n\
                 sentinel failover-timeout {MASTER_NAME} 2000\n\
                 sentinel parallel-syncs {MASTER_NAME} 1\n",
                dir = path_str(dir.path()),
                down = down_after.as_millis(),
            );
            if let Some(pass) = &master.requirepass {
                text.push_str(&format!("sentinel auth-pass {MASTER_NAME} {pass}\n"));
            }
            fs::write(&conf, text).expect("write sentinel.conf");
            let log_path = dir.path().join("sentinel.log");
            let log = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log_path)
                .expect("open sentinel.log");
            let mut cmd = command("redis-server");
            cmd.arg(&conf)
                .arg("--sentinel")
                .process_group(0)
                .current_dir(dir.path())
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("dup log"))
                .stderr(log);
            let mut child = spawn_tied(cmd).expect("spawn redis-server --sentinel");
            let deadline = Instant::now() + START_TIMEOUT;
            loop {
                if let Some(status) = child.try_wait().expect("try_wait sentinel") {
                    let log = fs::read_to_string(&log_path).unwrap_or_default();
                    if port_in_use(&log) && attempt < PORT_ATTEMPTS {
                        break;
                    }
                    panic!("redis-server --sentinel exited ({status}); its log:\n{log}");
                }
                if master_port_at(port).is_some() {
                    return Sentinel {
                        pid: child.id(),
                        child: Some(child),
                        port,
                        dir,
                    };
                }
                if Instant::now() >= deadline {
                    let _ = child.kill();
                    panic!(
                        "sentinel on port {port} did not answer within {START_TIMEOUT:?}; its log:\n{}",
                        fs::read_to_string(&log_path).unwrap_or_default()
                    );
                }
                thread::sleep(Duration::from_millis(20));
            }
            attempt += 1;
        }
    }

    /// `redis://127.0.0.1:PORT`: the sentinel itself (not a data node).
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The port of the master this sentinel names now (`SENTINEL
    /// get-master-addr-by-name`), or `None` if it does not answer.
    pub fn master_port(&self) -> Option<u16> {
        master_port_at(self.port)
    }

    /// Everything the sentinel has logged.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("sentinel.log"))
            .unwrap_or_else(|e| format!("(no log: {e})"))
    }

    /// `SENTINEL FAILOVER`: promote a replica now, without the agreement of
    /// the others (the master need not be down).
    pub fn failover(&self) {
        let client = redis::Client::open(format!("redis://{}", self.address())).expect("url");
        let mut conn = client
            .get_connection_with_timeout(Duration::from_secs(5))
            .expect("connect to the sentinel");
        let _: () = redis::cmd("SENTINEL")
            .arg("FAILOVER")
            .arg(MASTER_NAME)
            .query(&mut conn)
            .unwrap_or_else(|e| panic!("SENTINEL FAILOVER: {e}\n{}", self.log()));
    }

    /// The flags this sentinel gives the replica on `port` (`SENTINEL
    /// REPLICAS`: "slave", "slave,s_down", …), or `None` if it does not
    /// know it (or does not answer).
    pub fn replica_flags(&self, port: u16) -> Option<String> {
        let client = redis::Client::open(format!("redis://{}", self.address())).ok()?;
        let mut conn = client
            .get_connection_with_timeout(Duration::from_secs(1))
            .ok()?;
        let replicas: Vec<std::collections::HashMap<String, String>> = redis::cmd("SENTINEL")
            .arg("REPLICAS")
            .arg(MASTER_NAME)
            .query(&mut conn)
            .ok()?;
        replicas
            .into_iter()
            .find(|r| r.get("port").map(String::as_str) == Some(&port.to_string()))
            .and_then(|r| r.get("flags").cloned())
    }

    /// How many entries `SENTINEL <what> mymaster` lists (`SENTINELS`:
    /// the other sentinels it knows; `REPLICAS`: the master's replicas), or
    /// `None` if it does not answer.
    fn listed(&self, what: &str) -> Option<usize> {
        let client = redis::Client::open(format!("redis://{}", self.address())).ok()?;
        let mut conn = client
            .get_connection_with_timeout(Duration::from_secs(1))
            .ok()?;
        let entries: Vec<redis::Value> = redis::cmd("SENTINEL")
            .arg(what)
            .arg(MASTER_NAME)
            .query(&mut conn)
            .ok()?;
        Some(entries.len())
    }

    /// SIGKILLs the sentinel.
    pub fn sigkill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = killpg(Pid::from_raw(self.pid as i32), Signal::SIGKILL);
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        self.sigkill();
    }
}

/// `redis+sentinel://127.0.0.1:P1,127.0.0.1:P2/mymaster?ns=NS`: what yaraus
/// is given to find the master through `sentinels`.
pub fn sentinel_url(sentinels: &[Sentinel], ns: &str) -> String {
    let hosts: Vec<String> = sentinels.iter().map(Sentinel::address).collect();
    format!(
        "redis+sentinel://{}/{MASTER_NAME}?ns={}",
        hosts.join(","),
        percent_encode(ns)
    )
}

/// Waits until every sentinel names a master other than `old_port`, and
/// they agree; returns the new master's port.
pub fn wait_failover(sentinels: &[Sentinel], old_port: u16, timeout: Duration) -> u16 {
    let mut new = 0;
    wait_until("Sentinel to promote a replica", timeout, || {
        let ports: Vec<Option<u16>> = sentinels.iter().map(Sentinel::master_port).collect();
        match ports.first() {
            Some(Some(p)) if *p != old_port && ports.iter().all(|q| *q == Some(*p)) => {
                new = *p;
                true
            }
            _ => false,
        }
    });
    new
}

/// Three sentinels watching `master` (quorum 2), returned once each knows
/// the other two and the master's `replicas` replicas: ready to fail over.
pub fn three_watching(master: &RedisServer, replicas: usize) -> Vec<Sentinel> {
    let sentinels: Vec<Sentinel> = (0..3).map(|_| Sentinel::start(master, 2)).collect();
    wait_acquainted(&sentinels, replicas, ACQUAINTED);
    sentinels
}

/// Bound on sentinels finding each other (a hello every 2 s each).
const ACQUAINTED: Duration = Duration::from_secs(30);

/// Waits until every sentinel knows each of the others and `replicas`
/// replicas of the master. Sentinels learn of each other from hello messages
/// published through the master every 2 s: a master killed before that has
/// sentinels that each see it down alone, never reach the quorum, and never
/// fail over (a test that kills at once must await this first).
fn wait_acquainted(sentinels: &[Sentinel], replicas: usize, timeout: Duration) {
    let others = sentinels.len() - 1;
    wait_until(
        "the sentinels to know each other and the replicas",
        timeout,
        || {
            sentinels.iter().all(|s| {
                s.listed("SENTINELS") == Some(others) && s.listed("REPLICAS") == Some(replicas)
            })
        },
    );
}

/// What the sentinel on `port` names as the master's port.
fn master_port_at(port: u16) -> Option<u16> {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).ok()?;
    let mut conn = client
        .get_connection_with_timeout(Duration::from_secs(1))
        .ok()?;
    let addr: Option<(String, String)> = redis::cmd("SENTINEL")
        .arg("get-master-addr-by-name")
        .arg(MASTER_NAME)
        .query(&mut conn)
        .ok()?;
    addr?.1.parse().ok()
}
