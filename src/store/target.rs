//! Where Redis is: parsing the `--redis` URL, and printing it without secrets.
//!
//! The URL forms are those of redis-rs (`redis://[user][:password@]host[:port][/db]`,
//! `rediss://` for TLS, `unix:///path` and `redis+unix:///path?db=N&pass=P`),
//! plus one query parameter of our own, `ns=`, the namespace, as the Go yaraus
//! reads it. The namespace is taken out before the URL reaches redis-rs.
//!
//! Every URL that appears in a log line or an error goes through
//! [`Target::display`], which replaces passwords with `***`: a password must
//! never reach a terminal, a CI log or a bug report.

use crate::error::{Error, Result};
use redis::IntoConnectionInfo;

/// A parsed `--redis` URL.
#[derive(Clone, Debug)]
pub struct Target {
    info: redis::ConnectionInfo,
    display: String,
    namespace: Option<String>,
}

const SCHEMES: &[&str] = &["redis", "rediss", "unix", "redis+unix", "valkey", "valkeys"];

impl Target {
    /// Parses one URL; on failure the error names the URL with its password hidden.
    pub fn parse(raw: &str) -> Result<Target> {
        let raw = raw.trim();
        let mut url = url::Url::parse(raw).map_err(|e| {
            Error::Usage(format!(
                "invalid Redis URL '{}': {e} (expected redis://host:port/db, rediss://…, or unix:///path/redis.sock)",
                redact_unparsed(raw)
            ))
        })?;
        if !SCHEMES.contains(&url.scheme()) {
            return Err(Error::Usage(format!(
                "invalid Redis URL '{}': unknown scheme '{}' (expected redis, rediss, unix or redis+unix)",
                redact(&url),
                url.scheme()
            )));
        }
        let mut namespace = None;
        let mut rest = Vec::new();
        for (k, v) in url.query_pairs() {
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
                e.detail().unwrap_or(&e.to_string())
            ))
        })?;
        // CLIENT SETINFO costs a round trip on every connection (and an
        // error before Redis 7.2); a short-lived supervisor cannot afford it.
        let settings = info.redis_settings().clone().set_skip_set_lib_name();
        let info = info.set_redis_settings(settings);
        Ok(Target {
            info,
            display,
            namespace,
        })
    }

    /// The URL as it may be shown to people: passwords replaced by `***`.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// The namespace given as `?ns=` in the URL, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    pub(crate) fn connection_info(&self) -> &redis::ConnectionInfo {
        &self.info
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display)
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
mod tests {
    use super::*;

    #[test]
    fn takes_the_namespace_out() {
        let t = Target::parse("redis://localhost:6379/0?ns=pool1").unwrap();
        assert_eq!(t.namespace(), Some("pool1"));
        assert_eq!(t.display(), "redis://localhost:6379/0");
    }

    #[test]
    fn hides_passwords() {
        let t = Target::parse("redis://user:s3cret@host:1/2?ns=x").unwrap();
        assert!(!t.display().contains("s3cret"), "{}", t.display());
        let t = Target::parse("redis+unix:///tmp/r.sock?pass=s3cret&db=1").unwrap();
        assert!(!t.display().contains("s3cret"), "{}", t.display());
        let e = Target::parse("redis://user:s3cret@ho st:1/").unwrap_err();
        assert!(!e.to_string().contains("s3cret"), "{e}");
        let e = Target::parse("redis://user:s3cret@host:1/notadb").unwrap_err();
        assert!(!e.to_string().contains("s3cret"), "{e}");
    }

    #[test]
    fn rejects_nonsense() {
        for bad in [
            "localhost:6379",
            "http://localhost",
            "redis://host:99999",
            "redis://host/abc",
            "",
        ] {
            assert!(
                matches!(Target::parse(bad), Err(Error::Usage(_))),
                "{bad} accepted"
            );
        }
    }

    #[test]
    fn accepts_every_documented_form() {
        for good in [
            "redis://localhost",
            "redis://:pw@127.0.0.1:6380/3",
            "rediss://example.com:6390",
            "unix:///run/redis.sock",
            "redis+unix:///run/redis.sock?db=2",
        ] {
            Target::parse(good).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
    }
}
