//! Test harness shared by the integration tests (`mod common;`).
//!
//! Every Redis here is a real `redis-server` process started in a fresh
//! temporary directory — never a mock. Faults are real too: SIGKILL, SIGSTOP,
//! restart with an empty dataset, promotion of a replica.
//!
//! A test file rarely uses every helper, hence the module-wide `dead_code`
//! allowance.
#![allow(dead_code)]

pub mod cluster;
pub mod lock;
pub mod pool;
pub mod process;
pub mod proxy;
pub mod pty;
pub mod scratch;
pub mod sentinel;

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use redis::{
    ConnectionAddr, ConnectionInfo, FromRedisValue, IntoConnectionInfo, RedisConnectionInfo,
};
use tempfile::TempDir;

/// Bound on events that must happen promptly (a child writing a file, a
/// process dying, yaraus exiting). Reaching it means the test fails.
pub const EVENT: Duration = Duration::from_secs(20);
/// How long a server may take to answer PING after it was started.
pub const START_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a replica may take to finish its initial synchronisation.
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(10);
/// Read/write timeout of the connections returned by [`RedisServer::conn`]:
/// a hung server fails the test instead of hanging it.
pub const CONN_IO_TIMEOUT: Duration = Duration::from_secs(30);

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const SOCKET_NAME: &str = "redis.sock";
const LOG_NAME: &str = "redis.log";
/// Attempts at finding a free TCP port (another process may take the one we
/// picked between our probe and redis-server's bind).
const PORT_ATTEMPTS: usize = 20;

/// Options of [`RedisServer::start_with`]. `ServerOptions::default()` gives
/// what [`RedisServer::start`] uses: a unix socket, no password, no
/// persistence, a master.
#[derive(Default)]
pub struct ServerOptions<'a> {
    /// Listen on a free TCP port of 127.0.0.1 instead of a unix socket.
    pub tcp: bool,
    /// `requirepass`: clients must AUTH with this password.
    pub requirepass: Option<String>,
    /// `appendonly yes` + `appendfsync always`: every write is on disk before
    /// the reply (what the majority sequence requires). [`RedisServer::restart`]
    /// then keeps the data.
    pub appendfsync_always: bool,
    /// Start as a replica of this server, which must have been started with
    /// `tcp: true` (Redis replicates over TCP only). Its `requirepass`, if any,
    /// becomes `masterauth`.
    pub replica_of: Option<&'a RedisServer>,
    /// Extra `--option value` arguments, appended last (so they override).
    pub extra_args: Vec<String>,
}

#[derive(Clone, Debug)]
enum Addr {
    Unix(PathBuf),
    Tcp(u16),
}

/// A `redis-server` child process in its own temporary directory.
/// Dropping it SIGKILLs and reaps the server, then deletes the directory.
pub struct RedisServer {
    child: Option<Child>,
    pid: u32,
    addr: Addr,
    requirepass: Option<String>,
    /// Every argument but the address ones (`--port`, `--bind`, `--unixsocket`),
    /// kept for restarts.
    args: Vec<String>,
    dir: TempDir,
}

impl RedisServer {
    /// A fresh server on a unix socket, without password or persistence.
    pub fn start() -> RedisServer {
        RedisServer::start_with(ServerOptions::default())
    }

    /// A fresh server with the given options. Panics (with the server log)
    /// if it does not answer PING within [`START_TIMEOUT`].
    pub fn start_with(opts: ServerOptions<'_>) -> RedisServer {
        ensure_redis_server_installed();
        let dir = make_tempdir();
        let mut args: Vec<String> = vec![
            "--save".into(),
            String::new(),
            "--dir".into(),
            path_str(dir.path()).into(),
            "--daemonize".into(),
            "no".into(),
            // Replicas start syncing at once instead of after 5 s.
            "--repl-diskless-sync-delay".into(),
            "0".into(),
        ];
        if opts.appendfsync_always {
            args.extend(["--appendonly", "yes", "--appendfsync", "always"].map(String::from));
        } else {
            args.extend(["--appendonly", "no"].map(String::from));
        }
        if let Some(pass) = &opts.requirepass {
            args.extend(["--requirepass".into(), pass.clone()]);
        }
        if let Some(master) = opts.replica_of {
            let Addr::Tcp(port) = master.addr else {
                panic!(
                    "ServerOptions::replica_of: the master must be started with `tcp: true` \
                     (Redis replicates over TCP only)"
                );
            };
            args.extend(["--replicaof".into(), "127.0.0.1".into(), port.to_string()]);
            if let Some(pass) = &master.requirepass {
                args.extend(["--masterauth".into(), pass.clone()]);
            }
        }
        args.extend(opts.extra_args);

        let addr = if opts.tcp {
            Addr::Tcp(free_port())
        } else {
            Addr::Unix(dir.path().join(SOCKET_NAME))
        };
        let mut server = RedisServer {
            child: None,
            pid: 0,
            addr,
            requirepass: opts.requirepass,
            args,
            dir,
        };
        let mut attempt = 1;
        loop {
            match server.launch() {
                Ok(()) => return server,
                Err(log) if opts.tcp && attempt < PORT_ATTEMPTS && port_in_use(&log) => {
                    attempt += 1;
                    server.addr = Addr::Tcp(free_port());
                }
                Err(log) => panic!("redis-server exited during start-up; its log:\n{log}"),
            }
        }
    }

