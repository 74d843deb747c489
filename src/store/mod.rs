//! Talking to one Redis deployment (a server, a Sentinel group's master, or a
//! Cluster): connecting with a deadline, reconnecting after a failure,
//! running our Lua scripts, and waiting for replicas.
//!
//! A [`Store`] (`server.rs`) and all its clones share at most one
//! multiplexed connection (`link.rs`). Any error that says the connection
//! is gone (I/O, timeout) drops it, and the next call, from whichever
//! clone, dials again, once for all of them: a keeper that renews every
//! second must survive a Redis restart without the caller knowing about
//! sockets. Every request carries a response timeout, so a SIGSTOPped
//! server turns into an error within
//! [`crate::timing::Timeouts::response`] and never into a hang; the one
//! exception, a connection of its own for a caller that bounds its waits
//! itself ([`Store::connection_without_timeout`]: `list`, by its
//! progress), is not the store's.
//!
//! Errors are sorted once (`errors.rs`) into the kinds the user sees
//! (unreachable, refused, wrong type, other), so that every subcommand
//! prints the same line for the same fault. The kind is the
//! [`crate::error::Error`] variant: callers decide whether to retry by it,
//! never by the words of a message.
//!
//! A write counts only once the replicas confirm it ([`Store::confirm`]):
//! `WAIT` for `--min-replicas` of them, failing below that; without the
//! option, for a majority of those connected, where a shortfall is only
//! reported (the caller logs and counts it), as the Go yaraus did. How many
//! are connected is `--redis-replicas`, or `INFO replication` asked once per
//! connection, outside our scripts: a restricted ACL user denied `INFO` then
//! needs only one of the two options, not a wider grant.
//!
//! A command the server's ACL denies (`NOPERM`) is refused with its name and
//! the way out (`yaraus acl-rules`), never retried as an outage.
//!
//! How a master's replicas stand ([`Replication`], `replication.rs`) is
//! read from the same `INFO replication`: a replica still waiting for its
//! full sync holds none of the master's keys, and a failover to it would
//! lose them all.
//!
//! Several independent masters are a [`Quorum`] of [`Node`]s, asked all at
//! once by a [`Round`]; [`reply`] reads what our scripts return.

mod connection;
mod credentials;
mod deadline;
mod errors;
mod link;
mod listen;
mod node;
mod probe;
pub mod quorum;
mod redis_error;
mod replication;
pub mod reply;
mod scan;
mod server;
mod target;

pub use connection::Connection;
pub use credentials::Password;
pub use deadline::waits_end_by;
pub use errors::classify;
pub use listen::{Heard, Listener};
pub use node::{Fitness, Node};
pub use quorum::{Quorum, Replies, Round, majority};
pub(crate) use redis_error::is_denied;
pub use redis_error::script_error;
pub use replication::{Replica, ReplicaState, Replication, Role};
pub use scan::{keys_under, keys_under_every_master};
pub use server::{Replicated, Store, invoke};
pub use target::{ConnectOptions, Target, Tls, split_urls};
