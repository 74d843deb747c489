//! Listing the keys under a prefix with `SCAN`, which never blocks the
//! server the way `KEYS` does: each step is bounded, and the pattern is
//! matched on the server. Used by the surveys that must find keys a node
//! lost by asking the others (`seq::census`, `health`), and by a run that
//! must know whether a pool it would make has shards already (a Cluster's
//! every master walked).

use super::redis_error::is_denied;
use super::server::Store;
use crate::error::Result;

/// Keys asked for per `SCAN` step.
const SCAN_COUNT: usize = 1000;

/// Every key of `store` that starts with `prefix` (its glob characters
/// taken literally).
pub async fn keys_under(store: &mut Store, prefix: &str) -> Result<Vec<String>> {
    let pattern = format!("{}*", glob_escaped(prefix));
    let mut keys = Vec::new();
    let mut cursor: u64 = 0;
    loop {
        let (next, batch): (u64, Vec<String>) = store.query(&scan(cursor, &pattern)).await?;
        keys.extend(batch);
        if next == 0 {
            return Ok(keys);
        }
        cursor = next;
    }
}

/// Every key that starts with `prefix` on every master of a Cluster (each
/// master walked with its own cursor), or on the one server; `None` when
/// the ACL denies the user `SCAN` (rules made before a caller needed it).
pub async fn keys_under_every_master(
    store: &mut Store,
    prefix: &str,
) -> Result<Option<Vec<String>>> {
    let pattern = format!("{}*", glob_escaped(prefix));
    let mut conn = store.connection().await?;
    let firsts = match conn.on_every_master(scan(0, &pattern)).await {
        Ok(firsts) => firsts,
        Err(e) if is_denied(&e) => return Ok(None),
        Err(e) => return Err(store.fail(e)),
    };
    let mut keys = Vec::new();
    for (addr, reply) in firsts {
        let mut reply = reply;
        loop {
            let (next, batch): (u64, Vec<String>) =
                redis::from_redis_value(reply).map_err(|e| store.fail(e.into()))?;
            keys.extend(batch);
            if next == 0 {
                break;
            }
            reply = match conn.on_node(&addr, scan(next, &pattern)).await {
                Ok(reply) => reply,
                Err(e) => return Err(store.fail(e)),
            };
        }
    }
    Ok(Some(keys))
}

/// `SCAN cursor MATCH pattern COUNT …`.
fn scan(cursor: u64, pattern: &str) -> redis::Cmd {
    let mut cmd = redis::cmd("SCAN");
    cmd.arg(cursor)
        .arg("MATCH")
        .arg(pattern)
        .arg("COUNT")
        .arg(SCAN_COUNT);
    cmd
}

/// `text` with the glob characters of `SCAN MATCH` escaped.
fn glob_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_characters_are_taken_literally() {
        assert_eq!(glob_escaped("a*b[c]?\\"), "a\\*b\\[c\\]\\?\\\\");
    }
}
