//! `init` of a pool that may be sharded ([`init_pool`]): a pool without a
//! layout record is created, grown and shrunk by [`super::init`] as it
//! always was; a sharded one shard by shard, with its record.
//!
//! * **Creating** N shards: the record is written first (layout.lua, which
//!   refuses it while the namespace holds a pool that is not sharded, and
//!   marks `ns:ids` and `ns:stats` for the clients that read no layout),
//!   then each shard is built and published as a pool is. A `run` in
//!   between finds some shards missing, and leases from the others.
//! * **Resizing**: the new runs of each shard are worked out
//!   ([`resized`]: an id never changes shard); a shrink is refused, having
//!   written nothing, while an id to be removed from any shard is leased
//!   (unless forced); every shard then records the decision as a pool
//!   does (resize.lua, which refuses an id leased since), so that its
//!   removals go on only while no other `init` decided since (shrink.lua);
//!   then the record is changed, over the one read (another `init` in
//!   between makes this one fail, having removed nothing), and ids are
//!   added (every run again, `ZADD NX`) and removed in chunks.
//! * **Finishing**: a shard that does not hold exactly its runs (an `init`
//!   interrupted) is made to, by adding them again (`ZADD NX`) and removing
//!   what lies outside them.
//! * **Adopting**: shards that outlived their layout record (its master
//!   restarted empty) are taken into the layout made again by `init` as the
//!   pool was made, when each holds only ids of its run of that split.
//!
//! The number of shards of a pool is fixed when it is made: changing it
//! would move ids between shards, and a leased id's holder renews it where
//! it leased it.

use super::init::{
    InitOutcome, add, check_types, create_missing, decide, holders, init, ranges, refusal, remove,
    validate_range,
};
use super::keys::PoolKeys;
use super::layout::{Layout, MAX_SHARDS, Shard, minus, refuse_beside_shards, resized, split};
use super::range::each_member;
use super::worker_id::WorkerId;
use crate::base::setting::Setting;
use crate::error::{Error, Result};
use crate::store::{Store, keys_under_every_master};
use std::ops::RangeInclusive;

/// What `init` did, and to which pool.
#[derive(Debug, PartialEq, Eq)]
pub struct PoolInit {
    pub outcome: InitOutcome,
    /// The pool in messages: `ns:ids`, or `ns:layout (N shards)`.
    pub name: String,
}

/// Makes the pool of `base`'s namespace hold exactly `min..=max`, in
/// `shards` shards (`None`: as many as it has, 1 for a new pool).
pub async fn init_pool(
    store: &mut Store,
    base: &PoolKeys,
    (min, max): (u64, u64),
    shards: Option<usize>,
    force: bool,
) -> Result<PoolInit> {
    validate_range(min, max)?;
    if let Some(n) = shards {
        validate_shards(n, min, max)?;
    }
    let layout = Layout::read(store, base).await?;
    let layout = match (layout.is_sharded(), shards) {
        (false, None | Some(1)) => {
            if check_types(store, base).await? == "none" {
                refuse_beside_shards(store, base).await?;
            }
            return Ok(PoolInit {
                outcome: init(store, base, (min, max), force).await?,
                name: base.ids.clone(),
            });
        }
        (false, Some(n)) => {
            let made = new_shards(base, min, max, n);
            let survivors = adopt_survivors(store, &layout, &made).await?;
            match layout.record(store, &made).await? {
                None => {
                    if survivors > 0 {
                        log::warn!(
                            "{survivors} of the {n} shards of {} outlived their layout record, \
                             each holding the ids this split gives it: recorded the layout \
                             again, their holders keep their ids, and the missing shards are made",
                            layout.base.layout
                        );
                    }
                    return create(store, &layout, made, (min, max)).await;
                }
                Some(other) => other,
            }
        }
        (true, _) => layout,
    };
    if let Some(n) = shards.filter(|&n| n != layout.shards.len()) {
        return Err(Error::State(format!(
            "the pool {} has {} shards, not {n}: the number of shards of a pool cannot be \
             changed (a leased id would move away from where its holder renews it); leave \
             out {} to resize it",
            layout.base.layout,
            layout.shards.len(),
            Setting::Shards
        )));
    }
    resize(store, &layout, (min, max), force).await
}

/// Refuses, before anything is sent, a number of shards that is zero, too
/// large, or more than the ids.
pub fn validate_shards(n: usize, min: u64, max: u64) -> Result<()> {
    let ids = max.saturating_sub(min).saturating_add(1);
    if n == 0 || n > MAX_SHARDS {
        return Err(Error::Usage(format!(
            "{} {n}: a pool has 1 to {MAX_SHARDS} shards",
            Setting::Shards
        )));
    }
    if n as u64 > ids {
        return Err(Error::Usage(format!(
            "{} {n} for {ids} ids ({} {min} {} {max}): every shard needs an id",
            Setting::Shards,
            Setting::Min,
            Setting::Max
        )));
    }
    Ok(())
}

