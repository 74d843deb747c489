//! One `redis-server` process in its own temporary directory: how it is
//! started (options, a free port, a unix socket short enough for its path),
//! addressed (URLs, redis-rs connection settings) and queried. Its faults
//! (`faults.rs`) and the picture of its keys (`snapshot.rs`) are further
//! `impl RedisServer` blocks beside this one.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use redis::{
    ConnectionAddr, ConnectionInfo, FromRedisValue, IntoConnectionInfo, RedisConnectionInfo,
};
use tempfile::TempDir;

use super::pty;
use super::spawn::{command, spawn_tied};
use super::tools::on_path;

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
pub(super) const PORT_ATTEMPTS: usize = 20;

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
pub(super) enum Addr {
    Unix(PathBuf),
    Tcp(u16),
}

/// A `redis-server` child process in its own temporary directory.
/// Dropping it SIGKILLs and reaps the server, then deletes the directory.
pub struct RedisServer {
    pub(super) child: Option<Child>,
    pub(super) pid: u32,
    pub(super) addr: Addr,
    pub(super) requirepass: Option<String>,
    /// Every argument but the address ones (`--port`, `--bind`, `--unixsocket`),
    /// kept for restarts.
    pub(super) args: Vec<String>,
    pub(super) dir: TempDir,
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
    pub(super) fn launch(&mut self) -> Result<(), String> {
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
        let mut cmd = command("redis-server");
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

pub(super) fn info_field(info: &str, field: &str) -> Option<String> {
    info.lines().find_map(|l| {
        l.trim_end()
            .strip_prefix(field)?
            .strip_prefix(':')
            .map(str::to_string)
    })
}

pub(super) fn port_in_use(log: &str) -> bool {
    log.contains("Address already in use")
}

/// A TCP port of 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local_addr").port()
}

/// A temporary directory short enough for a unix socket path (108 bytes).
pub(super) fn make_tempdir() -> TempDir {
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

pub(super) fn path_str(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
pub(super) fn percent_encode(s: &str) -> String {
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
    let found = *FOUND.get_or_init(|| on_path("redis-server"));
    assert!(found, "{}", missing_redis_message());
}
