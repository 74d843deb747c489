//! The keys of one index: a config hash, and per interval a counter, a
//! rank hash and a transition set, which the scripts let expire after
//! [`crate::timing::index::KEEP`] intervals.

use crate::error::Result;

/// The keys of one index, `NS:index:{NAME}…`: the braces keep them in one
/// Cluster slot, and a NAME cannot contain them, so no two names' keys meet.
#[derive(Clone, Debug)]
pub struct IndexKeys {
    prefix: String,
    name: String,
}

impl IndexKeys {
    /// The keys of `name` in namespace `ns`; the name is checked first.
    pub fn new(ns: &str, name: &str) -> Result<IndexKeys> {
        crate::base::keys::check_tagged_name("index", name)?;
        Ok(IndexKeys {
            prefix: format!("{ns}:index:{{{name}}}"),
            name: name.to_string(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Hash: `interval` (ms) and `last` (the latest interval ticked).
    pub fn config(&self) -> String {
        self.prefix.clone()
    }

    /// The seed's counter of interval `n`.
    pub fn count(&self, n: u64) -> String {
        format!("{}:{n}", self.prefix)
    }

    /// Hash: client id → its rank in `n`.
    pub fn who(&self, n: u64) -> String {
        format!("{}:{n}:who", self.prefix)
    }

    /// Set: the replicas of `n-1` settled for `n`.
    pub fn transition(&self, n: u64) -> String {
        format!("{}:transition:{n}", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn names_are_one_word_without_braces() {
        assert!(IndexKeys::new("ns", "mail-sender").is_ok());
        assert!(IndexKeys::new("ns", "a:b/c.d").is_ok());
        for bad in ["", "two words", "tab\there", "{x}", "a}b", "nl\n"] {
            let e = IndexKeys::new("ns", bad).unwrap_err();
            assert!(matches!(e, Error::Usage(_)), "{bad:?}: {e}");
        }
    }

    #[test]
    fn keys_share_one_hash_tag() {
        let k = IndexKeys::new("ns", "mail").unwrap();
        assert_eq!(k.config(), "ns:index:{mail}");
        assert_eq!(k.count(7), "ns:index:{mail}:7");
        assert_eq!(k.who(7), "ns:index:{mail}:7:who");
        assert_eq!(k.transition(7), "ns:index:{mail}:transition:7");
    }
}
