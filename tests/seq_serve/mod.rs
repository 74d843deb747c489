//! `yaraus seq serve` as a process, against real redis-servers that persist
//! every write, talked to over TCP by a raw RESP client (replies are
//! checked byte for byte: an integer is not a bulk string): the commands as
//! Redis answers them, AUTH, 64-bit ids at 2^63 and 2^64, 50 concurrent
//! clients and two servers on the same nodes (unique ids, real-time
//! order), a node killed and restarted from its AOF, a lost majority, bad
//! clients (garbage, a 1 GB bulk length, half a frame, too many
//! connections), SIGTERM under load, and the real redis-cli and
//! redis-benchmark.
//!
//! Nothing sleeps to let time pass: every wait is for an event (the port
//! in the log, a reply, a closed socket, an exit).
//!
//! # Layout
//!
//! * `client.rs`: the server as a process, the raw RESP client, and the
//!   uniqueness and real-time order check.
//! * `protocol.rs`: what one client sees: commands, AUTH, 64-bit ids,
//!   sequence names, pipelines (a GET sees the INCR before it) and the
//!   batch cap.
//! * `nodes.rs`: the Redis nodes behind it: concurrent clients and servers,
//!   a node killed or frozen, nodes that do not persist every write.
//! * `robustness.rs`: bad clients, the connection limit, SIGTERM.
//! * `hostile.rs`: clients that take more than their share: a transaction
//!   past the bound on replies, strangers holding every slot or never
//!   authenticating, passwords guessed by AUTH and HELLO AUTH.
//! * `io.rs`: how a connection reads and writes: requests cut across
//!   reads, 10,000 in one write, a client that reads none of its replies.
//! * `real_clients.rs`: redis-cli and redis-benchmark.
//! * `resp3.rs`: `HELLO 3` and the RESP3 replies, byte for byte.
//! * `multi.rs`: MULTI / EXEC / DISCARD, no id for what is not executed.
//! * `health.rs`: `INFO health` with nodes frozen and killed.
//! * `metrics.rs`: `--metrics-listen`: `/metrics`, `/readyz`, `/healthz`,
//!   hostile names, promtool.
//! * `metrics_bounds.rs`: retired sequences' series, the series bound, the
//!   metrics port's connection cap.
//! * `redis_py.rs`, `redis_rs.rs`, `node_clients.rs`: the client libraries
//!   with their defaults (scripts in `clients/`, installed where `libs.rs`
//!   says by scripts/install-test-tools.sh).

use crate::common;

mod client;
mod health;
mod hostile;
mod io;
mod libs;
mod metrics;
mod metrics_bounds;
mod multi;
mod node_clients;
mod node_faults;
mod nodes;
mod protocol;
mod real_clients;
mod redis_py;
mod redis_rs;
mod resp3;
mod robustness;

use client::{
    Call, Client, Reply, Serve, assert_unique_and_ordered, bulk, hammer, info_field, status,
};
use common::RedisServer;
use common::lock::masters;
use nix::sys::signal::Signal;
use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const KEY: &str = "yaraus:seq:orders";
