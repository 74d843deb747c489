//! A pool split into shards (`init --shards N`), as its clients find it.
//!
//! A pool is one sorted set, so one hash slot: a Redis Cluster cannot
//! spread it, and one master renews every lease. A sharded pool is N pools
//! of four keys each (a shard: [`PoolKeys::shard`], under a hash tag of its
//! own), each holding some ids, plus one layout record, `ns:layout`
//! (`{ns}:layout` in a Cluster), that says which shard holds which ids:
//!
//! ```json
//! {"version":1,"shards":[{"prefix":"{ns:shard:0.2}","ranges":[[1,512]]}, …]}
//! ```
//!
//! Every client reads the record first ([`Layout::read`]): none means the
//! pool is the namespace's own four keys, as it has always been, and as the
//! Go tool and older yaraus know it (`--shards 1` writes exactly that). With
//! a record, `run` leases from one shard, renews and releases there only;
//! `stats`, `list` and `init` go over every shard.
//!
//! The shards start as N contiguous runs of the range. Growing the pool
//! splits the new ids over the shards the same way, and shrinking it takes
//! from each shard the ids outside the new range: an id never moves to
//! another shard, since its holder renews it where it leased it. So a shard
//! holds a list of runs ([`Shard::ranges`]).
//!
//! With a record, `ns:ids` and `ns:stats` hold a text that names the layout
//! (layout.lua writes it with the record): the Go tool and a yaraus that
//! reads no layout find a string where they expect a pool and fail on
//! every command, writing nothing, and `GET ns:ids` says why.

use super::keys::PoolKeys;
use super::script::{Layout as LayoutScript, pool_error};
use crate::error::{Error, Result};
use crate::store::{Store, is_denied, keys_under_every_master};
use serde::{Deserialize, Serialize};
use std::ops::RangeInclusive;

/// The most shards a pool may have: each is a waiter's subscription while
/// it waits (one connection each in a Cluster), and a few per master spread
/// any Cluster this tool is meant for.
pub const MAX_SHARDS: usize = 1024;

/// The record's format; another is refused, not misread.
const VERSION: u32 = 1;

/// A pool, as its clients find it.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The namespace's keys: the pool itself when it is not sharded.
    pub base: PoolKeys,
    /// The shards; empty when the pool is not sharded.
    pub shards: Vec<Shard>,
    /// The record as read ('' for none): a change is made only over it.
    pub(super) record: String,
}

/// One shard: its keys and the ids it holds.
#[derive(Clone, Debug)]
pub struct Shard {
    pub keys: PoolKeys,
    /// Disjoint runs of ids, in the order they were given to it; empty
    /// once a shrink took all its ids.
    pub ranges: Vec<RangeInclusive<u64>>,
}

impl Shard {
    /// How many ids it holds.
    pub fn size(&self) -> u64 {
        self.ranges.iter().map(|r| r.end() - r.start() + 1).sum()
    }
}

#[derive(Serialize, Deserialize)]
struct Record {
    version: u32,
    shards: Vec<RecordShard>,
}

#[derive(Serialize, Deserialize)]
struct RecordShard {
    prefix: String,
    ranges: Vec<(u64, u64)>,
}

impl Layout {
    /// The pool of `base`'s namespace: its layout record, or the
    /// namespace's own keys when there is none. A user whose ACL denies the
    /// record (made from the rules of a yaraus without shards) is taken to
    /// use a pool that is not sharded: a sharded one would refuse it anyway.
    pub async fn read(store: &mut Store, base: &PoolKeys) -> Result<Layout> {
        let mut conn = store.connection().await?;
        let got: redis::RedisResult<Option<String>> = redis::cmd("GET")
            .arg(&base.layout)
            .query_async(&mut conn)
            .await;
        let record = match got {
            Ok(record) => record.unwrap_or_default(),
            Err(e) if is_denied(&e) => {
                log::debug!(
                    "the ACL denies {}: reading the pool as not sharded",
                    base.layout
                );
                String::new()
            }
            Err(e) if e.code() == Some("WRONGTYPE") => {
                return Err(Error::State(format!(
                    "{} is not a string, so not the layout of a pool; it belongs to something \
                     else — choose another namespace",
                    base.layout
                )));
            }
            Err(e) => return Err(store.fail(e)),
        };
        Layout::parse(base, record)
    }