/// The `n` shards of a new pool `min..=max`.
fn new_shards(base: &PoolKeys, min: u64, max: u64, n: usize) -> Vec<Shard> {
    split(min, max, n)
        .into_iter()
        .enumerate()
        .map(|(k, run)| Shard {
            keys: base.shard(&base.shard_prefix(k, n)),
            ranges: run.into_iter().collect(),
        })
        .collect()
}

/// How many shards of a new layout exist already: shards of a sharded pool
/// whose record was lost (its master restarted empty) while they and their
/// holders lived on. Each is adopted only if every id it holds lies in the
/// run this split gives it: the runs are disjoint, so no id is then in two
/// shards once the missing ones are made with their own runs (a lost
/// shard's holders are stopped at their next renewal, as when any pool
/// vanishes, and its new holders wait `--delay`). Otherwise (the pool was
/// resized since, or made with another range or number of shards: a shard
/// this split does not have is found on any master) the layout is
/// refused, having written nothing: a person must say which shards are
/// the pool.
async fn adopt_survivors(store: &mut Store, layout: &Layout, shards: &[Shard]) -> Result<usize> {
    // A shard of another split (another number of shards) may hold ids of
    // this one's runs: a person must say what it is.
    let found = keys_under_every_master(store, &layout.base.shards_prefix()).await?;
    let prefixes: Vec<String> = shards
        .iter()
        .map(|s| format!("{}:", s.keys.ids.trim_end_matches(":ids")))
        .collect();
    if let Some(stranger) = (found.iter().flatten())
        .filter(|key| !prefixes.iter().any(|p| key.starts_with(p.as_str())))
        .min()
    {
        return Err(Error::State(format!(
            "{stranger} exists, of a shard that {} shards would not have, and no layout {} \
             records it: a sharded pool whose layout was lost (its master restarted empty?), \
             made with another number of shards, whose holders may still renew there; give \
             the number of shards and the range it was made with, or delete the old shards' \
             keys (which stops their holders) before making the pool again",
            shards.len(),
            layout.base.layout
        )));
    }
    let mut survivors = 0;
    for shard in shards {
        if check_types(store, &shard.keys).await? == "none" {
            continue;
        }
        let stray = outside(store, &shard.keys, &shard.ranges).await?;
        if !stray.is_empty() {
            return Err(Error::State(format!(
                "{} holds ids {} outside the ids {} this split gives it, and no layout {} \
                 records it: a shard of a sharded pool whose layout was lost (its master \
                 restarted empty?), resized since it was made or made with another range or \
                 number of shards, whose holders may still renew there; give the range and \
                 number of shards it was made with, or delete the old shards' keys (which \
                 stops their holders) before making the pool again",
                shard.keys.ids,
                ranges(&stray),
                ranges(&shard.ranges),
                layout.base.layout
            )));
        }
        survivors += 1;
    }
    if survivors > 0 && found.is_none() {
        return Err(Error::State(format!(
            "shards of {} outlived their layout record, and the ACL denies SCAN, so whether a \
             shard of another split lives on cannot be known; give the user the rules of \
             `yaraus acl-rules` and run init again",
            layout.base.layout
        )));
    }
    Ok(survivors)
}

/// Builds the shards of a layout just recorded.
async fn create(
    store: &mut Store,
    layout: &Layout,
    shards: Vec<Shard>,
    (min, max): (u64, u64),
) -> Result<PoolInit> {
    for shard in &shards {
        for run in &shard.ranges {
            create_missing(store, &shard.keys, *run.start(), *run.end()).await?;
        }
    }
    Ok(PoolInit {
        outcome: InitOutcome::Created { min, max },
        name: format!("{} ({} shards)", layout.base.layout, shards.len()),
    })
}

/// Grows, shrinks or finishes the sharded pool `layout` to `min..=max`.
async fn resize(
    store: &mut Store,
    layout: &Layout,
    (min, max): (u64, u64),
    force: bool,
) -> Result<PoolInit> {
    let from = layout.range().unwrap_or((min, max));
    let runs = resized(&layout.shards, (min, max));
    let changed = layout
        .shards
        .iter()
        .zip(&runs)
        .any(|(shard, new)| &shard.ranges != new);
    if changed {
        if !force {
            refuse_leased(store, layout, &runs, (min, max)).await?;
        }
        // Every shard records this init's decision (resize.lua), so that
        // its removals go on only while the decision stands (shrink.lua).
        for (shard, new) in layout.shards.iter().zip(&runs) {
            let removing = minus(&shard.ranges, new);
            let taken = decide(store, &shard.keys, (min, max), force, &removing).await?;
            if !removing.is_empty() {
                said_removing(&shard.keys, &removing, &taken);
            }
        }
        let mut shards = layout.shards.clone();
        for (shard, new) in shards.iter_mut().zip(&runs) {
            shard.ranges = new.clone();
        }
        if layout.record(store, &shards).await?.is_some() {
            return Err(Error::State(format!(
                "the layout {} changed while this init ran (another init?); nothing was \
                 removed: run init again",
                layout.base.layout
            )));
        }
    }
    let (mut added, mut removed) = (0, 0);
    for (shard, new) in layout.shards.iter().zip(&runs) {
        let old = changed.then_some(shard.ranges.as_slice());
        let (a, r) = finish(store, &shard.keys, new, old, ((min, max), force)).await?;
        added += a;
        removed += r;
    }
    let name = layout.name();
    let outcome = if !changed && added == 0 && removed == 0 {
        InitOutcome::Already { min, max }
    } else {
        InitOutcome::Resized {
            from,
            to: (min, max),
            added,
            removed,
        }
    };
    Ok(PoolInit { outcome, name })
}

