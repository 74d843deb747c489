//! The instructions a redis-server runs per request, counted by callgrind
//! (valgrind): a module of the `renew_cost` bench, for `--instructions`.
//!
//! Time per request on a shared, loaded machine moves by tens of percent
//! from one minute to the next; the instructions the server's own code
//! runs do not (the same within 1%), so they price a line of a script to
//! the thousand instructions. What they leave out is the kernel's part of a
//! request (the socket's wake-up, read and write: the same for every
//! request) and the cost of cold caches, which grows with the work.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A redis-server under `valgrind --tool=callgrind`, on a loopback port,
/// without persistence.
pub struct Callgrind {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Callgrind {
    pub fn start() -> Callgrind {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let port = crate::common::free_port();
        let child = Command::new("valgrind")
            .arg("--tool=callgrind")
            .arg(format!(
                "--callgrind-out-file={}/cg.%p",
                dir.path().display()
            ))
            .args(["redis-server", "--port", &port.to_string(), "--save", ""])
            .args(["--appendonly", "no", "--dir"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("valgrind (Debian package valgrind) to run redis-server under callgrind");
        let server = Callgrind { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(60);
        while server.conn().is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server under callgrind never answered"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        server
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    pub fn conn(&self) -> redis::RedisResult<redis::Connection> {
        redis::Client::open(self.url())?.get_connection()
    }

    /// The instructions the server ran per call of `request`, sent `calls`
    /// times back to back on one connection (after 100 unmeasured ones).
    pub fn per_request(&self, request: &redis::Cmd, calls: u64) -> f64 {
        let mut conn = self.conn().expect("a connection");
        let mut send = |n: u64| {
            for _ in 0..n {
                let _: redis::Value = request.query(&mut conn).expect("the request");
            }
        };
        send(100);
        self.control("-z");
        send(calls);
        self.control("-d");
        self.last_total() / calls as f64
    }

    fn control(&self, what: &str) {
        let status = Command::new("callgrind_control")
            .args([what, &self.child.id().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("callgrind_control (valgrind)");
        assert!(status.success(), "callgrind_control {what} failed");
    }

    /// The event total of the newest dump.
    fn last_total(&self) -> f64 {
        let newest: PathBuf = std::fs::read_dir(self.dir.path())
            .expect("the dump directory")
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .max_by_key(|p| dump_number(p))
            .expect("a callgrind dump");
        let text = std::fs::read_to_string(&newest).expect("the dump");
        text.lines()
            .find_map(|l| {
                l.strip_prefix("summary: ")
                    .or_else(|| l.strip_prefix("totals: "))
            })
            .and_then(|v| v.trim().parse().ok())
            .expect("a total in the dump")
    }
}

/// `cg.PID.N`: N, the dump's number (0 for the file written at exit).
fn dump_number(path: &std::path::Path) -> u64 {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = name.unwrap_or_default();
    let mut parts = name.split('.').skip(2);
    parts.next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

impl Drop for Callgrind {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