    /// Spawns redis-server with the stored arguments at the current address
    /// and waits for PING. `Err(log)` if the process exited during start-up;
    /// panics if it neither exits nor answers within [`START_TIMEOUT`].
    fn launch(&mut self) -> Result<(), String> {
        assert!(self.child.is_none(), "launch: a server is still running");
        let log_path = self.log_path();
        let mut log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", log_path.display()));
        let log_start = log.metadata().map(|m| m.len()).unwrap_or(0);
        let mut args: Vec<String> = Vec::new();
        match &self.addr {
            Addr::Unix(path) => {
                // A SIGKILLed server leaves its socket file behind.
                let _ = fs::remove_file(path);
                args.extend(["--port".into(), "0".into(), "--unixsocket".into()]);
                args.push(path_str(path).into());
            }
            Addr::Tcp(port) => {
                args.extend(["--port".into(), port.to_string(), "--bind".into()]);
                args.push("127.0.0.1".into());
            }
        }
        args.extend(self.args.iter().cloned());
        let _ = writeln!(log, "=== harness: redis-server {}", pty::shell_words(&args));
        let mut cmd = Command::new("redis-server");
        cmd.args(&args)
            .process_group(0)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("dup log file"))
            .stderr(log);
        let child = match spawn_tied(cmd) {
            Ok(child) => child,
            Err(e) if e.kind() == io::ErrorKind::NotFound => panic!("{}", missing_redis_message()),
            Err(e) => panic!("cannot spawn redis-server: {e}"),
        };
        self.pid = child.id();
        self.child = Some(child);

        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let child = self.child.as_mut().expect("child");
            if let Some(status) = child.try_wait().expect("try_wait redis-server") {
                self.child = None;
                let log = self.log();
                let this_launch = log.get(log_start as usize..).unwrap_or(&log);
                return Err(format!("(exit status: {status})\n{this_launch}"));
            }
            if self.ping() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let log = self.log();
                self.sigkill();
                panic!(
                    "redis-server at {} did not answer PING within {START_TIMEOUT:?}; its log:\n{log}",
                    self.url()
                );
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// True if the server answers PING right now (1 s timeout).
    pub fn ping(&self) -> bool {
        let Ok(client) = redis::Client::open(self.connection_info()) else {
            return false;
        };
        let Ok(mut conn) = client.get_connection_with_timeout(Duration::from_secs(1)) else {
            return false;
        };
        redis::cmd("PING").query::<String>(&mut conn).is_ok()
    }

    /// A URL yaraus accepts: `unix:///dir/redis.sock` or
    /// `redis://127.0.0.1:PORT/0`; with a password `redis://:PASS@127.0.0.1:PORT/0`
    /// (and, for a socket, `unix:///dir/redis.sock?pass=PASS`, redis-rs's form).
    pub fn url(&self) -> String {
        match (&self.addr, &self.requirepass) {
            (Addr::Unix(path), None) => format!("unix://{}", path_str(path)),
            (Addr::Unix(path), Some(pass)) => {
                format!("unix://{}?pass={}", path_str(path), percent_encode(pass))
            }
            (Addr::Tcp(port), None) => format!("redis://127.0.0.1:{port}/0"),
            (Addr::Tcp(port), Some(pass)) => {
                format!("redis://:{}@127.0.0.1:{port}/0", percent_encode(pass))
            }
        }
    }

    /// [`url`](Self::url) with the yaraus namespace: `...?ns=NS` (or `&ns=NS`
    /// when the URL already has a query).
    pub fn url_ns(&self, ns: &str) -> String {
        let url = self.url();
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("{url}{sep}ns={}", percent_encode(ns))
    }

