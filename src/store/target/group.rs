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
    let bad = |why: &str| {
        Error::Usage(format!(
            "invalid Redis URL '{}': {why}",
            redact_unparsed(raw)
        ))
    };
    let url = GroupUrl::cut(raw);
    if url.hosts.iter().any(|h| h.is_empty()) {
        return Err(bad("expected host:port[,host:port…] after ://"));
    }
    let (master, db) = url.master_and_db(group).map_err(bad)?;
    let parsed = url.parse_hosts(group, db)?;
    let (endpoint, path) = endpoint(&parsed, master, db);
    Ok(Target {
        endpoint,
        display: display(url.scheme, &parsed, &path),
        namespace: parsed[0].namespace.clone(),
        tls: None,
        min_replicas: 0,
        replicas: None,
    })
}

/// A multi-host URL cut into its parts, by hand: `url` cannot parse a host
/// list.
struct GroupUrl<'a> {
    scheme: &'a str,
    /// `user:pass@`, or nothing.
    userinfo: String,
    hosts: Vec<&'a str>,
    path: &'a str,
    /// `?query`, or nothing.
    query: String,
}

impl GroupUrl<'_> {
    fn cut(raw: &str) -> GroupUrl<'_> {
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
        GroupUrl {
            scheme,
            userinfo,
            hosts: hosts.split(',').collect(),
            path,
            query,
        }
    }

    /// The master's name (a Sentinel group) and the db, from the path;
    /// `Err`: why the path is wrong.
    fn master_and_db(&self, group: Group) -> std::result::Result<(Option<&str>, &str), &str> {
        let segments: Vec<&str> = self.path.split('/').filter(|s| !s.is_empty()).collect();
        match (group, segments.as_slice()) {
            (Group::Sentinel, [master]) => Ok((Some(*master), "0")),
            (Group::Sentinel, [master, db]) => Ok((Some(*master), *db)),
            (Group::Sentinel, _) => Err("expected the master's name after the sentinels, as in \
                 redis+sentinel://host:26379/mymaster[/db]"),
            (Group::Cluster, []) => Ok((None, "0")),
            (Group::Cluster, _) => {
                Err("a Redis Cluster has no databases or path: redis+cluster://host:7000,host:7001")
            }
        }
    }

    /// Each host as a one-host `redis://` URL (with the group's default
    /// port when it has none), parsed as any other.
    fn parse_hosts(&self, group: Group, db: &str) -> Result<Vec<Parsed>> {
        let default_port = if group == Group::Sentinel {
            26379
        } else {
            6379
        };
        self.hosts
            .iter()
            .map(|host| {
                let host = if host.rsplit_once(':').is_some_and(|(_, p)| !p.contains(']')) {
                    host.to_string()
                } else {
                    format!("{host}:{default_port}")
                };
                let (userinfo, query) = (&self.userinfo, &self.query);
                parse_url(&format!("redis://{userinfo}{host}/{db}{query}"))
            })
            .collect()
    }
}

/// The sentinels of `master` (asked without the master's credentials), or
/// the nodes of a cluster; and the path to show.
fn endpoint(parsed: &[Parsed], master: Option<&str>, db: &str) -> (Endpoint, String) {
    let Some(master) = master else {
        let nodes = parsed.iter().map(|p| p.info.clone()).collect();
        return (Endpoint::Cluster { nodes }, String::new());
    };
    let sentinels = parsed
        .iter()
        .map(|p| {
            p.info
                .clone()
                .set_redis_settings(redis::RedisConnectionInfo::default().set_skip_set_lib_name())
        })
        .collect();
    let endpoint = Endpoint::Sentinel {
        sentinels,
        master: master.to_string(),
        node: parsed[0].info.redis_settings().clone(),
    };
    (endpoint, format!("/{master}/{db}"))
}

/// How the target is shown: every host with its port, the password hidden.
fn display(scheme: &str, parsed: &[Parsed], path: &str) -> String {
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
    format!(
        "{scheme}://{cred}{}{path}{shown_query}",
        host_list.join(",")
    )
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
