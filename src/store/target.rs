//! Where Redis is: parsing the `--redis` URL, and printing it without secrets.
//!
//! Three deployments, one [`Target`] each:
//!
//! * **one server**, in the URL forms of redis-rs
//!   (`redis://[user][:password@]host[:port][/db]`, `rediss://` for TLS,
//!   `unix:///path` and `redis+unix:///path?db=N&pass=P`);
//! * **a Sentinel-managed group**:
//!   `redis+sentinel://[user:pass@]host:26379[,host2:26379]/MASTERNAME[/db]`,
//!   or `--sentinel MASTERNAME` with plain `redis://` URLs of the sentinels.
//!   The credentials and db are the master's; the sentinels are asked without
//!   them. The master is looked up on every dial (see [`super::Store`]);
//! * **Redis Cluster**: `redis+cluster://[user:pass@]host:7000[,host:7001…]`,
//!   any reachable nodes (the client learns the rest from them). Keys change
//!   in cluster mode so that each pool's keys share one hash tag
//!   ([`Target::is_cluster`]).
//!
//! Plus one query parameter of our own, `ns=`, the namespace, as the Go yaraus
//! reads it. The namespace is taken out before the URL reaches redis-rs. Any
//! other parameter redis-rs does not read is refused, as a misspelling.
//!
//! A list of URLs may be given with commas (`--redis a,b`); a piece that does
//! not start with a scheme continues the URL before it, which is how the host
//! lists of the Sentinel and Cluster forms survive ([`split_urls`]).
//!
//! Every URL that appears in a log line or an error goes through
//! [`Target::display`], which replaces passwords with `***`: a password must
//! never reach a terminal, a CI log or a bug report.

mod group;

use super::credentials::Password;

pub use group::split_urls;

use crate::base::setting::Setting;
use crate::error::{Error, Result};
use group::{CLUSTER_SCHEME, Group, SENTINEL_SCHEME, parse_group, sentinel_of};
use redis::IntoConnectionInfo;
use std::sync::Arc;

/// A parsed `--redis` URL, with the connection options that apply to it.
/// Its `Debug` is its [`display`](Target::display): no password.
#[derive(Clone)]
pub struct Target {
    endpoint: Endpoint,
    display: String,
    namespace: Option<String>,
    tls: Option<Arc<Tls>>,
    min_replicas: u32,
    replicas: Option<u32>,
}

/// How to reach the data: one server, the master a Sentinel group names, or
/// a Cluster.
#[derive(Clone, Debug)]
pub(crate) enum Endpoint {
    Server(redis::ConnectionInfo),
    Sentinel {
        sentinels: Vec<redis::ConnectionInfo>,
        master: String,
        /// The master's credentials and db (its address is the sentinels' to say).
        node: redis::RedisConnectionInfo,
    },
    Cluster {
        nodes: Vec<redis::ConnectionInfo>,
    },
}

/// Client-side TLS material for `rediss://` (`--tls-ca`, `--tls-cert`,
/// `--tls-key`, `--tls-insecure`), read once at start-up. Its `Debug` shows
/// what is there, never the bytes (the client key is a secret).
#[derive(Clone, Default)]
pub struct Tls {
    /// PEM certificates of the authorities to trust instead of the system's.
    pub ca: Option<Vec<u8>>,
    /// PEM client certificate and key, for servers that require them.
    pub client: Option<(Vec<u8>, Vec<u8>)>,
    /// Accept any server certificate (testing only).
    pub insecure: bool,
}

/// What applies to every `--redis` URL besides the URL itself.
#[derive(Clone, Debug, Default)]
pub struct ConnectOptions {
    /// `--sentinel MASTERNAME`: the URLs are sentinels of one group.
    pub sentinel: Option<String>,
    pub tls: Option<Tls>,
    /// `--min-replicas N`: writes count only once N replicas have them.
    pub min_replicas: u32,
    /// `--redis-replicas N`: the master has N replicas (not asked with INFO).
    pub replicas: Option<u32>,
}

const SCHEMES: &[&str] = &["redis", "rediss", "unix", "redis+unix", "valkey", "valkeys"];

impl Target {
    /// Parses one URL; on failure the error names the URL with its password hidden.
    pub fn parse(raw: &str) -> Result<Target> {
        Target::parse_with(raw, &ConnectOptions::default())
    }

    /// [`parse`](Self::parse), with the options of the command line.
    pub fn parse_with(raw: &str, options: &ConnectOptions) -> Result<Target> {
        let raw = raw.trim();
        let scheme = raw.split("://").next().unwrap_or("");
        let mut target = match (scheme, &options.sentinel) {
            (SENTINEL_SCHEME, _) => parse_group(raw, Group::Sentinel)?,
            (CLUSTER_SCHEME, _) => parse_group(raw, Group::Cluster)?,
            (_, Some(master)) => sentinel_of(&[raw.to_string()], master)?,
            (_, None) => parse_server(raw)?,
        };
        target.apply(options)?;
        Ok(target)
    }