    /// The layout that `record` says ('' for none).
    pub(super) fn parse(base: &PoolKeys, record: String) -> Result<Layout> {
        if record.is_empty() {
            return Ok(Layout {
                base: base.clone(),
                shards: Vec::new(),
                record,
            });
        }
        let unknown = |why: String| {
            Error::State(format!(
                "the pool's layout {} is not one this yaraus reads ({why}): it was written by \
                 another version, or by hand",
                base.layout
            ))
        };
        let parsed: Record = serde_json::from_str(&record).map_err(|e| unknown(e.to_string()))?;
        if parsed.version != VERSION {
            return Err(unknown(format!("version {}", parsed.version)));
        }
        let shards: Vec<Shard> = parsed
            .shards
            .into_iter()
            .map(|s| Shard {
                keys: base.shard(&s.prefix),
                ranges: s.ranges.into_iter().map(|(lo, hi)| lo..=hi).collect(),
            })
            .collect();
        check_shards(base, &shards).map_err(unknown)?;
        Ok(Layout {
            base: base.clone(),
            shards,
            record,
        })
    }

    pub fn is_sharded(&self) -> bool {
        !self.shards.is_empty()
    }

    /// The pools to read: the shards, or the pool itself.
    pub fn pools(&self) -> Vec<&PoolKeys> {
        match self.is_sharded() {
            true => self.shards.iter().map(|s| &s.keys).collect(),
            false => vec![&self.base],
        }
    }

    /// The smallest and largest id of a sharded pool.
    pub fn range(&self) -> Option<(u64, u64)> {
        let ranges = self.shards.iter().flat_map(|s| &s.ranges);
        let min = ranges.clone().map(|r| *r.start()).min()?;
        let max = ranges.map(|r| *r.end()).max()?;
        Some((min, max))
    }

    /// The pool in messages: `ns:ids`, or `ns:layout (6 shards)`.
    pub fn name(&self) -> String {
        match self.shards.len() {
            0 => self.base.ids.clone(),
            n => format!("{} ({n} shards)", self.base.layout),
        }
    }

    /// The record of `shards` (for [`record`](Self::record)).
    pub(super) fn record_of(shards: &[Shard]) -> String {
        let record = Record {
            version: VERSION,
            shards: shards
                .iter()
                .map(|s| RecordShard {
                    prefix: s.keys.ids.trim_end_matches(":ids").to_string(),
                    ranges: s.ranges.iter().map(|r| (*r.start(), *r.end())).collect(),
                })
                .collect(),
        };
        serde_json::to_string(&record).expect("a layout serializes")
    }

    /// Records `shards` as the pool's layout, over the record this layout
    /// was read with: `Ok(None)` when recorded, `Ok(Some(layout))` when
    /// another `init` changed it first (the layout it recorded). Refused
    /// while the namespace holds a pool that is not sharded.
    pub(super) async fn record(
        &self,
        store: &mut Store,
        shards: &[Shard],
    ) -> Result<Option<Layout>> {
        let record = Layout::record_of(shards);
        let marker = format!(
            "yaraus: this pool is split into {} shards, whose layout is in {}; only a yaraus \
             that reads that layout (init --shards) can use it, not the Go yaraus nor an older \
             yaraus",
            shards.len(),
            self.base.layout
        );
        let invocation = LayoutScript {
            keys: &self.base,
            record: &record,
            read: &self.record,
            marker: &marker,
        }
        .invocation();
        let reply = match store.script::<redis::Value>(&invocation).await? {
            Ok(reply) => store.answer(reply)?,
            Err(e) => return Err(pool_error(store, &e)),
        };
        match reply.code()? {
            1 => Ok(None),
            0 => Ok(Some(Layout::parse(&self.base, reply.text(1)?)?)),
            _ => Err(Error::State(format!(
                "{} exists: the namespace holds a pool that is not sharded, and its number \
                 of shards cannot be changed (a leased id would move away from where its \
                 holder renews it); keep it as it is (leave out --shards, or give \
                 --shards 1), or give the sharded pool another namespace",
                reply.text(1)?
            ))),
        }
    }
}

/// Whether a pool script's error says that a key of the pool holds
/// another type: the namespace's own pool keys hold a sharded pool's mark
/// (a string), so the caller reads the layout. Whatever checks a script
/// makes first, its own (`YARAUS_WRONGTYPE`) or Redis's (`WRONGTYPE`, a
/// write refused), it has written nothing.
pub fn is_layout_mark(e: &redis::RedisError) -> bool {
    matches!(e.code(), Some("YARAUS_WRONGTYPE") | Some("WRONGTYPE"))
        || e.to_string().contains("WRONGTYPE")
}

