//! The fleet: client loops that keep `yaraus run` and `yaraus lock` clients
//! going, and their children's shared log (the figures a fault test draws
//! from it are in [`super::figures`]).
//!
//! A client loop is a thread that starts one yaraus, waits for it to end,
//! records its exit status and starts it again, until the fleet is finished:
//! a small pool (3 ids for 5 run clients, 2 locks for 4 lock clients) makes
//! ids and locks change hands at every fault. Each yaraus runs the child of
//! [`super::child`], which tells the log what it holds. The yaraus processes
//! are tied to their loop's thread by `PR_SET_PDEATHSIG`, so a test that
//! dies takes them along (and their watchdogs take the children).
//!
//! Nothing here sleeps to let time pass: waits are on the log (a `start`
//! line), on /proc (a pid gone) or on a client loop (an exit recorded).

use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::child::{self, now_ns};
use super::common::process::{alive, alive_since};
use super::common::scratch::Scratch;
use super::common::{EVENT, wait_until, yaraus};
use super::figures::Outcome;
use super::lives::{Life, Lives, Tail, overlaps};

/// How long the fleet may take to have every id and lock held by a live
/// child (after start-up, or after a fault has passed).
pub const SETTLE: Duration = Duration::from_secs(30);

/// The chaos tests run one at a time: each keeps both cores busy, and the
/// recovery figures mean something only without a neighbour's load.
pub fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// One client loop's command: `yaraus ARGS -- CHILD`.
#[derive(Clone)]
pub struct ClientSpec {
    pub args: Vec<String>,
    /// Its children ignore SIGTERM ([`child::STUBBORN_ENV`]).
    pub stubborn: bool,
}

impl ClientSpec {
    pub fn new<S: AsRef<str>>(args: &[S]) -> ClientSpec {
        ClientSpec {
            args: args.iter().map(|a| a.as_ref().to_string()).collect(),
            stubborn: false,
        }
    }

    /// The same, with children that ignore SIGTERM.
    pub fn stubborn(mut self) -> ClientSpec {
        self.stubborn = true;
        self
    }
}

struct ClientState {
    /// The yaraus that runs now.
    pid: Mutex<Option<i32>>,
    /// Exit codes so far (128+N for a yaraus killed by signal N).
    exits: Mutex<Vec<i32>>,
    stop: AtomicBool,
}

struct Client {
    state: Arc<ClientState>,
    log: PathBuf,
    thread: Option<JoinHandle<()>>,
}

/// The clients, their log, and the ids and locks they share.
pub struct Fleet {
    scratch: Scratch,
    log: PathBuf,
    pub tail: Tail,
    clients: Vec<Client>,
    resources: Vec<String>,
    /// How long [`Fleet::wait_recovered`] may take.
    settle: Duration,
    finished: bool,
}

impl Fleet {
    /// Starts one client loop per spec (client `k` is `specs[k]`). Every id
    /// and lock in `resources` (`id:N`, `lock:NAME`) is expected to be held
    /// once the fleet has settled. The children take `grace` to stop.
    pub fn start(specs: &[ClientSpec], resources: &[String], grace: Duration) -> Fleet {
        let scratch = Scratch::new();
        let log = scratch.path("children.log");
        File::create(&log).expect("create the children's log");
        let mut fleet = Fleet {
            tail: Tail::new(&log),
            log,
            clients: Vec::new(),
            resources: resources.to_vec(),
            settle: SETTLE,
            finished: false,
            scratch,
        };
        for spec in specs {
            fleet.add(spec.clone(), grace);
        }
        fleet
    }