    /// The unix socket path, if the server listens on one.
    pub fn socket_path(&self) -> Option<&Path> {
        match &self.addr {
            Addr::Unix(path) => Some(path),
            Addr::Tcp(_) => None,
        }
    }

    /// The TCP port, if the server listens on 127.0.0.1.
    pub fn port(&self) -> Option<u16> {
        match self.addr {
            Addr::Tcp(port) => Some(port),
            Addr::Unix(_) => None,
        }
    }

    /// The server's temporary directory (socket, log, persistence files).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The pid of the current (or last) redis-server process.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// True while the server process has not been killed by the harness.
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// Everything the server has logged so far (all its restarts included).
    pub fn log(&self) -> String {
        fs::read_to_string(self.log_path()).unwrap_or_else(|e| format!("(no log: {e})"))
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join(LOG_NAME)
    }

    /// redis-rs connection settings (address and password, RESP2, db 0).
    pub fn connection_info(&self) -> ConnectionInfo {
        let addr = match &self.addr {
            Addr::Unix(path) => ConnectionAddr::Unix(path.clone()),
            Addr::Tcp(port) => ConnectionAddr::Tcp("127.0.0.1".into(), *port),
        };
        let info = addr.into_connection_info().expect("connection info");
        match &self.requirepass {
            Some(pass) => {
                info.set_redis_settings(RedisConnectionInfo::default().set_password(pass))
            }
            None => info,
        }
    }

    /// A new authenticated connection, or the error.
    pub fn try_conn(&self) -> redis::RedisResult<redis::Connection> {
        let conn = redis::Client::open(self.connection_info())?
            .get_connection_with_timeout(CONNECT_TIMEOUT)?;
        conn.set_read_timeout(Some(CONN_IO_TIMEOUT))?;
        conn.set_write_timeout(Some(CONN_IO_TIMEOUT))?;
        Ok(conn)
    }

    /// A new authenticated, synchronous connection. Reads and writes time out
    /// after [`CONN_IO_TIMEOUT`]; change with `set_read_timeout`.
    pub fn conn(&self) -> redis::Connection {
        self.try_conn()
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", self.url()))
    }

    /// Runs one command on a new connection; panics on any error.
    pub fn cmd(&self, args: &[&str]) -> redis::Value {
        self.query(args)
    }

    /// Runs one command on a new connection and converts the reply, e.g.
    /// `server.query::<Option<String>>(&["HGET", "yaraus:clients", "A1"])`;
    /// panics on any error.
    pub fn query<T: FromRedisValue>(&self, args: &[&str]) -> T {
        self.try_query(args)
            .unwrap_or_else(|e| panic!("{} on {} failed: {e}", args.join(" "), self.url()))
    }

    /// Runs one command on a new connection; the error is returned.
    pub fn try_query<T: FromRedisValue>(&self, args: &[&str]) -> redis::RedisResult<T> {
        let (name, rest) = args.split_first().expect("query: empty command");
        let mut conn = self.try_conn()?;
        redis::cmd(name).arg(rest).query(&mut conn)
    }

    /// `INFO section` as text.
    pub fn info(&self, section: &str) -> String {
        self.query(&["INFO", section])
    }

    /// One `field:value` of `INFO section`.
    pub fn info_field(&self, section: &str, field: &str) -> Option<String> {
        info_field(&self.info(section), field)
    }

    // ----- faults -------------------------------------------------------

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

    // ----- inspection ---------------------------------------------------

    /// Every key with its type, content and expiry, for "Redis unchanged"
    /// assertions (`assert_eq!(before, after)`). Keys of databases other than
    /// 0 are listed as `[dbN] key`. Values look like
    /// `zset ["A1"=1700000000, "B10"=0] expire=none`: hashes and sets are
    /// sorted, zsets in rank order with their scores, lists in order, and
    /// the expiry is absolute (`PEXPIRETIME`), so it does not drift.
    pub fn snapshot(&self) -> BTreeMap<String, String> {
        let mut conn = self.conn();
        let keyspace = self.info("keyspace");
        let mut dbs: Vec<u32> = keyspace
            .lines()
            .filter_map(|l| l.strip_prefix("db")?.split(':').next()?.parse().ok())
            .collect();
        dbs.sort_unstable();
        let mut out = BTreeMap::new();
        for db in dbs {
            redis::cmd("SELECT")
                .arg(db)
                .exec(&mut conn)
                .expect("SELECT");
            let mut cursor: u64 = 0;
            loop {
                let (next, keys): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("COUNT")
                    .arg(1000)
                    .query(&mut conn)
                    .expect("SCAN");
                for key in keys {
                    let name = if db == 0 {
                        show_plain(&key)
                    } else {
                        format!("[db{db}] {}", show_plain(&key))
                    };
                    if let Some(dump) = dump_key(&mut conn, &key) {
                        out.insert(name, dump);
                    }
                }
                if next == 0 {
                    break;
                }
                cursor = next;
            }
        }
        out
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if thread::panicking() {
            let log = self.log();
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines[lines.len().saturating_sub(30)..].join("\n");
            eprintln!(
                "--- last lines of redis-server log ({}):\n{tail}\n---",
                self.url()
            );
        }
        self.sigkill();
    }
}

