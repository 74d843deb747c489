//! Key names as Redis Cluster sees them.
//!
//! A Lua script may touch only keys of one slot, and Cluster hashes a key by
//! its hash tag (the text between the first `{` and the next `}`). So every
//! family of keys one script touches shares a tag: the pool's keys are
//! `{ns}:ids`, `{ns}:clients`, …; a sequence's, an index's and a hilo
//! sequence's carry their name in braces; a lock's fencing counter carries
//! the lock's key ([`companion_key`]). The same names work on a single
//! server, where the braces are plain characters.

use crate::error::{Error, Result};

/// Checks a NAME that goes inside a Cluster hash tag (`ns:WHAT:{NAME}:…`):
/// one word, not empty, no whitespace or control characters, no braces
/// (they delimit the tag). `what` names the subcommand in the message.
pub fn check_tagged_name(what: &str, name: &str) -> Result<()> {
    let bad = name
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || *c == '{' || *c == '}');
    match (name.is_empty(), bad) {
        (true, _) => Err(Error::Usage(format!("the {what} NAME must not be empty"))),
        (false, Some(c)) => Err(Error::Usage(format!(
            "the {what} NAME {name:?} contains {c:?}; use letters, digits and punctuation \
             other than braces, without spaces"
        ))),
        (false, None) => Ok(()),
    }
}

/// The part of `key` Redis Cluster hashes: the text between the first `{`
/// and the next `}` when that is not empty, else the whole key.
pub fn hash_tag(key: &str) -> &str {
    key.find('{')
        .and_then(|open| {
            let rest = &key[open + 1..];
            rest.find('}').map(|close| &rest[..close])
        })
        .filter(|tag| !tag.is_empty())
        .unwrap_or(key)
}

/// The key `{prefix}:{key}` of a companion of `key` (a lock's fencing
/// counter), which one script touches together with `key`. In a Cluster the
/// two must hash alike: when `key` has a hash tag the companion carries it
/// already; otherwise `key` is wrapped in braces (`ns:fencing:{deploy}`), and
/// a key whose braces would then confuse the tag is refused.
pub fn companion_key(prefix: &str, key: &str, cluster: bool) -> Result<String> {
    if !cluster || hash_tag(key) != key {
        return Ok(format!("{prefix}:{key}"));
    }
    if key.contains(['{', '}']) {
        return Err(Error::Usage(format!(
            "in Redis Cluster the key {key:?} cannot share a slot with its {prefix} counter: \
             its braces are not a hash tag; use a name without braces, or with one {{tag}}"
        )));
    }
    Ok(format!("{prefix}:{{{key}}}"))
}

/// The number of Redis Cluster hash slots.
pub const SLOTS: u16 = 16384;

/// The Cluster hash slot of `key`: CRC16 (XMODEM) of its hash tag, modulo
/// [`SLOTS`], as the Cluster specification defines it.
pub fn slot(key: &str) -> u16 {
    let mut crc: u16 = 0;
    for byte in hash_tag(key).bytes() {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc % SLOTS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_redis_clusters() {
        // The specification's check value, then redis-rs's own routing.
        assert_eq!(slot("123456789"), 0x31C3);
        for key in [
            "yaraus",
            "{t:shard:0.1}:ids",
            "a{b}c",
            "",
            "{}x",
            "\u{e9}t\u{e9}",
        ] {
            let ours = redis::cluster_routing::Slot::new(slot(key));
            assert_eq!(
                ours,
                Some(redis::cluster_routing::Slot::for_key(key)),
                "{key:?}"
            );
        }
    }

    #[test]
    fn hash_tags_are_what_redis_cluster_hashes() {
        assert_eq!(hash_tag("deploy"), "deploy");
        assert_eq!(hash_tag("a{b}c"), "b");
        assert_eq!(hash_tag("a{}c{d}"), "a{}c{d}");
        assert_eq!(hash_tag("{x}:ids"), "x");
        assert_eq!(hash_tag("a}b{"), "a}b{");
    }

    #[test]
    fn companions_hash_like_their_key_in_a_cluster() {
        let c = |key| companion_key("ns:fencing", key, true);
        assert_eq!(c("deploy").unwrap(), "ns:fencing:{deploy}");
        assert_eq!(c("locks:{deploy}").unwrap(), "ns:fencing:locks:{deploy}");
        for key in ["deploy", "locks:{deploy}", "a{b}c"] {
            assert_eq!(hash_tag(&c(key).unwrap()), hash_tag(key), "{key}");
        }
        assert!(matches!(c("a}b"), Err(Error::Usage(_))));
        assert_eq!(
            companion_key("ns:fencing", "deploy", false).unwrap(),
            "ns:fencing:deploy"
        );
    }
}