    fn add(&mut self, spec: ClientSpec, grace: Duration) {
        let index = self.clients.len();
        let state = Arc::new(ClientState {
            pid: Mutex::new(None),
            exits: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let stderr = self.scratch.path(&format!("client-{index}.log"));
        let exe = std::env::current_exe().expect("the test executable");
        let log = self.log.clone();
        let thread = {
            let state = state.clone();
            let stderr = stderr.clone();
            thread::Builder::new()
                .name(format!("client-{index}"))
                .spawn(move || {
                    while !state.stop.load(Ordering::SeqCst) {
                        let err = OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(&stderr)
                            .expect("client log");
                        let mut cmd = yaraus();
                        cmd.args(&spec.args)
                            .arg("--")
                            .arg(&exe)
                            .args([
                                "--exact",
                                "chaos::chaos_child",
                                "--nocapture",
                                "--test-threads=1",
                            ])
                            .env(child::LOG_ENV, &log)
                            .env(child::CLIENT_ENV, index.to_string())
                            .env(child::GRACE_ENV, grace.as_millis().to_string())
                            .env(child::STUBBORN_ENV, if spec.stubborn { "1" } else { "0" })
                            .stdin(Stdio::null())
                            .stdout(Stdio::null())
                            .stderr(err);
                        // SAFETY: one async-signal-safe call between fork and exec.
                        // The signal is tied to this thread, which outlives the child.
                        unsafe {
                            cmd.pre_exec(|| {
                                nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)
                                    .map_err(std::io::Error::from)
                            });
                        }
                        let mut child = cmd.spawn().expect("spawn yaraus");
                        *state.pid.lock().unwrap() = Some(child.id() as i32);
                        let status = child.wait().expect("wait for yaraus");
                        *state.pid.lock().unwrap() = None;
                        let code = status
                            .code()
                            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
                        state.exits.lock().unwrap().push(code);
                        // 0 and 124 are the usual ends; anything else (Redis
                        // unreachable, pool gone) is retried a little later.
                        let pause = if code == 0 || code == 124 { 10 } else { 100 };
                        thread::sleep(Duration::from_millis(pause));
                    }
                })
                .expect("start a client loop")
        };
        self.clients.push(Client {
            state,
            log: stderr,
            thread: Some(thread),
        });
    }

    /// Gives [`Fleet::wait_recovered`] `settle` instead of [`SETTLE`].
    pub fn set_settle(&mut self, settle: Duration) {
        self.settle = settle;
    }

    /// The children's log.
    pub fn log_path(&self) -> PathBuf {
        self.log.clone()
    }

    /// Every client's yaraus logs so far (their stderr), one after another.
    pub fn client_logs(&self) -> String {
        self.clients
            .iter()
            .map(|c| fs::read_to_string(&c.log).unwrap_or_default())
            .collect()
    }

    /// The yaraus process client `k` runs now.
    pub fn client_pid(&self, k: usize) -> Option<i32> {
        *self.clients[k].state.pid.lock().unwrap()
    }

    /// Client `k`'s exit codes so far.
    pub fn exits(&self, k: usize) -> Vec<i32> {
        self.clients[k].state.exits.lock().unwrap().clone()
    }

    /// Waits for client `k`'s yaraus to exit after the `before` exits it had
    /// already; returns that exit code.
    pub fn wait_exit(&mut self, k: usize, before: usize) -> i32 {
        self.wait(&format!("client {k}'s yaraus to exit"), EVENT, |f| {
            f.exits(k).len() > before
        });
        self.exits(k)[before]
    }

    /// Waits up to `timeout` for the children `pids` to die, then asserts
    /// that each one's life ended by `limit` ([`assert_ended_by`](Self::assert_ended_by)).
    /// Returns when they were seen dead (monotonic ns).
    pub fn expect_dead_by(
        &mut self,
        what: &str,
        pids: &[i32],
        limit: u64,
        timeout: Duration,
    ) -> u64 {
        let dead = self.wait_dead(&format!("{what}: the children to die"), pids, timeout);
        self.assert_ended_by(what, pids, limit);
        dead
    }

    /// Asserts that the children `pids` are gone and that each one's life
    /// ended by `limit` (monotonic ns): their deadline.
    pub fn assert_ended_by(&mut self, what: &str, pids: &[i32], limit: u64) {
        self.tail.poll();
        for &pid in pids {
            assert!(!alive(pid), "{what}: child {pid} is still alive");
            let life = self
                .tail
                .lives
                .life_of(pid)
                .unwrap_or_else(|| panic!("{what}: no life of pid {pid} in the log"));
            assert!(
                life.end <= limit,
                "{what}: a child outlived its deadline by {:.1} ms: {life}",
                (life.end - limit) as f64 / 1e6
            );
        }
    }

    /// How many yaraus exited 124 (their child killed: claim lost) so far.
    pub fn killed(&self) -> usize {
        self.count_exits(124)
    }

    /// How many yaraus exited with `code` so far.
    pub fn count_exits(&self, code: i32) -> usize {
        (0..self.clients.len())
            .map(|k| self.exits(k).iter().filter(|&&c| c == code).count())
            .sum()
    }

    /// The current holder of each resource: a life without `stop` whose
    /// child is alive. Reads the log first.
    pub fn holders(&mut self) -> BTreeMap<String, Life> {
        self.tail.poll();
        let mut out = BTreeMap::new();
        for life in self.tail.lives.open() {
            if alive_since(life.pid, life.start) {
                out.insert(life.res.clone(), life.clone());
            }
        }
        out
    }

    /// Whether the child `pid` is alive: the process that wrote its latest
    /// life, not a later one that reused the pid (a soak wraps around the
    /// pids every few minutes).
    fn child_alive(&self, pid: i32) -> bool {
        match self.tail.lives.life_of(pid) {
            Some(life) => alive_since(pid, life.start),
            None => alive(pid),
        }
    }

    /// Waits until every resource is held by a live child; returns the holders.
    pub fn wait_all_held(&mut self) -> BTreeMap<String, Life> {
        let mut holders = BTreeMap::new();
        self.wait(
            "every id and lock to be held by a live child",
            SETTLE,
            |f| {
                holders = f.holders();
                f.resources.iter().all(|r| holders.contains_key(r))
            },
        );
        holders
    }

    /// Waits until none of `pids` is alive; returns when it saw that.
    pub fn wait_dead(&mut self, what: &str, pids: &[i32], timeout: Duration) -> u64 {
        self.wait(what, timeout, |_| pids.iter().all(|&p| !alive(p)));
        now_ns()
    }

    /// Waits until the fault that began at `fault` (monotonic ns) is
    /// overcome: every child in `victims` is gone, and every resource is
    /// held by a live child that is not one of them. Returns the time to
    /// recovery: from the fault to the start of the last of those holders
    /// (zero for a resource whose holder was never disturbed).
    pub fn wait_recovered(&mut self, fault: u64, victims: &[i32]) -> Duration {
        let victims: HashSet<i32> = victims.iter().copied().collect();
        let mut recovered = fault;
        let settle = self.settle;
        self.wait(
            "every id and lock to be held again after the fault",
            settle,
            |f| {
                if victims.iter().any(|&p| f.child_alive(p)) {
                    return false;
                }
                let holders = f.holders();
                let mut last = fault;
                for r in &f.resources {
                    match holders.get(r) {
                        Some(h) if !victims.contains(&h.pid) => last = last.max(h.start),
                        _ => return false,
                    }
                }
                recovered = last;
                true
            },
        );
        Duration::from_nanos(recovered - fault)
    }

    /// Polls `cond` every 10 ms; on timeout, panics naming `what` (the
    /// fleet's logs are printed by its drop).
    pub fn wait(
        &mut self,
        what: &str,
        timeout: Duration,
        mut cond: impl FnMut(&mut Fleet) -> bool,
    ) {
        let deadline = Instant::now() + timeout;
        while !cond(self) {
            if Instant::now() >= deadline {
                panic!("timed out after {timeout:?} waiting for {what}");
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stops every client (SIGINT to its yaraus, which forwards it to the
    /// child, which writes `stop`; SIGINT, as stubborn children ignore
    /// SIGTERM), then reads the whole log.
    pub fn finish(mut self) -> Outcome {
        self.stop_clients();
        if std::env::var_os("CHAOS_DUMP").is_some() {
            eprintln!("{}", self.dump());
        }
        let text = fs::read_to_string(&self.log).expect("read the children's log");
        let lives = Lives::parse(&text);
        let found = overlaps(&lives);
        Outcome {
            sigkilled: lives.iter().filter(|l| !l.stopped).count(),
            killed: self.killed(),
            failed: self.count_exits(125),
            lives,
            overlaps: found,
        }
    }

    fn stop_clients(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        for c in &self.clients {
            c.state.stop.store(true, Ordering::SeqCst);
        }
        let deadline = Instant::now() + EVENT;
        loop {
            let mut running = 0;
            for c in &self.clients {
                if let Some(pid) = *c.state.pid.lock().unwrap() {
                    running += 1;
                    let pid = Pid::from_raw(pid);
                    let _ = kill(pid, Signal::SIGCONT);
                    let sig = if Instant::now() < deadline {
                        Signal::SIGINT
                    } else {
                        Signal::SIGKILL
                    };
                    let _ = kill(pid, sig);
                }
            }
            if running == 0
                && self
                    .clients
                    .iter()
                    .all(|c| c.thread.as_ref().is_none_or(|t| t.is_finished()))
            {
                break;
            }
            thread::sleep(Duration::from_millis(50));
        }
        for c in &mut self.clients {
            if let Some(t) = c.thread.take() {
                let _ = t.join();
            }
        }
    }

    /// The last lines of every client's log and of the children's log.
    pub fn dump(&self) -> String {
        let keep: usize = std::env::var("CHAOS_DUMP")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(12);
        let mut out = String::new();
        for (k, c) in self.clients.iter().enumerate() {
            let text = fs::read_to_string(&c.log).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            out.push_str(&format!(
                "--- client {k} (exits {:?}), last lines of its yaraus logs:\n{}\n",
                self.exits(k),
                lines[lines.len().saturating_sub(keep)..].join("\n")
            ));
        }
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("beat")).collect();
        out.push_str(&format!(
            "--- children's log, last start/stop lines:\n{}\n",
            lines[lines.len().saturating_sub(keep.max(30))..].join("\n")
        ));
        out
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        if thread::panicking() {
            eprintln!("{}", self.dump());
        }
        self.stop_clients();
    }
}

/// Waits up to [`EVENT`] for `cond` ([`wait_until`]): for events outside the
/// fleet (a process stopping).
pub fn await_event(what: &str, cond: impl FnMut() -> bool) {
    wait_until(what, EVENT, cond)
}
