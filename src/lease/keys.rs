//! The keys of one pool, the Go yaraus's layout (the table of the module
//! docs, [`super`]), and in Redis Cluster the same under one hash tag; and
//! the keys of each shard of a pool split by `init --shards N`.

use crate::base::keys::{SLOTS, slot};
use crate::claim::Channel;

/// The four keys of one pool (or of one shard of a sharded pool), and the
/// key of the layout record its clients read first.
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
    /// Where a sharded pool records its shards (`ns:layout`, `{ns}:layout`
    /// in a Cluster; layout.rs): absent for a pool that is not sharded.
    /// A shard's keys name their pool's.
    pub layout: String,
    namespace: String,
    cluster: bool,
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
        let mut keys = PoolKeys::prefixed(namespace, tagged, cluster);
        keys.layout = format!("{tagged}:layout");
        keys
    }

    /// The keys `PREFIX:ids`, … of a pool whose layout key is left empty.
    fn prefixed(namespace: &str, prefix: &str, cluster: bool) -> PoolKeys {
        let ids = format!("{prefix}:ids");
        PoolKeys {
            wake: Channel::named(
                format!("{namespace}:wake:{ids}"),
                format!("{namespace}:queue:{ids}"),
                cluster,
            ),
            ids,
            clients: format!("{prefix}:clients"),
            stats: format!("{prefix}:stats"),
            clock: format!("{prefix}:clock"),
            layout: String::new(),
            namespace: namespace.to_string(),
            cluster,
        }
    }

    /// Whether these are the keys of a pool in Redis Cluster.
    pub fn cluster(&self) -> bool {
        self.cluster
    }

    /// The keys of the shard whose keys start with `prefix` (as
    /// [`shard_prefix`](Self::shard_prefix) made it, read back from the
    /// layout record), with their own wake channel and queue.
    pub fn shard(&self, prefix: &str) -> PoolKeys {
        let mut keys = PoolKeys::prefixed(&self.namespace, prefix, self.cluster);
        keys.layout = self.layout.clone();
        keys
    }

    /// What the keys of every shard of this pool start with (`ns:shard:`,
    /// `{ns:shard:` in a Cluster), whatever their number.
    pub fn shards_prefix(&self) -> String {
        match self.cluster {
            true => format!("{{{}:shard:", self.namespace),
            false => format!("{}:shard:", self.namespace),
        }
    }

    /// The prefix of the keys of shard `k` of `n`: `ns:shard:K` on one
    /// server. In a Cluster it is a hash tag, `{ns:shard:K.S}`, with `S`
    /// the smallest number that puts it in the `k`-th of `n` equal parts
    /// of the 16,384 slots: a Cluster whose masters hold equal runs of
    /// slots (as `redis-cli --cluster create` makes them) then holds equal
    /// numbers of shards on each master when `n` is a multiple of their
    /// number, and shards on every master when `n` is at least it.
    pub fn shard_prefix(&self, k: usize, n: usize) -> String {
        let ns = &self.namespace;
        if !self.cluster {
            return format!("{ns}:shard:{k}");
        }
        let part = |slot: u16| usize::from(slot) * n / usize::from(SLOTS);
        // Each try lands in part k with chance 1/n: n tries on average.
        (0u64..)
            .map(|s| format!("{{{ns}:shard:{k}.{s}}}"))
            .find(|prefix| part(slot(prefix)) == k)
            .expect("CRC16 reaches every part of the slots")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shard_prefix_starts_with_the_shards_prefix() {
        for pool in [PoolKeys::new("t"), PoolKeys::in_cluster("t")] {
            for n in [1, 2, 6, 1024] {
                for k in [0, n / 2, n - 1] {
                    assert!(pool.shard_prefix(k, n).starts_with(&pool.shards_prefix()));
                }
            }
        }
    }

    #[test]
    fn a_shard_has_the_pool_keys_under_its_prefix() {
        let pool = PoolKeys::new("t");
        assert_eq!(pool.layout, "t:layout");
        let shard = pool.shard(&pool.shard_prefix(2, 4));
        assert_eq!(shard.ids, "t:shard:2:ids");
        assert_eq!(shard.clock, "t:shard:2:clock");
        assert_eq!(shard.wake.name(), "t:wake:t:shard:2:ids");
        assert_eq!(shard.layout, "t:layout");
    }

    #[test]
    fn cluster_shards_spread_over_the_slots_in_order() {
        let pool = PoolKeys::in_cluster("yaraus");
        assert_eq!(pool.layout, "{yaraus}:layout");
        for n in [2, 3, 6, 7, 64] {
            for k in 0..n {
                let prefix = pool.shard_prefix(k, n);
                assert!(
                    prefix.starts_with(&format!("{{yaraus:shard:{k}.")),
                    "{prefix}"
                );
                let slot = usize::from(slot(&prefix));
                assert_eq!(slot * n / 16384, k, "{prefix} in slot {slot} of {n} parts");
                let shard = pool.shard(&prefix);
                assert_eq!(crate::base::keys::slot(&shard.ids), slot as u16);
                assert_eq!(crate::base::keys::slot(shard.wake.name()), slot as u16);
            }
        }
    }
}