/// Why `shards` is not a layout: no shards, one (a pool of one shard is
/// not sharded), prefixes that repeat or, in a Cluster, are no hash tag,
/// runs that are empty or overlap.
fn check_shards(base: &PoolKeys, shards: &[Shard]) -> std::result::Result<(), String> {
    if shards.len() < 2 || shards.len() > MAX_SHARDS {
        return Err(format!("{} shards", shards.len()));
    }
    let mut prefixes: Vec<&str> = shards.iter().map(|s| s.keys.ids.as_str()).collect();
    prefixes.sort_unstable();
    if prefixes.windows(2).any(|w| w[0] == w[1]) {
        return Err("two shards with the same keys".into());
    }
    if base.cluster() && shards.iter().any(|s| !s.keys.ids.starts_with('{')) {
        return Err("a shard without a hash tag, in a Cluster".into());
    }
    let mut runs: Vec<&RangeInclusive<u64>> = shards.iter().flat_map(|s| &s.ranges).collect();
    if runs.iter().any(|r| r.start() > r.end()) {
        return Err("an empty run of ids".into());
    }
    runs.sort_by_key(|r| *r.start());
    if runs.windows(2).any(|w| w[0].end() >= w[1].start()) {
        return Err("two shards holding the same id".into());
    }
    Ok(())
}

/// `min..=max` in `n` contiguous runs of sizes that differ by one at most
/// (an empty run, for a range smaller than `n`, is `None`).
pub(super) fn split(min: u64, max: u64, n: usize) -> Vec<Option<RangeInclusive<u64>>> {
    let size = max - min + 1;
    let n = n as u64;
    (0..n)
        .map(|k| {
            let lo = min + size * k / n;
            let hi = min + size * (k + 1) / n;
            (hi > lo).then(|| lo..=hi - 1)
        })
        .collect()
}

/// The shards' runs once the pool holds exactly `min..=max`: each keeps
/// its ids within it, and the ids it did not hold (below the old range,
/// above it) are split over the shards as [`split`] does.
pub(super) fn resized(shards: &[Shard], (min, max): (u64, u64)) -> Vec<Vec<RangeInclusive<u64>>> {
    let mut runs: Vec<Vec<RangeInclusive<u64>>> = shards
        .iter()
        .map(|s| {
            s.ranges
                .iter()
                .filter_map(|r| {
                    let (lo, hi) = ((*r.start()).max(min), (*r.end()).min(max));
                    (lo <= hi).then_some(lo..=hi)
                })
                .collect()
        })
        .collect();
    let old = shards.iter().flat_map(|s| &s.ranges);
    let (old_min, old_max) = (
        old.clone().map(|r| *r.start()).min().unwrap_or(max + 1),
        old.map(|r| *r.end()).max().unwrap_or(max),
    );
    let mut new = Vec::new();
    if old_min > max || old_max < min {
        new.push((min, max));
    } else {
        if min < old_min {
            new.push((min, old_min - 1));
        }
        if max > old_max {
            new.push((old_max + 1, max));
        }
    }
    for (lo, hi) in new {
        for (k, run) in split(lo, hi, shards.len()).into_iter().enumerate() {
            runs[k].extend(run);
        }
    }
    for shard in &mut runs {
        shard.sort_by_key(|r| *r.start());
    }
    runs
}

/// The ids of the runs `a` that no run of `b` holds, as runs.
pub(super) fn minus(
    a: &[RangeInclusive<u64>],
    b: &[RangeInclusive<u64>],
) -> Vec<RangeInclusive<u64>> {
    let mut left: Vec<RangeInclusive<u64>> = a.to_vec();
    for cut in b {
        left = left
            .into_iter()
            .flat_map(|r| {
                let mut kept = Vec::new();
                if r.start() < cut.start() {
                    kept.push(*r.start()..=(*r.end()).min(cut.start() - 1));
                }
                if r.end() > cut.end() {
                    kept.push((*r.start()).max(cut.end() + 1)..=*r.end());
                }
                kept
            })
            .collect();
    }
    left
}