/// Refuses, having written nothing, a resize that would remove leased ids
/// from any shard (each shard read at its server's `TIME`).
async fn refuse_leased(
    store: &mut Store,
    layout: &Layout,
    runs: &[Vec<RangeInclusive<u64>>],
    (min, max): (u64, u64),
) -> Result<()> {
    let mut removing = Vec::new();
    let mut leased = Vec::new();
    for (shard, new) in layout.shards.iter().zip(runs) {
        let lost = minus(&shard.ranges, new);
        if lost.is_empty() {
            continue;
        }
        let (secs, micros): (u64, u64) = store.query(&redis::cmd("TIME")).await?;
        let members: Vec<String> = store
            .query(
                redis::cmd("ZRANGE")
                    .arg(&shard.keys.ids)
                    .arg(format!("({secs}.{micros:06}"))
                    .arg("+inf")
                    .arg("BYSCORE"),
            )
            .await?;
        let ids: Vec<u64> = members
            .iter()
            .filter_map(|m| WorkerId::decode(m))
            .map(|id| id.0)
            .filter(|id| lost.iter().any(|r| r.contains(id)))
            .collect();
        if !ids.is_empty() {
            let members: Vec<String> = ids.iter().map(|&n| WorkerId(n).encode()).collect();
            let owners: Vec<Option<String>> = store
                .query(redis::cmd("HMGET").arg(&shard.keys.clients).arg(&members))
                .await?;
            let owners = owners.into_iter().map(Option::unwrap_or_default);
            leased.extend(ids.iter().map(u64::to_string).zip(owners));
        }
        removing.extend(lost);
    }
    if leased.is_empty() {
        return Ok(());
    }
    removing.sort_by_key(|r| *r.start());
    Err(refusal(&layout.name(), (min, max), &removing, &leased))
}

/// Logs what a shard loses, as a pool's resize does.
fn said_removing(keys: &PoolKeys, removing: &[RangeInclusive<u64>], taken: &[(String, String)]) {
    log::info!("removing ids {} from {}", ranges(removing), keys.ids);
    if !taken.is_empty() {
        log::warn!(
            "taking {} from their holders ({}): each loses its id at its next renewal, and \
             its command is stopped",
            holders(taken),
            Setting::Force
        );
    }
}

/// Makes one shard hold exactly `runs`, for the init that decided
/// `decided` (forced or not): from `old` (the runs it held, when the record
/// just changed) by removing what it lost; otherwise, when it does not hold
/// as many ids as its runs, by removing any other it holds (decided first,
/// as a shrink is: refused while one is leased). Either way its runs are
/// added again (`ZADD NX`: an id missing from inside them comes back, the
/// others keep their leases). Returns (added, removed).
async fn finish(
    store: &mut Store,
    keys: &PoolKeys,
    runs: &[RangeInclusive<u64>],
    old: Option<&[RangeInclusive<u64>]>,
    (decided, force): ((u64, u64), bool),
) -> Result<(u64, u64)> {
    check_types(store, keys).await?;
    let removing = match old {
        Some(old) => minus(old, runs),
        None => {
            let want: u64 = runs.iter().map(|r| r.end() - r.start() + 1).sum();
            let held: u64 = store.query(redis::cmd("ZCARD").arg(&keys.ids)).await?;
            if held == want {
                return Ok((0, 0));
            }
            let stray = outside(store, keys, runs).await?;
            if !stray.is_empty() {
                let taken = decide(store, keys, decided, force, &stray).await?;
                said_removing(keys, &stray, &taken);
            }
            stray
        }
    };
    let mut added = 0;
    for run in runs {
        added += add(store, &keys.ids, run.clone()).await?;
    }
    let mut removed = 0;
    for run in removing {
        removed += remove(store, keys, decided, run).await?;
    }
    Ok((added, removed))
}

/// The ids a shard holds outside its runs, as runs, found by scanning it.
async fn outside(
    store: &mut Store,
    keys: &PoolKeys,
    runs: &[RangeInclusive<u64>],
) -> Result<Vec<RangeInclusive<u64>>> {
    let mut stray = Vec::new();
    each_member(store, keys, |member| {
        stray.extend(
            WorkerId::decode(&member)
                .map(|id| id.0)
                .filter(|id| !runs.iter().any(|r| r.contains(id))),
        );
        Ok(())
    })
    .await?;
    stray.sort_unstable();
    stray.dedup();
    let mut out: Vec<RangeInclusive<u64>> = Vec::new();
    for id in stray {
        match out.last_mut() {
            Some(last) if *last.end() + 1 == id => *last = *last.start()..=id,
            _ => out.push(id..=id),
        }
    }
    Ok(out)
}
