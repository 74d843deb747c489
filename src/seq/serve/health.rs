//! Readiness: whether this server can hand out ids now, which `PING`
//! cannot tell (it answers `PONG` while two nodes of three are down and
//! every `INCR` fails).
//!
//! A task checks every node, every [`PROBE_EVERY`], as a round needs it
//! ([`crate::store::Node::recheck`]): that it answers within a round's bound
//! ([`Quorum::round_timeout`]), takes our password, and, where required,
//! still keeps every write (its settings are read again each time, so a
//! `CONFIG SET appendfsync everysec` is found within a probe). What the
//! probe finds is shared with the rounds: a node found not durable is not
//! asked to vote until a probe finds it durable again, and a node that
//! refuses us, or whose connection broke, costs its vote, not the round.
//! The server is *ready* when a majority of the nodes passed the last
//! probe. `INFO health` reports it (`ready:1`/`ready:0`, each node's state,
//! how old the probe is); each change of readiness, and of a node's state
//! with its reason, is one log line, so that an operator sees when and why.
//!
//! Why a probe and not the outcome of the last round: an idle server has
//! no rounds, and a load balancer must know before it sends a client.
//! Why `PING` keeps answering `PONG` (a liveness answer; Redis answers `-LOADING` or `-MASTERDOWN` instead): a liveness
//! check that failed while the nodes are away would have the server
//! restarted, which cannot bring a node back and drops every client; and
//! client pools that `PING` a connection before use (redis-py's
//! `health_check_interval`) would tear down connections that `GET`, `INFO`
//! and the transactions' replies still use. docs/seq.md, "Health", says
//! what to probe from Kubernetes or a load balancer.
//!
//! Ready is a statement about the last probe, not a promise about the next
//! round: a node may fail between the two. The round itself never relies
//! on it.

use super::metrics::ServeMetrics;
use crate::store::{Fitness, Quorum};
use crate::timing::serve::PROBE_EVERY;
use std::fmt::Write;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;
use tokio::sync::watch;

/// What the last probe found of one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeState {
    /// Not probed yet.
    Unknown,
    /// Answering, and durable where required: it votes.
    Ok,
    /// No answer within the bound, or no connection.
    Down,
    /// Answers, but does not persist every write: it never votes.
    NotDurable,
    /// Answers with a refusal (a wrong password, an ACL) or an error.
    Refused,
}

impl NodeState {
    fn name(self) -> &'static str {
        match self {
            NodeState::Unknown => "unknown",
            NodeState::Ok => "ok",
            NodeState::Down => "down",
            NodeState::NotDurable => "not_durable",
            NodeState::Refused => "refused",
        }
    }
}

/// The readiness the last probe found; shared by the prober and `INFO`.
pub struct Health {
    labels: std::sync::Arc<[String]>,
    majority: usize,
    state: Mutex<State>,
    /// `/readyz` of `--metrics-listen` follows `ready`.
    metrics: ServeMetrics,
}

struct State {
    nodes: Vec<NodeState>,
    /// When the last probe ended.
    checked: Option<Instant>,
    ready: bool,
    /// When `ready` last changed (or the server started).
    since: Instant,
}