/// The content of one key, or None if it vanished meanwhile.
fn dump_key(conn: &mut redis::Connection, key: &[u8]) -> Option<String> {
    let kind: String = redis::cmd("TYPE").arg(key).query(conn).expect("TYPE");
    let q = |conn: &mut redis::Connection, cmd: &mut redis::Cmd| -> Vec<Vec<u8>> {
        cmd.query(conn)
            .unwrap_or_else(|e| panic!("dumping {}: {e}", show_plain(key)))
    };
    let content = match kind.as_str() {
        "none" => return None,
        "string" => {
            let v: Option<Vec<u8>> = redis::cmd("GET").arg(key).query(conn).expect("GET");
            show(&v?)
        }
        "hash" => {
            let flat = q(conn, redis::cmd("HGETALL").arg(key));
            let mut pairs: Vec<String> = flat
                .chunks(2)
                .map(|p| format!("{}={}", show(&p[0]), show(&p[1])))
                .collect();
            pairs.sort();
            format!("{{{}}}", pairs.join(", "))
        }
        "zset" => {
            let flat = q(
                conn,
                redis::cmd("ZRANGE")
                    .arg(key)
                    .arg(0)
                    .arg(-1)
                    .arg("WITHSCORES"),
            );
            let pairs: Vec<String> = flat
                .chunks(2)
                .map(|p| format!("{}={}", show(&p[0]), String::from_utf8_lossy(&p[1])))
                .collect();
            format!("[{}]", pairs.join(", "))
        }
        "set" => {
            let mut members: Vec<String> = q(conn, redis::cmd("SMEMBERS").arg(key))
                .iter()
                .map(|m| show(m))
                .collect();
            members.sort();
            format!("{{{}}}", members.join(", "))
        }
        "list" => {
            let items: Vec<String> = q(conn, redis::cmd("LRANGE").arg(key).arg(0).arg(-1))
                .iter()
                .map(|m| show(m))
                .collect();
            format!("[{}]", items.join(", "))
        }
        _ => {
            // Streams and module types: the raw reply of a dump is still a
            // faithful, deterministic picture.
            let v: redis::Value = redis::cmd("DUMP").arg(key).query(conn).expect("DUMP");
            format!("{v:?}")
        }
    };
    let expire = match redis::cmd("PEXPIRETIME").arg(key).query::<i64>(conn) {
        Ok(-1) => "none".to_string(),
        Ok(-2) => return None,
        Ok(at) => format!("@{at}ms"),
        // Redis < 7 has no PEXPIRETIME: only tell volatile from persistent.
        Err(_) => match redis::cmd("PTTL").arg(key).query::<i64>(conn) {
            Ok(-1) => "none".to_string(),
            Ok(-2) => return None,
            _ => "volatile".to_string(),
        },
    };
    Some(format!("{kind} {content} expire={expire}"))
}

/// Quoted, escaped rendering of a binary-safe Redis string.
fn show(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => format!("{s:?}"),
        Err(_) => format!("b\"{}\"", bytes.escape_ascii()),
    }
}

/// A key as plain text (escaped only when it is not UTF-8).
fn show_plain(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => format!("b\"{}\"", bytes.escape_ascii()),
    }
}

fn info_field(info: &str, field: &str) -> Option<String> {
    info.lines().find_map(|l| {
        l.trim_end()
            .strip_prefix(field)?
            .strip_prefix(':')
            .map(str::to_string)
    })
}

/// The state letter of /proc/PID/stat (`R`, `S`, `T`, `Z`...), None if unknown.
fn proc_state(pid: u32) -> Option<char> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

