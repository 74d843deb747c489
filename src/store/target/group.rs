//! The URLs that name several hosts: a Sentinel group
//! (`redis+sentinel://h1:26379,h2:26379/MASTER[/db]`, or `--sentinel MASTER`
//! with plain URLs of the sentinels) and a Cluster
//! (`redis+cluster://h1:7000,h2:7001`). `url` cannot parse a host list, so
//! each host becomes a one-host `redis://` URL, parsed as any other, and the
//! pieces are put together again.

use super::{Endpoint, Parsed, Target, parse_url, redact_unparsed};
use crate::base::setting::Setting;
use crate::error::{Error, Result};

pub(super) const SENTINEL_SCHEME: &str = "redis+sentinel";
pub(super) const CLUSTER_SCHEME: &str = "redis+cluster";

/// Splits a comma-separated list of URLs. A piece without `scheme://`
/// belongs to the URL before it (`redis+sentinel://h1:26379,h2:26379/m`).
pub fn split_urls(list: &[String]) -> Vec<String> {
    let mut urls: Vec<String> = Vec::new();
    for piece in list.iter().flat_map(|l| l.split(',')) {
        match urls.last_mut() {
            Some(last) if !piece.contains("://") => {
                last.push(',');
                last.push_str(piece);
            }
            _ => urls.push(piece.to_string()),
        }
    }
    urls
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Group {
    Sentinel,
    Cluster,
}

/// `redis+sentinel://[cred@]h1:p1[,h2:p2…]/MASTER[/db][?query]` and
/// `redis+cluster://[cred@]h1:p1[,h2:p2…][/][?query]`.
pub(super) fn parse_group(raw: &str, group: Group) -> Result<Target> {
    let (scheme, after) = raw.split_once("://").unwrap_or((raw, ""));
    let end = after.find(['/', '?']).unwrap_or(after.len());
    let (authority, tail) = after.split_at(end);
    let (userinfo, hosts) = match authority.rsplit_once('@') {
        Some((u, h)) => (format!("{u}@"), h),
        None => (String::new(), authority),
    };
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, format!("?{q}")),
        None => (tail, String::new()),
    };
    let bad = |why: &str| {
        Error::Usage(format!(
            "invalid Redis URL '{}': {why}",
            redact_unparsed(raw)
        ))
    };
    let hosts: Vec<&str> = hosts.split(',').collect();
    if hosts.iter().any(|h| h.is_empty()) {
        return Err(bad("expected host:port[,host:port…] after ://"));
    }
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (master, db) = match (group, segments.as_slice()) {
        (Group::Sentinel, [master]) => (Some(*master), "0"),
        (Group::Sentinel, [master, db]) => (Some(*master), *db),
        (Group::Sentinel, _) => {
            return Err(bad(
                "expected the master's name after the sentinels, as in \
                 redis+sentinel://host:26379/mymaster[/db]",
            ));
        }
        (Group::Cluster, []) => (None, "0"),
        (Group::Cluster, _) => {
            return Err(bad(
                "a Redis Cluster has no databases or path: redis+cluster://host:7000,host:7001",
            ));
        }
    };
    let mut parsed = Vec::new();
    for host in &hosts {
        let default_port = if group == Group::Sentinel {
            26379
        } else {
            6379
        };
        let host = if host.rsplit_once(':').is_some_and(|(_, p)| !p.contains(']')) {
            host.to_string()
        } else {
            format!("{host}:{default_port}")
        };
        parsed.push(parse_url(&format!("redis://{userinfo}{host}/{db}{query}"))?);
    }
    let first = &parsed[0];
    let host_list: Vec<String> = parsed
        .iter()
        .map(|p| {
            format!(
                "{}:{}",
                p.url.host_str().unwrap_or("?"),
                p.url.port().unwrap_or(0)
            )
        })
        .collect();
    let cred = match (first.url.username(), first.url.password()) {
        ("", None) => String::new(),
        (user, None) => format!("{user}@"),
        (user, Some(_)) => format!("{user}:***@"),
    };
    let shown_query = first
        .display
        .split_once('?')
        .map(|(_, q)| format!("?{q}"))
        .unwrap_or_default();
    let (endpoint, path) = match master {
        Some(master) => {
            let sentinels = parsed
                .iter()
                .map(|p| {
                    p.info.clone().set_redis_settings(
                        redis::RedisConnectionInfo::default().set_skip_set_lib_name(),
                    )
                })
                .collect();
            let endpoint = Endpoint::Sentinel {
                sentinels,
                master: master.to_string(),
                node: first.info.redis_settings().clone(),
            };
            (endpoint, format!("/{master}/{db}"))
        }
        None => {
            let nodes = parsed.iter().map(|p| p.info.clone()).collect();
            (Endpoint::Cluster { nodes }, String::new())
        }
    };
    Ok(Target {
        endpoint,
        display: format!(
            "{scheme}://{cred}{}{path}{shown_query}",
            host_list.join(",")
        ),
        namespace: first.namespace.clone(),
        tls: None,
        min_replicas: 0,
        replicas: None,
    })
}

/// The `redis://host:port` URLs `raws`, taken as the sentinels of `master`.
pub(super) fn sentinel_of(raws: &[String], master: &str) -> Result<Target> {
    if master.is_empty() || master.contains(['/', '?', ',']) {
        return Err(Error::Usage(format!(
            "{} {master:?}: give the master's name as the sentinels know it",
            Setting::Sentinel
        )));
    }
    let mut hosts = Vec::new();
    let mut first: Option<Parsed> = None;
    for raw in raws {
        let parsed = parse_url(raw.trim())?;
        let redis::ConnectionAddr::Tcp(host, port) = parsed.info.addr() else {
            return Err(Error::Usage(format!(
                "{} needs redis://host:port URLs of the sentinels, not '{}'",
                Setting::Sentinel,
                parsed.display
            )));
        };
        hosts.push(format!("{host}:{port}"));
        first.get_or_insert(parsed);
    }
    let first = first
        .ok_or_else(|| Error::Usage(format!("no Redis server given ({} URL)", Setting::Redis)))?;
    let cred = match (first.url.username(), first.url.password()) {
        ("", None) => String::new(),
        (user, None) => format!("{user}@"),
        (user, Some(_)) => format!("{user}:{}@", first.url.password().unwrap_or("")),
    };
    let query = first
        .url
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    let ns = first
        .namespace
        .as_ref()
        .map(|ns| {
            let sep = if query.is_empty() { '?' } else { '&' };
            format!(
                "{sep}ns={}",
                url::form_urlencoded::byte_serialize(ns.as_bytes()).collect::<String>()
            )
        })
        .unwrap_or_default();
    parse_group(
        &format!(
            "{SENTINEL_SCHEME}://{cred}{}/{master}/{}{query}{ns}",
            hosts.join(","),
            first.info.redis_settings().db()
        ),
        Group::Sentinel,
    )
}