    /// Several `redis://` URLs that are the sentinels of one group
    /// (`--sentinel MASTERNAME`): one target.
    pub fn sentinels(raws: &[String], options: &ConnectOptions) -> Result<Target> {
        let master = options.sentinel.as_deref().unwrap_or("mymaster");
        let mut target = sentinel_of(raws, master)?;
        target.apply(options)?;
        Ok(target)
    }

    fn apply(&mut self, options: &ConnectOptions) -> Result<()> {
        self.min_replicas = options.min_replicas;
        self.replicas = options.replicas;
        if let Some(tls) = &options.tls {
            let uses_tls = match &self.endpoint {
                Endpoint::Server(info) => {
                    matches!(info.addr(), redis::ConnectionAddr::TcpTls { .. })
                }
                _ => false,
            };
            if !uses_tls {
                return Err(Error::Usage(format!(
                    "{} options need a rediss:// URL, not '{}'",
                    Setting::Tls,
                    self.display
                )));
            }
            if tls.insecure
                && let Endpoint::Server(info) = &mut self.endpoint
                && let redis::ConnectionAddr::TcpTls { host, port, .. } = info.addr().clone()
            {
                *info = info.clone().set_addr(redis::ConnectionAddr::TcpTls {
                    host,
                    port,
                    insecure: true,
                    tls_params: None,
                });
            }
            self.tls = Some(Arc::new(tls.clone()));
        }
        Ok(())
    }

    /// The URL as it may be shown to people: passwords replaced by `***`.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// The namespace given as `?ns=` in the URL, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// Whether this is a Redis Cluster: keys that one script touches must
    /// then share a hash tag.
    pub fn is_cluster(&self) -> bool {
        matches!(self.endpoint, Endpoint::Cluster { .. })
    }

    /// Whether the master is found through Sentinel.
    pub fn is_sentinel(&self) -> bool {
        matches!(self.endpoint, Endpoint::Sentinel { .. })
    }

    /// The database number (0 in a Cluster).
    pub fn db(&self) -> i64 {
        match &self.endpoint {
            Endpoint::Server(info) => info.redis_settings().db(),
            Endpoint::Sentinel { node, .. } => node.db(),
            Endpoint::Cluster { .. } => 0,
        }
    }

    /// `--min-replicas`: how many replicas must confirm a write for it to count.
    pub fn min_replicas(&self) -> u32 {
        self.min_replicas
    }

    /// `--redis-replicas`: how many replicas the master has, as the
    /// operator declared it; `None` to ask the server (`INFO replication`).
    pub fn declared_replicas(&self) -> Option<u32> {
        self.replicas
    }

    /// The password written in the URL (`user:password@`, or `?pass=`), if any.
    pub fn url_password(&self) -> Option<&str> {
        match &self.endpoint {
            Endpoint::Server(info) => info.redis_settings().password(),
            Endpoint::Sentinel { node, .. } => node.password(),
            Endpoint::Cluster { nodes } => nodes.first()?.redis_settings().password(),
        }
    }

    /// Logs in as `user` with `password` wherever the URL names no user or
    /// password of its own (the Sentinel form: the master; a Cluster: every
    /// node). A URL password beside an explicit one (`--redis-password-file`)
    /// is refused: one of the two is a mistake.
    pub fn set_credentials(
        &mut self,
        user: Option<&str>,
        password: Option<&Password>,
    ) -> Result<()> {
        if let (Some(_), Some(p)) = (self.url_password(), password)
            && p.is_explicit()
        {
            return Err(Error::Usage(format!(
                "two passwords for '{}': one in the URL and one from {}; keep one (the file \
                 keeps it out of the process list)",
                self.display,
                p.source()
            )));
        }
        let fill = |settings: &redis::RedisConnectionInfo| {
            let mut settings = settings.clone();
            if let Some(user) = user.filter(|_| settings.username().is_none()) {
                settings = settings.set_username(user);
            }
            match password {
                _ if settings.password().is_some() => {}
                Some(p) => settings = settings.set_password(p.secret()),
                // A user named without a password logs in with an empty one:
                // what a `nopass` user accepts, and a refusal (not a silent
                // login as `default`) for any other.
                None if settings.username().is_some() => {
                    settings = settings.set_password("");
                }
                None => {}
            }
            settings
        };
        let fill_info = |info: &redis::ConnectionInfo| {
            info.clone().set_redis_settings(fill(info.redis_settings()))
        };
        match &mut self.endpoint {
            Endpoint::Server(info) => *info = fill_info(info),
            Endpoint::Sentinel { node, .. } => *node = fill(node),
            Endpoint::Cluster { nodes } => {
                for info in nodes.iter_mut() {
                    *info = fill_info(info);
                }
            }
        }
        Ok(())
    }