/// Refuses to make the pool `keys` while a key of a shard of this
/// namespace exists: the layout of a sharded pool was lost (the master of
/// `ns:layout` and its marks restarted empty, in a Cluster) while other
/// shards and their holders live on, and a pool made now would hand out
/// their ids again. Every master is searched: the shards' slots are all
/// over a Cluster. Rare (only when the pool is gone), so a `SCAN` of the
/// keyspace is its price.
pub(super) async fn refuse_beside_shards(store: &mut Store, keys: &PoolKeys) -> Result<()> {
    let Some(found) = keys_under_every_master(store, &keys.shards_prefix()).await? else {
        // Let through, as a layout it may not read is taken as none: rules
        // made before sharded pools keep working on a pool that is not.
        log::warn!(
            "the ACL denies SCAN, so whether shards of a lost layout {} live on was not \
             looked for before making {}; give the user the rules of `yaraus acl-rules`",
            keys.layout,
            keys.ids
        );
        return Ok(());
    };
    let Some(key) = found.iter().min() else {
        return Ok(());
    };
    Err(Error::State(format!(
        "the pool {} does not exist, but {key} (a shard of a sharded pool of this namespace) \
         does: the layout {} was lost (its master restarted empty?) while shards and their \
         holders live on, and a pool made now would hand out their ids again; nothing was \
         written. Run `yaraus init --shards N` with the pool's number of shards and range",
        keys.ids, keys.layout
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shards(runs: &[&[(u64, u64)]]) -> Vec<Shard> {
        let base = PoolKeys::new("t");
        runs.iter()
            .enumerate()
            .map(|(k, r)| Shard {
                keys: base.shard(&base.shard_prefix(k, runs.len())),
                ranges: r.iter().map(|&(lo, hi)| lo..=hi).collect(),
            })
            .collect()
    }

    fn runs(shards: &[Vec<RangeInclusive<u64>>]) -> Vec<Vec<(u64, u64)>> {
        shards
            .iter()
            .map(|s| s.iter().map(|r| (*r.start(), *r.end())).collect())
            .collect()
    }

    #[test]
    fn a_range_splits_into_near_equal_contiguous_runs() {
        assert_eq!(
            split(1, 10, 3),
            vec![Some(1..=3), Some(4..=6), Some(7..=10)]
        );
        assert_eq!(split(0, 1, 3), vec![None, Some(0..=0), Some(1..=1)]);
        let all: Vec<_> = split(1, 1023, 6).into_iter().flatten().collect();
        assert_eq!(all.first().map(|r| *r.start()), Some(1));
        assert_eq!(all.last().map(|r| *r.end()), Some(1023));
        assert!(all.windows(2).all(|w| w[0].end() + 1 == *w[1].start()));
    }

    #[test]
    fn a_resize_keeps_every_id_in_its_shard_and_shares_the_new_ones() {
        let now = shards(&[&[(1, 5)], &[(6, 10)]]);
        assert_eq!(
            runs(&resized(&now, (1, 14))),
            [vec![(1, 5), (11, 12)], vec![(6, 10), (13, 14)]]
        );
        assert_eq!(runs(&resized(&now, (3, 7))), [vec![(3, 5)], vec![(6, 7)]]);
        assert_eq!(
            runs(&resized(&now, (7, 20))),
            [vec![(11, 15)], vec![(7, 10), (16, 20)]]
        );
        assert_eq!(
            runs(&resized(&now, (0, 10))),
            [vec![(1, 5)], vec![(0, 0), (6, 10)]]
        );
        assert_eq!(
            runs(&resized(&now, (30, 33))),
            [vec![(30, 31)], vec![(32, 33)]]
        );
    }

    #[test]
    fn runs_minus_runs() {
        assert_eq!(minus(&[1..=10], &[3..=4, 8..=20]), vec![1..=2, 5..=7]);
        assert_eq!(minus(&[1..=10, 20..=30], &[0..=25]), vec![26..=30]);
        assert_eq!(minus(&[5..=5], &[]), vec![5..=5]);
        assert_eq!(minus(&[0..=3], &[0..=0]), vec![1..=3]);
    }

    #[test]
    fn a_record_reads_back_as_written_and_a_bad_one_is_refused() {
        let base = PoolKeys::in_cluster("t");
        let made = vec![
            Shard {
                keys: base.shard(&base.shard_prefix(0, 2)),
                ranges: vec![1..=5, 11..=12],
            },
            Shard {
                keys: base.shard(&base.shard_prefix(1, 2)),
                ranges: vec![6..=10],
            },
        ];
        let record = Layout::record_of(&made);
        let read = Layout::parse(&base, record.clone()).unwrap();
        assert_eq!(read.shards.len(), 2);
        assert_eq!(read.shards[0].keys.ids, made[0].keys.ids);
        assert_eq!(read.shards[0].ranges, made[0].ranges);
        assert_eq!(read.range(), Some((1, 12)));
        assert_eq!(Layout::record_of(&read.shards), record);
        for bad in [
            record.replace("\"version\":1", "\"version\":2"),
            record.replace("[6,10]", "[5,10]"),
            record.replace("{t:", "t:"),
            "{\"version\":1,\"shards\":[]}".to_string(),
            "not json".to_string(),
        ] {
            let e = Layout::parse(&base, bad.clone()).unwrap_err().to_string();
            assert!(
                e.contains("{t}:layout is not one this yaraus reads"),
                "{bad}: {e}"
            );
        }
    }
}
