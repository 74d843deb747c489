//! The process's listening ports (`seq serve`'s RESP port and the metrics
//! HTTP port): how often a failing accept is said, and how long an HTTP
//! client may take.
//!
//! Who connects to the metrics port is a Prometheus or two, a Kubernetes
//! probe, an operator's curl, each for milliseconds: bounds far above what
//! they need cost them nothing, and keep a client that sends nothing from
//! holding a connection forever.

use std::time::Duration;

/// At most one "cannot accept" warning this often, with the count of the
/// others: out of file descriptors, every accept fails, many times a second.
pub const ACCEPT_WARNING_EVERY: Duration = Duration::from_secs(10);

/// How long an HTTP client has to send its request's headers.
pub const HTTP_HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// Longest life of one HTTP connection (keep-alive included).
pub const HTTP_CONNECTION_LIMIT: Duration = Duration::from_secs(60);
