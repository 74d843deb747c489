//! The faults a test injects into a [`RedisServer`]: SIGKILL, SIGSTOP and
//! SIGCONT, a restart with or without its data, the promotion of a replica,
//! and the wait for a replica to catch up after one of them.

use std::fs;
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use super::server::{RedisServer, START_TIMEOUT, SYNC_TIMEOUT, info_field, port_in_use};
use super::wait_until;

impl RedisServer {
    /// SIGKILLs the server and reaps it. The address stays reserved for a
    /// later [`restart`](Self::restart) or [`restart_empty`](Self::restart_empty).
    /// Its fork children (a BGSAVE, an AOF rewrite, a diskless sync) share
    /// its process group and die with it.
    pub fn sigkill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = killpg(Pid::from_raw(self.pid as i32), Signal::SIGKILL);
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Freezes the server (SIGSTOP): connections stay open, nothing is answered.
    pub fn sigstop(&self) {
        self.signal(Signal::SIGSTOP);
        wait_until("redis-server to stop after SIGSTOP", START_TIMEOUT, || {
            proc_state(self.pid).is_none_or(|s| s == 'T')
        });
    }

    /// Resumes a server frozen by [`sigstop`](Self::sigstop).
    pub fn sigcont(&self) {
        self.signal(Signal::SIGCONT);
        wait_until(
            "redis-server to resume after SIGCONT",
            START_TIMEOUT,
            || proc_state(self.pid).is_none_or(|s| s != 'T'),
        );
    }

    /// Sends a signal to the running server.
    pub fn signal(&self, sig: Signal) {
        assert!(
            self.child.is_some(),
            "signal {sig}: redis-server is not running"
        );
        kill(Pid::from_raw(self.pid as i32), sig)
            .unwrap_or_else(|e| panic!("kill -{sig} {}: {e}", self.pid));
    }

    /// SIGKILLs the server and starts a new one at the same address with an
    /// empty dataset (persistence files are deleted first): a master that
    /// lost everything. A replica resynchronises from its master afterwards.
    pub fn restart_empty(&mut self) {
        self.sigkill();
        // dump.rdb (which a replica writes when it syncs), appendonlydir/
        // (Redis 7), appendonly.aof (Redis 6), temp-*.rdb.
        let _ = fs::remove_dir_all(self.dir.path().join("appendonlydir"));
        if let Ok(entries) = fs::read_dir(self.dir.path()) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.ends_with(".rdb") || name.ends_with(".aof") {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        self.relaunch();
    }

    /// SIGKILLs the server and starts it again at the same address, keeping
    /// its files: with `appendfsync_always` every acknowledged write survives.
    pub fn restart(&mut self) {
        self.sigkill();
        self.relaunch();
    }

    /// SIGKILLs the server and starts it again at the same address, keeping
    /// its files, with `args` (`--option value` pairs) appended to its own,
    /// so that they override: a node restarted with another `requirepass`,
    /// or another `appendfsync`. They stay for later restarts.
    pub fn restart_with(&mut self, args: &[&str]) {
        self.sigkill();
        self.args.extend(args.iter().map(|a| a.to_string()));
        if let Some(i) = args.iter().position(|a| *a == "--requirepass") {
            self.requirepass = args.get(i + 1).map(|p| p.to_string());
        }
        self.relaunch();
    }

    fn relaunch(&mut self) {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            match self.launch() {
                Ok(()) => return,
                // The old server's port may linger for a moment; it is ours.
                Err(log) if port_in_use(&log) && Instant::now() < deadline => {
                    thread::sleep(Duration::from_millis(50));
                }
                Err(log) => panic!("redis-server did not restart; its log:\n{log}"),
            }
        }
    }

    /// `REPLICAOF NO ONE`: the replica becomes a master.
    pub fn promote(&self) {
        let _: redis::Value = self.query(&["REPLICAOF", "NO", "ONE"]);
    }

    /// Waits until this replica's link to `master` is up and it has applied
    /// everything `master` had written when the call started. Panics with
    /// both INFO replication sections after [`SYNC_TIMEOUT`].
    pub fn wait_replica_synced(&self, master: &RedisServer) {
        let target: u64 = master
            .info_field("replication", "master_repl_offset")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let deadline = Instant::now() + SYNC_TIMEOUT;
        loop {
            let info = self.info("replication");
            let up = info_field(&info, "master_link_status").as_deref() == Some("up");
            let offset: u64 = info_field(&info, "slave_repl_offset")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            if up && offset >= target {
                return;
            }
            if Instant::now() >= deadline {
                panic!(
                    "replica {} not synced with {} (offset {target}) within {SYNC_TIMEOUT:?}\n\
                     replica INFO:\n{info}\nmaster INFO:\n{}\nreplica log:\n{}",
                    self.url(),
                    master.url(),
                    master.info("replication"),
                    self.log()
                );
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The state letter of /proc/PID/stat (`R`, `S`, `T`, `Z`...), None if unknown.
pub fn proc_state(pid: u32) -> Option<char> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}