fn port_in_use(log: &str) -> bool {
    log.contains("Address already in use")
}

/// A TCP port of 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local_addr").port()
}

/// A temporary directory short enough for a unix socket path (108 bytes).
fn make_tempdir() -> TempDir {
    let mut builder = tempfile::Builder::new();
    builder.prefix("yaraus-redis-");
    let dir = builder.tempdir().expect("create temporary directory");
    if dir.path().join(SOCKET_NAME).as_os_str().len() < 100 {
        return dir;
    }
    builder
        .tempdir_in("/tmp")
        .expect("create temporary directory in /tmp")
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
fn percent_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn missing_redis_message() -> String {
    "redis-server is not on PATH: the integration tests start real Redis servers. \
     Install it with scripts/install-redis.sh (Debian/Ubuntu: apt-get install redis-server)."
        .to_string()
}

/// Panics with a helpful message unless `redis-server` is on PATH.
pub fn ensure_redis_server_installed() {
    static FOUND: OnceLock<bool> = OnceLock::new();
    let found = *FOUND.get_or_init(|| {
        std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|dir| {
                let candidate = dir.join("redis-server");
                fs::metadata(&candidate).is_ok_and(|m| m.is_file())
            })
        })
    });
    assert!(found, "{}", missing_redis_message());
}

/// Spawns `cmd` so that the child is SIGKILLed if this test process dies
/// (PR_SET_PDEATHSIG), leaving no stray redis-server behind a killed test
/// run. Linux ties that signal to the forking *thread*, so every spawn
/// happens on one thread that lives as long as the process.
fn spawn_tied(mut cmd: Command) -> io::Result<Child> {
    type Job = (Command, mpsc::Sender<io::Result<Child>>);
    static SPAWNER: OnceLock<mpsc::Sender<Job>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        thread::Builder::new()
            .name("harness-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("start the spawner thread");
        tx
    });
    #[cfg(target_os = "linux")]
    {
        // SAFETY: the closure runs between fork and exec and only makes one
        // async-signal-safe system call (prctl).
        unsafe {
            cmd.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(io::Error::from)
            });
        }
    }
    let (reply_tx, reply_rx) = mpsc::channel();
    spawner
        .send((cmd, reply_tx))
        .expect("spawner thread is gone");
    reply_rx.recv().expect("spawner thread is gone")
}

/// The `yaraus` binary under test, with every `YARAUS_*` variable of the
/// caller's environment removed so that a developer's settings do not leak
/// into the tests.
pub fn yaraus() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_yaraus"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("YARAUS_") {
            cmd.env_remove(name);
        }
    }
    cmd
}

/// Polls `cond` every 10 ms until it holds; panics naming `what` after
/// `timeout`. For awaiting an observable event — never as a bare sleep.
pub fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// What a finished yaraus said.
#[derive(Debug)]
pub struct Output {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// [`run_yaraus`], expecting exit 0 (the failure shows both outputs).
pub fn run_ok(args: &[&str], env: &[(&str, &str)], timeout: Duration) -> Output {
    let out = run_yaraus(args, env, timeout);
    assert_eq!(
        out.code,
        Some(0),
        "yaraus {args:?}\nstdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
    out
}

/// Prints the rules of `rules_args` (global options, `acl-rules`, its
/// arguments), creates that user on every server of `servers` with
/// `password` added, and returns the `ACL SETUSER` line.
pub fn create_acl_user(servers: &[&RedisServer], rules_args: &[&str], password: &str) -> String {
    let out = run_ok(rules_args, &[], Duration::from_secs(60));
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("ACL SETUSER "))
        .unwrap_or_else(|| panic!("no ACL SETUSER line in:\n{}", out.stdout))
        .to_string();
    let password = format!(">{password}");
    for s in servers {
        let mut args: Vec<&str> = line.split_whitespace().collect();
        args.push(&password);
        assert_eq!(s.query::<String>(&args), "OK");
    }
    line
}

/// Runs yaraus with `args` and `env` to completion; SIGKILLs it and panics
/// if it has not finished within `timeout`.
pub fn run_yaraus(args: &[&str], env: &[(&str, &str)], timeout: Duration) -> Output {
    let child = yaraus()
        .args(args)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn yaraus");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(out) => {
            let out = out.expect("wait for yaraus");
            Output {
                code: out.status.code(),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            }
        }
        Err(_) => {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            panic!("yaraus {args:?} did not finish within {timeout:?}");
        }
    }
}
