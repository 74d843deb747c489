//! The keys of one pool, the Go yaraus's layout (the table of the module
//! docs, [`super`]), and in Redis Cluster the same under one hash tag.

use crate::claim::Channel;

/// The four keys of one pool.
#[derive(Clone, Debug)]
pub struct PoolKeys {
    pub ids: String,
    pub clients: String,
    pub stats: String,
    /// The clock guard's records (not the Go tool's: it ignores them).
    pub clock: String,
    /// The channel a release publishes on, which the runs waiting for a
    /// free id listen to (`ns:wake:ns:ids`, claim/wake.rs), and their
    /// queue (`ns:queue:ns:ids`).
    pub wake: Channel,
}

impl PoolKeys {
    pub fn new(namespace: &str) -> PoolKeys {
        PoolKeys::with_tag(namespace, namespace, false)
    }

    /// The keys in Redis Cluster: the namespace becomes their hash tag
    /// (`{ns}:ids`, `{ns}:clients`, `{ns}:stats`, `{ns}:clock`), so that
    /// the scripts that touch them run in one slot; the wake channel
    /// (`ns:wake:{ns}:ids`) carries the tag too, so that the release script
    /// may publish on it (`SPUBLISH`).
    pub fn in_cluster(namespace: &str) -> PoolKeys {
        PoolKeys::with_tag(namespace, &format!("{{{namespace}}}"), true)
    }

    fn with_tag(namespace: &str, tagged: &str, cluster: bool) -> PoolKeys {
        let ids = format!("{tagged}:ids");
        PoolKeys {
            wake: Channel::named(
                format!("{namespace}:wake:{ids}"),
                format!("{namespace}:queue:{ids}"),
                cluster,
            ),
            ids,
            clients: format!("{tagged}:clients"),
            stats: format!("{tagged}:stats"),
            clock: format!("{tagged}:clock"),
        }
    }
}