impl Health {
    pub fn new(quorum: &Quorum, metrics: ServeMetrics) -> Health {
        Health {
            metrics,
            labels: quorum.labels(),
            majority: quorum.majority(),
            state: Mutex::new(State {
                nodes: vec![NodeState::Unknown; quorum.len()],
                checked: None,
                ready: false,
                since: Instant::now(),
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a probe; logs a change of readiness, and of a node's state
    /// with the reason.
    fn update(&self, found: Vec<(NodeState, Option<String>)>) {
        let nodes: Vec<NodeState> = found.iter().map(|(s, _)| *s).collect();
        let ok = nodes.iter().filter(|s| **s == NodeState::Ok).count();
        let ready = ok >= self.majority;
        let mut state = self.state();
        let first = state.checked.is_none();
        for (i, (now, why)) in found.iter().enumerate() {
            let before = state.nodes.get(i).copied().unwrap_or(NodeState::Unknown);
            if *now == before || (first && *now == NodeState::Ok) {
                continue;
            }
            let label = &self.labels[i];
            match (now, why) {
                (NodeState::Ok, _) => log::info!("seq serve: {label} votes again"),
                (_, Some(why)) => {
                    log::warn!("seq serve: {label} does not vote ({}): {why}", now.name())
                }
                (_, None) => log::warn!("seq serve: {label} does not vote ({})", now.name()),
            }
        }
        if ready != state.ready || first {
            let summary = self.summary(&nodes);
            if ready {
                log::info!(
                    "seq serve: ready: {ok} of {} nodes answer ({summary})",
                    nodes.len()
                );
            } else {
                log::warn!(
                    "seq serve: not ready, every INCR fails until a majority ({}) answers: \
                     {ok} of {} nodes answer ({summary})",
                    self.majority,
                    nodes.len()
                );
            }
            if ready != state.ready {
                state.since = Instant::now();
            }
        }
        state.ready = ready;
        self.metrics.set_ready(ready);
        self.metrics.nodes(ok, nodes.len());
        state.nodes = nodes;
        state.checked = Some(Instant::now());
    }

    fn summary(&self, nodes: &[NodeState]) -> String {
        self.labels
            .iter()
            .zip(nodes)
            .map(|(label, s)| format!("{label} {}", s.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The `# Health` section of `INFO`.
    pub fn render(&self, out: &mut String) {
        let state = self.state();
        let ok = state.nodes.iter().filter(|s| **s == NodeState::Ok).count();
        let _ = write!(
            out,
            "# Health\r\nready:{}\r\nready_since_seconds:{}\r\nnodes:{}\r\nnodes_ok:{ok}\r\n\
             majority:{}\r\nlast_probe_ms_ago:{}\r\nprobe_interval_ms:{}\r\n",
            u8::from(state.ready),
            state.since.elapsed().as_secs(),
            state.nodes.len(),
            self.majority,
            state.checked.map_or(-1, |t| t.elapsed().as_millis() as i64),
            PROBE_EVERY.as_millis(),
        );
        for (i, (label, s)) in self.labels.iter().zip(&state.nodes).enumerate() {
            let _ = write!(
                out,
                "node{i}:addr={},state={}\r\n",
                printable(label),
                s.name()
            );
        }
        out.push_str("\r\n");
    }
}

/// A label as it can stand in an `INFO` field: no line breaks, no `,`.
fn printable(label: &str) -> String {
    label
        .chars()
        .map(|c| if c.is_control() || c == ',' { '?' } else { c })
        .collect()
}

/// Probes the nodes every [`PROBE_EVERY`] until `stop` changes.
pub async fn probe_forever(
    health: std::sync::Arc<Health>,
    mut quorum: Quorum,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let nodes = tokio::select! {
            nodes = probe(&mut quorum) => nodes,
            _ = stop.changed() => return,
        };
        health.update(nodes);
        tokio::select! {
            () = tokio::time::sleep(PROBE_EVERY) => {}
            _ = stop.changed() => return,
        }
    }
}

/// One probe of every node ([`Node::recheck`]), each bounded by a round's
/// bound: what it finds is also what the rounds go by.
async fn probe(quorum: &mut Quorum) -> Vec<(NodeState, Option<String>)> {
    let replies = quorum
        .round(|node| async move { Ok(node.recheck().await) })
        .all()
        .await;
    replies
        .into_iter()
        .map(|reply| match reply {
            Ok(Fitness::Fit) => (NodeState::Ok, None),
            Ok(Fitness::NotDurable(why)) => (NodeState::NotDurable, Some(why)),
            Ok(Fitness::Refused(why)) => (NodeState::Refused, Some(why)),
            Ok(Fitness::Down(why)) => (NodeState::Down, Some(why)),
            Err(e) => (NodeState::Down, Some(e.to_string())),
        })
        .collect()
}
