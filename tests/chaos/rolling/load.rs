//! The load on the three deployments: `seq serve` and its Redis clients,
//! `seq next` loops, a hilo agent on `--every` and a `hilo next` loop, and
//! lock loops over the three lock masters, each recording a history.

use super::history::{Call, History, call, check, client, pair, single};
use super::nodes::{Deployments, HILO, urls};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A long-running yaraus, killed when dropped.
struct Service(Child);

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn service(args: &[String], log: &Path) -> Service {
    let log = std::fs::File::create(log).unwrap();
    let child = crate::chaos::common::yaraus()
        .args(args)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("spawn yaraus");
    Service(child)
}

/// The port `seq serve` printed it listens on.
fn serve_port(log: &Path) -> u16 {
    let mut port = None;
    crate::chaos::harness::await_event("seq serve to listen", || {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        port = text
            .split("listening on 127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|p| p.parse().ok());
        port.is_some()
    });
    port.unwrap()
}

/// A Redis client of `seq serve` taking ids with INCR.
fn serve_client(port: u16) -> impl FnMut() -> Option<(u64, u64)> + Send + 'static {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
    let mut conn: Option<redis::Connection> = None;
    move || {
        if conn.is_none() {
            conn = client
                .get_connection_with_timeout(Duration::from_secs(5))
                .ok();
        }
        let c = conn.as_mut()?;
        match redis::cmd("INCR").arg("orders").query::<u64>(c) {
            Ok(v) => Some((v, v)),
            Err(_) => {
                conn = None;
                None
            }
        }
    }
}

/// Prints the services' logs (their last lines) when the test fails.
pub struct ShowLogs(pub PathBuf);

impl Drop for ShowLogs {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        for name in ["serve.log", "agent.log"] {
            let text = std::fs::read_to_string(self.0.join(name)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(30)..].join("\n");
            eprintln!("--- last lines of {name}:\n{tail}");
        }
    }
}

/// The clients and services that load the deployments until stopped.
pub struct Load {
    stop: Arc<AtomicBool>,
    clients: Vec<std::thread::JoinHandle<()>>,
    _services: [Service; 2],
    seq: History,
    hilo: History,
    lock: History,
}

/// `urls` (the global `--redis` options) then `head`: a lock's command
/// follows `--`, so the options must come first.
fn args(urls: &[String], head: &[&str]) -> Vec<String> {
    urls.iter()
        .cloned()
        .chain(head.iter().map(|s| s.to_string()))
        .collect()
}

/// What the load got: calls made and answered (all three histories).
pub struct Answered {
    pub calls: usize,
    pub answered: usize,
}

impl Load {
    /// `seq serve` and two of its clients, two `seq next` loops, a hilo
    /// agent (`--every 200ms`) and a `hilo next` loop, two lock loops.
    pub fn start(d: &Deployments, scratch: &Path) -> Load {
        let (seq_urls, hilo_urls, lock_urls) = (urls(&d.seq), urls(&d.hilo), urls(&d.lock));
        let serve_log = scratch.join("serve.log");
        let serve = service(
            &args(&seq_urls, &["seq", "serve", "--listen", "127.0.0.1:0"]),
            &serve_log,
        );
        let port = serve_port(&serve_log);
        let agent = [
            "hilo",
            "agent",
            HILO,
            "--every",
            "200ms",
            "--window-size",
            "500",
        ];
        let agent = service(&args(&hilo_urls, &agent), &scratch.join("agent.log"));
        let stop = Arc::new(AtomicBool::new(false));
        let (seq, hilo, lock): (History, History, History) = Default::default();
        let next = args(&seq_urls, &["seq", "next", "orders"]);
        let hilo_next = args(&hilo_urls, &["hilo", "next", HILO, "--batch", "10"]);
        let echo = "echo $YARAUS_FENCING_TOKEN";
        let locked = [
            "lock", "deploy", "-w", "10s", "--ttl", "2s", "--", "sh", "-c", echo,
        ];
        let locked = args(&lock_urls, &locked);
        let mut clients = Vec::new();
        for _ in 0..2 {
            let (next, locked) = (next.clone(), locked.clone());
            clients.push(client(&stop, &seq, move || call(&next, single)));
            clients.push(client(&stop, &seq, serve_client(port)));
            clients.push(client(&stop, &lock, move || call(&locked, single)));
        }
        clients.push(client(&stop, &hilo, move || call(&hilo_next, pair)));
        Load {
            stop,
            clients,
            _services: [serve, agent],
            seq,
            hilo,
            lock,
        }
    }

    /// Stops the clients and checks the histories (no value twice; real-time
    /// order of the sequence and of the fencing tokens).
    pub fn finish(self) -> Answered {
        self.stop.store(true, Ordering::Relaxed);
        for c in self.clients {
            c.join().unwrap();
        }
        let history = |h: &History| -> Vec<Call> { h.lock().unwrap().clone() };
        let (seq, hilo, lock) = (history(&self.seq), history(&self.hilo), history(&self.lock));
        let answered =
            check("seq", &seq, true) + check("hilo", &hilo, false) + check("lock", &lock, true);
        Answered {
            calls: seq.len() + hilo.len() + lock.len(),
            answered,
        }
    }
}
