//! Listing the keys under a prefix with `SCAN`, which never blocks the
//! server the way `KEYS` does: each step is bounded, and the pattern is
//! matched on the server. Used by the surveys that must find keys a node
//! lost by asking the others (`seq::census`, `health`).

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
        let mut cmd = redis::cmd("SCAN");
        cmd.arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(SCAN_COUNT);
        let (next, batch): (u64, Vec<String>) = store.query(&cmd).await?;
        keys.extend(batch);
        if next == 0 {
            return Ok(keys);
        }
        cursor = next;
    }
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
