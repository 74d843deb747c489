//! What `INFO` reports: the server's clients, its readiness (`health.rs`)
//! and, per sequence, its rounds, ids, batch sizes and errors. Plain atomic counters, bumped where the
//! event happens and read without stopping anyone.
//!
//! A *batch* is the requests one majority round answered: its size is how
//! much group commit saved (a batch of 50 is 50 requests for the fsyncs of
//! one round). The benchmark reads `batch_mean` and `batch_max` from here.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// Counters of the whole server.
pub struct ServerStats {
    started: Instant,
    /// Connections open now.
    pub connected: AtomicU64,
    /// Connections accepted since the start, the refused ones included.
    pub received: AtomicU64,
    /// Connections refused by `--max-clients`.
    pub rejected: AtomicU64,
    /// Requests parsed.
    pub commands: AtomicU64,
    /// Connections closed for a protocol error.
    pub protocol_errors: AtomicU64,
    /// Connections closed by `--idle-timeout`.
    pub idle_closed: AtomicU64,
    /// Connections closed because a transaction's replies would pass the
    /// bound (`limits.rs`).
    pub too_large: AtomicU64,
    /// Wrong passwords (`AUTH`, `HELLO … AUTH`).
    pub auth_failures: AtomicU64,
    /// Connections closed for not authenticating in time.
    pub auth_timeouts: AtomicU64,
    /// Unauthenticated connections closed to admit a new one.
    pub evicted: AtomicU64,
}

impl Default for ServerStats {
    fn default() -> ServerStats {
        ServerStats {
            started: Instant::now(),
            connected: AtomicU64::new(0),
            received: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            commands: AtomicU64::new(0),
            protocol_errors: AtomicU64::new(0),
            idle_closed: AtomicU64::new(0),
            too_large: AtomicU64::new(0),
            auth_failures: AtomicU64::new(0),
            auth_timeouts: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
        }
    }
}

/// Counters of one sequence.
#[derive(Default)]
pub struct SeqStats {
    /// Requests (`INCR`, `INCRBY`) received.
    pub requests: AtomicU64,
    /// Rounds that a majority accepted.
    pub rounds: AtomicU64,
    /// Rounds that ended in an error (every request in them got it).
    pub failed_rounds: AtomicU64,
    /// Attempts refused because nodes held higher values (another
    /// process proposing on the same sequence), each retried.
    pub refused: AtomicU64,
    /// Requests answered with ids.
    pub served: AtomicU64,
    /// Ids handed out.
    pub ids: AtomicU64,
    /// Most requests answered by one round.
    pub batch_max: AtomicU64,
    /// Requests answered with an error.
    pub errors: AtomicU64,
}

impl SeqStats {
    /// A round accepted by a majority answered `requests` requests with `ids` ids.
    pub fn round(&self, requests: u64, ids: u64) {
        self.rounds.fetch_add(1, Relaxed);
        self.served.fetch_add(requests, Relaxed);
        self.ids.fetch_add(ids, Relaxed);
        self.batch_max.fetch_max(requests, Relaxed);
    }

    /// `requests` requests were answered with an error.
    pub fn failed(&self, requests: u64, whole_round: bool) {
        if whole_round {
            self.failed_rounds.fetch_add(1, Relaxed);
        }
        self.errors.fetch_add(requests, Relaxed);
    }
}

/// The sections of `INFO`: `section` as the client gave it (empty: all).
pub fn render(
    section: &str,
    server: &ServerStats,
    listen: &str,
    nodes: &[String],
    sequences: &[(String, std::sync::Arc<SeqStats>)],
    health: &super::health::Health,
) -> String {
    let section = section.to_ascii_lowercase();
    let all = matches!(section.as_str(), "" | "all" | "default" | "everything");
    let mut out = String::new();
    if all || section == "server" {
        let _ = write!(
            out,
            "# Server\r\nyaraus_version:{}\r\nrole:yaraus-seq-serve\r\nlisten:{listen}\r\n\
             process_id:{}\r\nuptime_in_seconds:{}\r\nnodes:{}\r\n\r\n",
            env!("CARGO_PKG_VERSION"),
            std::process::id(),
            server.started.elapsed().as_secs(),
            nodes.join(","),
        );
    }
    if all || section == "clients" {
        let _ = write!(
            out,
            "# Clients\r\nconnected_clients:{}\r\nrejected_connections:{}\r\n\r\n",
            server.connected.load(Relaxed),
            server.rejected.load(Relaxed),
        );
    }
    if all || section == "stats" {
        let _ = write!(
            out,
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\n\
             protocol_errors:{}\r\nidle_timeouts:{}\r\n\
             client_output_buffer_limit_disconnections:{}\r\nacl_access_denied_auth:{}\r\n\
             auth_timeouts:{}\r\nunauthenticated_evicted:{}\r\n\r\n",
            server.received.load(Relaxed),
            server.commands.load(Relaxed),
            server.protocol_errors.load(Relaxed),
            server.idle_closed.load(Relaxed),
            server.too_large.load(Relaxed),
            server.auth_failures.load(Relaxed),
            server.auth_timeouts.load(Relaxed),
            server.evicted.load(Relaxed),
        );
    }
    if all || section == "health" {
        health.render(&mut out);
    }
    if all || section == "sequences" {
        out.push_str("# Sequences\r\n");
        for (name, s) in sequences {
            let rounds = s.rounds.load(Relaxed);
            let served = s.served.load(Relaxed);
            let mean = if rounds == 0 {
                0.0
            } else {
                served as f64 / rounds as f64
            };
            let _ = write!(
                out,
                "seq_{}:requests={},rounds={},ids={},batch_mean={mean:.2},batch_max={},\
                 failed_rounds={},refused={},errors={}\r\n",
                printable(name),
                s.requests.load(Relaxed),
                rounds,
                s.ids.load(Relaxed),
                s.batch_max.load(Relaxed),
                s.failed_rounds.load(Relaxed),
                s.refused.load(Relaxed),
                s.errors.load(Relaxed),
            );
        }
        out.push_str("\r\n");
    }
    out
}

/// A name as it can stand in an `INFO` line: no line breaks, no `:`.
fn printable(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_control() || c == ':' { '?' } else { c })
        .collect()
}
