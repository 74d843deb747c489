//! The keys of one hilo sequence, the same on every shard: one hash tag
//! (`{NAME}`), so that every script of the sequence touches one Cluster
//! slot, and a name that cannot contain braces, so that no two names' keys
//! meet.

use crate::error::Result;

/// The keys of one sequence (the same on every shard).
#[derive(Clone, Debug)]
pub struct HiloKeys {
    name: String,
    meta: String,
    open: String,
    windows: String,
}

impl HiloKeys {
    /// The keys of `name` in namespace `ns`; the name is checked first.
    pub fn new(ns: &str, name: &str) -> Result<HiloKeys> {
        crate::base::keys::check_tagged_name("hilo", name)?;
        let meta = format!("{ns}:hilo:{{{name}}}");
        Ok(HiloKeys {
            name: name.to_string(),
            open: format!("{meta}:open"),
            windows: format!("{meta}:windows"),
            meta,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Hash: hwm, fence, size, reserved, created.
    pub fn meta(&self) -> &str {
        &self.meta
    }

    /// The agent's lock: `ns:hilo:{NAME}:agent`.
    pub fn agent_lock(&self) -> String {
        format!("{}:agent", self.meta)
    }

    /// The three keys every script is given, in its header's order.
    pub(super) fn all(&self) -> [&str; 3] {
        [&self.meta, &self.open, &self.windows]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_one_hash_tag_and_names_are_checked() {
        let keys = HiloKeys::new("yaraus", "orders").unwrap();
        assert_eq!(
            keys.all(),
            [
                "yaraus:hilo:{orders}",
                "yaraus:hilo:{orders}:open",
                "yaraus:hilo:{orders}:windows"
            ]
        );
        assert_eq!(keys.agent_lock(), "yaraus:hilo:{orders}:agent");
        assert!(HiloKeys::new("yaraus", "").is_err());
        assert!(HiloKeys::new("yaraus", "a b").is_err());
        assert!(HiloKeys::new("yaraus", "a{b").is_err());
    }
}
