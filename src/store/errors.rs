//! How Redis's errors read to yaraus: an outage to wait out, a refusal to
//! report (a password, an ACL), a server that is not Redis, or something
//! unexpected, each message naming the deployment ([`classify`]). What one
//! error says by itself (its words, an ACL's refusal, one of our scripts'
//! own `YARAUS_…` codes) is read in redis_error.rs.

use super::probe;
use super::redis_error::{is_denied, said};
use super::target::Target;
use crate::base::setting::Setting;
use crate::error::Error;

/// The one line for a server whose reply is not RESP, with its first line
/// when it was asked again ([`probe::first_line`]).
pub(super) fn not_redis(target: &Target, answer: Option<String>) -> Error {
    let at = probe::address(target);
    let answered = answer.map_or(String::new(), |line| format!(" (it answered \"{line}\")"));
    Error::Refused(format!(
        "not a Redis server at {at}{answered}; check the address in {}",
        Setting::Redis
    ))
}

/// The error codes of a server that cannot take requests for a while: a
/// replica (or a demoted master), a master cut off from its replicas or
/// still loading its data, `min-replicas-to-write` unmet, a Cluster
/// without all its slots or in a resharding, a script running long.
const PASSING: [&str; 7] = [
    "READONLY",
    "MASTERDOWN",
    "LOADING",
    "NOREPLICAS",
    "CLUSTERDOWN",
    "TRYAGAIN",
    "BUSY",
];

/// Sorts a redis-rs error into what the user must be told, and what the
/// retry policy ([`crate::claim::retry`]) does: [`Error::Unavailable`] is
/// what passes (waited out), the rest what is misconfigured (at once).
pub fn classify(target: &Target, e: redis::RedisError) -> Error {
    let d = target.display();
    if e.is_timeout() {
        return Error::Unavailable(format!("Redis at {d} did not answer in time"));
    }
    if e.kind() == redis::ErrorKind::MasterNameNotFoundBySentinel {
        return Error::Unavailable(format!(
            "no sentinel of {d} names a master that answers as one now (a failover in \
             progress, or the sentinels out of reach)"
        ));
    }
    if e.kind() == redis::ErrorKind::Parse {
        return not_redis(target, None);
    }
    if let Some(tls) = tls_failure(&e) {
        return Error::Refused(format!(
            "the TLS handshake with {d} failed: {tls}; check the server's certificate and {}",
            Setting::Tls
        ));
    }
    if e.kind() == redis::ErrorKind::ClusterConnectionNotFound {
        return Error::Unavailable(format!(
            "no node of the Redis Cluster {d} answers: {}",
            said(&e)
        ));
    }
    if e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() {
        return Error::Unavailable(format!("cannot reach Redis at {d}: {}", said(&e)));
    }
    // A server that wants a password answers a long command (more than 10
    // arguments) from a client that has not authenticated with "Protocol
    // error: unauthenticated multibulk length", and closes the connection.
    if e.kind() == redis::ErrorKind::AuthenticationFailed
        || matches!(e.code(), Some("NOAUTH") | Some("WRONGPASS"))
        || e.to_string().contains("Protocol error: unauthenticated")
    {
        return Error::Refused(format!("Redis at {d} refused authentication: {}", said(&e)));
    }
    if e.code() == Some("WRONGTYPE") {
        return Error::State(format!("Redis at {d}: {}", said(&e)));
    }
    if is_denied(&e) {
        return Error::Refused(format!(
            "Redis at {d} denies this user something yaraus needs ({}); give the user the \
             rules that `yaraus acl-rules` prints for this command line",
            said(&e)
        ));
    }
    if e.code().is_some_and(|code| PASSING.contains(&code)) {
        return Error::Unavailable(format!("Redis at {d} cannot take writes now: {}", said(&e)));
    }
    Error::Redis(format!("Redis at {d}: {}", said(&e)))
}

/// The TLS failure behind `e`, if it is one (an untrusted or refused
/// certificate): a mistake of configuration, not an outage.
fn tls_failure(e: &redis::RedisError) -> Option<String> {
    type Shared = std::sync::Arc<dyn std::error::Error + Send + Sync>;
    let mut source = std::error::Error::source(e);
    while let Some(mut err) = source {
        // redis-rs keeps an I/O error behind an `Arc`, and an I/O error its
        // cause behind `get_ref` (its `source` skips it).
        if let Some(shared) = err.downcast_ref::<Shared>() {
            err = shared.as_ref();
        }
        let inner = err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .map(|inner| inner as &(dyn std::error::Error + 'static));
        for candidate in [Some(err), inner].into_iter().flatten() {
            if let Some(tls) = candidate.downcast_ref::<rustls::Error>() {
                return Some(tls.to_string());
            }
        }
        source = err.source();
    }
    None
}