    pub(crate) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    pub(crate) fn tls(&self) -> Option<&Tls> {
        self.tls.as_deref()
    }
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("ca", &self.ca.as_ref().map(|_| "<pem>"))
            .field("client", &self.client.as_ref().map(|_| "<pem, key>"))
            .field("insecure", &self.insecure)
            .finish()
    }
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Target({})", self.display)
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display)
    }
}

/// One server's URL, its namespace and its display form.
struct Parsed {
    info: redis::ConnectionInfo,
    url: url::Url,
    display: String,
    namespace: Option<String>,
}

fn parse_url(raw: &str) -> Result<Parsed> {
    let mut url = url::Url::parse(raw).map_err(|e| {
        Error::Usage(format!(
            "invalid Redis URL '{}': {e} (expected redis://host:port/db, rediss://…, \
             unix:///path/redis.sock, redis+sentinel://host:26379/MASTER or \
             redis+cluster://host:7000,host:7001)",
            redact_unparsed(raw)
        ))
    })?;
    if !SCHEMES.contains(&url.scheme()) {
        return Err(Error::Usage(format!(
            "invalid Redis URL '{}': unknown scheme '{}' (expected redis, rediss, unix, \
             redis+unix, redis+sentinel or redis+cluster)",
            redact(&url),
            url.scheme()
        )));
    }
    let mut namespace = None;
    let mut rest = Vec::new();
    for (k, v) in url.query_pairs() {
        // redis-rs ignores a parameter it does not know: a misspelt `ns`
        // would put the pool under the default namespace without a word.
        let known = known_parameters(url.scheme());
        if !known.contains(&k.as_ref()) {
            let hint = if matches!(k.as_ref(), "db" | "user" | "pass" | "password") {
                "; over TCP the db goes in the path and the user and password before the host, \
                 as in redis://user:password@host:6379/DB"
            } else {
                ""
            };
            return Err(Error::Usage(format!(
                "invalid Redis URL '{}': unknown query parameter '{k}' (known: {}){hint}",
                redact(&url),
                known.join(", ")
            )));
        }
        if k == "ns" {
            namespace = Some(v.into_owned());
        } else {
            rest.push((k.into_owned(), v.into_owned()));
        }
    }
    if rest.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(rest);
    }
    let display = redact(&url);
    if matches!(url.scheme(), "unix" | "redis+unix") && url.path().is_empty() {
        return Err(Error::Usage(format!(
            "invalid Redis URL '{display}': a unix URL needs a socket path, as in unix:///run/redis.sock"
        )));
    }
    let info = url.clone().into_connection_info().map_err(|e| {
        Error::Usage(format!(
            "invalid Redis URL '{display}': {}",
            super::redis_error::said(&e)
        ))
    })?;
    // CLIENT SETINFO costs a round trip on every connection (and an
    // error before Redis 7.2); a short-lived supervisor cannot afford it.
    let settings = info.redis_settings().clone().set_skip_set_lib_name();
    let info = info.set_redis_settings(settings);
    Ok(Parsed {
        info,
        url,
        display,
        namespace,
    })
}

fn parse_server(raw: &str) -> Result<Target> {
    let parsed = parse_url(raw)?;
    Ok(Target {
        endpoint: Endpoint::Server(parsed.info),
        display: parsed.display,
        namespace: parsed.namespace,
        tls: None,
        min_replicas: 0,
        replicas: None,
    })
}

/// The query parameters a URL of `scheme` may have: ours (`ns`), and those
/// redis-rs reads for it (a unix socket has no path left for the db).
fn known_parameters(scheme: &str) -> &'static [&'static str] {
    match scheme {
        "unix" | "redis+unix" => &["ns", "db", "user", "pass", "protocol"],
        _ => &["ns", "protocol"],
    }
}

/// Hides the password of a parsed URL, in the userinfo and in `pass=`.
fn redact(url: &url::Url) -> String {
    let mut url = url.clone();
    if url.password().is_some() {
        let _ = url.set_password(Some("***"));
    }
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| {
            let v = if k == "pass" || k == "password" {
                "***".to_string()
            } else {
                v.into_owned()
            };
            (k.into_owned(), v)
        })
        .collect();
    if !pairs.is_empty() {
        url.query_pairs_mut().clear().extend_pairs(pairs);
    }
    url.to_string()
}

/// Best effort for a URL that does not even parse: drop anything between
/// `://` and the last `@`, which is where a password would be.
fn redact_unparsed(raw: &str) -> String {
    match (raw.find("://"), raw.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}://***@{}", &raw[..s], &raw[at + 1..]),
        _ => raw.to_string(),
    }
}

#[cfg(test)]
mod tests;
