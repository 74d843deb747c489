//! Creating, growing and shrinking a pool, in chunks.
//!
//! A pool of 2^22 ids cannot be written by one command without stopping
//! Redis for seconds, and a Lua loop would be worse. So ids are written
//! `CHUNK` at a time (each command a few milliseconds of server time), and:
//!
//! * a new pool is built under a temporary key that expires by itself if we
//!   are interrupted, and published with one `RENAME` (O(1) onto a missing
//!   key): `run` sees no pool or the whole pool, never half of one;
//! * growing adds free ids to the live pool with `ZADD NX`; each id added is
//!   usable at once, and running `init` again after an interruption
//!   finishes the job;
//! * a new range is decided by one script (`resize.lua`) before any id is
//!   added or removed: it refuses, writing nothing, while an id to be
//!   removed is leased (unless forced), and otherwise records the range.
//!   Ids are then added and removed in chunks; an interrupted `init` left
//!   the pool with more or fewer ids than its recorded range, which the
//!   next `init` sees and finishes;
//! * a resize adds its whole range, not only what the old range lacked
//!   (`ZADD NX`: the ids present, and their leases, are left as they are):
//!   an id missing from inside the range, which no count or smallest and
//!   largest id shows, comes back whenever `init` runs again;
//! * each chunk is removed only while the range recorded is still its
//!   init's decision (`shrink.lua`). Two inits racing each record their
//!   range; the later decision stands, and the earlier init stops before
//!   it takes an id the later one kept or put back.
//!
//! The pool's range is recorded in `ns:stats` as `min` and `max`; a pool made
//! by the Go tool, which has none, is measured by scanning it.

use super::keys::PoolKeys;
use super::range::{measure, recorded_range};
use super::script::pool_error;
use super::script::{FinalizeInit, Resize, Shrink};
use super::worker_id::WorkerId;
use crate::base::setting::Setting;
use crate::error::{Error, Result};
use crate::store::Store;
use std::ops::RangeInclusive;

/// Ids per write: one write holds Redis up for milliseconds, so that other
/// clients' requests go on between the writes of a large pool (README,
/// "yaraus init", has the figure).
const CHUNK: u64 = 10_000;
/// The largest pool: far beyond any snowflake layout, and small enough that
/// a typo such as `--max 4194303000` is refused instead of running for
/// hours and filling Redis's memory.
pub const MAX_POOL_SIZE: u64 = 1 << 24;
/// Ids per shrink script call, which does three commands per id.
const SHRINK_CHUNK: u64 = 2_000;
/// Lifetime of a pool under construction, renewed at every chunk.
const BUILD_TTL_MS: u64 = 120_000;

/// What `init` did.
#[derive(Debug, PartialEq, Eq)]
pub enum InitOutcome {
    Created {
        min: u64,
        max: u64,
    },
    Already {
        min: u64,
        max: u64,
    },
    Resized {
        from: (u64, u64),
        to: (u64, u64),
        added: u64,
        removed: u64,
    },
}

/// Makes the pool hold exactly the ids `min..=max`. Ids to be removed that
/// are leased refuse the change, unless `force` takes them from their
/// holders.
pub async fn init(
    store: &mut Store,
    keys: &PoolKeys,
    (min, max): (u64, u64),
    force: bool,
) -> Result<InitOutcome> {
    validate_range(min, max)?;
    let ids_type = check_types(store, keys).await?;
    if ids_type == "none" && build(store, keys, min, max).await? {
        return Ok(InitOutcome::Created { min, max });
    }
    let mut current = current_range(store, keys).await?;
    let held: u64 = store.query(redis::cmd("ZCARD").arg(&keys.ids)).await?;
    if current == (min, max) && held == max - min + 1 {
        return Ok(InitOutcome::Already { min, max });
    }
    if held != current.1 - current.0 + 1 {
        // An init interrupted after resize.lua recorded its range.
        current = measure(store, keys).await?;
    }
    resize(store, keys, current, (min, max), force).await
}

/// Creates the pool `min..=max` if there is none: what `run` given the
/// pool's range does when the pool vanished (a Redis restarted without
/// persistence). A pool that exists is left alone, whatever its range:
/// [`InitOutcome::Already`] says which it holds.
pub async fn create_missing(
    store: &mut Store,
    keys: &PoolKeys,
    min: u64,
    max: u64,
) -> Result<InitOutcome> {
    validate_range(min, max)?;
    if check_types(store, keys).await? == "none" && build(store, keys, min, max).await? {
        return Ok(InitOutcome::Created { min, max });
    }
    let (min, max) = current_range(store, keys).await?;
    Ok(InitOutcome::Already { min, max })
}

/// Refuses keys of the pool that hold another type; the type of the ids
/// key (`none` when there is no pool).
pub(super) async fn check_types(store: &mut Store, keys: &PoolKeys) -> Result<String> {
    let (ids_type, clients_type, stats_type): (String, String, String) = store
        .pipeline(
            redis::pipe()
                .cmd("TYPE")
                .arg(&keys.ids)
                .cmd("TYPE")
                .arg(&keys.clients)
                .cmd("TYPE")
                .arg(&keys.stats),
        )
        .await?;
    for (key, found, want) in [
        (&keys.ids, &ids_type, "zset"),
        (&keys.clients, &clients_type, "hash"),
        (&keys.stats, &stats_type, "hash"),
    ] {
        if found != "none" && found != want {
            return Err(Error::State(format!(
                "{key} is a {found}, not a {}; it belongs to something else — choose another \
                 namespace with {}",
                if want == "zset" { "sorted set" } else { "hash" },
                Setting::Namespace
            )));
        }
    }
    Ok(ids_type)
}

/// Grows or shrinks the pool from `cur` to `min..=max`.
async fn resize(
    store: &mut Store,
    keys: &PoolKeys,
    (cur_min, cur_max): (u64, u64),
    (min, max): (u64, u64),
    force: bool,
) -> Result<InitOutcome> {
    let removing = difference(cur_min..=cur_max, min..=max);
    let taken = decide(store, keys, (min, max), force, &removing).await?;
    if !removing.is_empty() {
        log::info!("removing ids {} from {}", ranges(&removing), keys.ids);
    }
    if !taken.is_empty() {
        log::warn!(
            "taking {} from their holders ({}): each loses its id at its next renewal, \
             and its command is stopped",
            holders(&taken),
            Setting::Force
        );
    }
    let added = add(store, &keys.ids, min..=max).await?;
    let mut removed = 0;
    for range in removing {
        removed += remove(store, keys, (min, max), range).await?;
    }
    Ok(InitOutcome::Resized {
        from: (cur_min, cur_max),
        to: (min, max),
        added,
        removed,
    })
}

/// Refuses, before anything is sent, a range that is empty or too large.
pub fn validate_range(min: u64, max: u64) -> Result<()> {
    if min > max {
        return Err(Error::Usage(format!(
            "{} {min} is greater than {} {max}: the pool would be empty",
            Setting::Min,
            Setting::Max
        )));
    }
    if max - min >= MAX_POOL_SIZE {
        return Err(Error::Usage(format!(
            "{} {min} {} {max} would make a pool of {} ids; at most {MAX_POOL_SIZE} are allowed",
            Setting::Min,
            Setting::Max,
            (max - min).saturating_add(1)
        )));
    }
    Ok(())
}

/// Builds a new pool under a temporary key and publishes it. False when
/// another `init` published one first.
async fn build(store: &mut Store, keys: &PoolKeys, min: u64, max: u64) -> Result<bool> {
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let tmp = format!("{}:building:{}-{nonce}", keys.ids, std::process::id());
    for (lo, hi) in chunks(min..=max, CHUNK) {
        let mut zadd = redis::cmd("ZADD");
        zadd.arg(&tmp);
        for n in lo..=hi {
            zadd.arg(0).arg(WorkerId(n).encode());
        }
        let mut pipe = redis::pipe();
        pipe.add_command(zadd)
            .ignore()
            .cmd("PEXPIRE")
            .arg(&tmp)
            .arg(BUILD_TTL_MS)
            .ignore();
        store.pipeline::<()>(&pipe).await?;
    }
    let invocation = FinalizeInit {
        keys,
        tmp: &tmp,
        min,
        max,
    }
    .invocation();
    match store.script::<i64>(&invocation).await? {
        Ok(published) => Ok(published == 1),
        Err(e) => Err(pool_error(store, &e)),
    }
}

/// The range the pool holds now: from `ns:stats`, or measured.
async fn current_range(store: &mut Store, keys: &PoolKeys) -> Result<(u64, u64)> {
    if let Some(range) = recorded_range(store, keys).await? {
        return Ok(range);
    }
    let (min, max) = measure(store, keys).await?;
    // Record it, so that the next command need not scan.
    record_range(store, keys, min, max).await?;
    Ok((min, max))
}

pub(super) async fn add(store: &mut Store, ids: &str, range: RangeInclusive<u64>) -> Result<u64> {
    let mut added = 0;
    for (lo, hi) in chunks(range, CHUNK) {
        let mut zadd = redis::cmd("ZADD");
        zadd.arg(ids).arg("NX");
        for n in lo..=hi {
            zadd.arg(0).arg(WorkerId(n).encode());
        }
        added += store.query::<u64>(&zadd).await?;
    }
    Ok(added)
}

/// Removes `range` from the pool, chunk by chunk, each while the range
/// recorded is still `decided`, this init's.
pub(super) async fn remove(
    store: &mut Store,
    keys: &PoolKeys,
    decided: (u64, u64),
    range: RangeInclusive<u64>,
) -> Result<u64> {
    let mut removed = 0;
    for (lo, hi) in chunks(range, SHRINK_CHUNK) {
        let invocation = Shrink {
            keys,
            decided,
            ids: lo..=hi,
        }
        .invocation();
        removed += match store.script::<i64>(&invocation).await? {
            // -1: another init decided since.
            Ok(n) => match u64::try_from(n) {
                Ok(n) => n,
                Err(_) => return Err(overtaken(store, keys, decided).await),
            },
            Err(e) => return Err(pool_error(store, &e)),
        };
    }
    Ok(removed)
}

/// What an init whose removal found another init's decision says: the
/// later decision stands, and this init stopped short of taking its ids.
async fn overtaken(store: &mut Store, keys: &PoolKeys, (min, max): (u64, u64)) -> Error {
    let now = match recorded_range(store, keys).await {
        Ok(Some((lo, hi))) => format!("the range {lo}..{hi}"),
        _ => "another range".to_string(),
    };
    Error::State(format!(
        "another init gave the pool {} {now} while this one was removing the ids outside \
         {min}..{max}; this one stopped, and the other's range stands: run init again if \
         {min}..{max} is still wanted",
        keys.ids
    ))
}

/// Runs resize.lua: records `min..=max` as the pool's range, or refuses,
/// having written nothing, while an id outside it is leased and `force` is
/// not given. Returns the leased ids taken (with `force`), with their holders.
pub(super) async fn decide(
    store: &mut Store,
    keys: &PoolKeys,
    (min, max): (u64, u64),
    force: bool,
    removing: &[RangeInclusive<u64>],
) -> Result<Vec<(String, String)>> {
    let invocation = Resize {
        keys,
        min,
        max,
        force,
    }
    .invocation();
    let reply = match store.script::<redis::Value>(&invocation).await? {
        Ok(reply) => reply,
        Err(e) => return Err(pool_error(store, &e)),
    };
    let reply = store.answer(reply)?;
    let recorded = reply.code()?;
    let mut leased = Vec::new();
    for i in (1..reply.len()).step_by(2) {
        let member = reply.text(i)?;
        let owner = reply.text(i + 1)?;
        let id = WorkerId::decode(&member).map_or(member, |id| id.to_string());
        leased.push((id, owner));
    }
    if recorded == 1 {
        return Ok(leased);
    }
    Err(refusal(&keys.ids, (min, max), removing, &leased))
}

/// The refusal of a shrink of `pool` to `min..=max` that would remove the
/// ids `removing`, some of which are `leased` (with their holders).
pub(super) fn refusal(
    pool: &str,
    (min, max): (u64, u64),
    removing: &[RangeInclusive<u64>],
    leased: &[(String, String)],
) -> Error {
    Error::State(format!(
        "refusing to change the pool {pool} to {min}..{max}: it would remove ids {}, and {} of \
         them {} leased: {}; nothing was changed. Retry once they are released, or pass {} to \
         take them from their holders (each loses its id at its next renewal, and its command \
         is stopped)",
        ranges(removing),
        leased.len(),
        if leased.len() == 1 { "is" } else { "are" },
        holders(leased),
        Setting::Force
    ))
}

/// `6..10, 20` for messages.
pub(super) fn ranges(ranges: &[RangeInclusive<u64>]) -> String {
    let one = |r: &RangeInclusive<u64>| match r.start() == r.end() {
        true => r.start().to_string(),
        false => format!("{}..{}", r.start(), r.end()),
    };
    ranges.iter().map(one).collect::<Vec<_>>().join(", ")
}

/// "id 7 (by host-a-1.000-1)", "ids 7 (by …), 9 (by …) and 2 more": the
/// first few leased ids and their holders.
pub(super) fn holders(leased: &[(String, String)]) -> String {
    const SHOWN: usize = 3;
    let by = |(id, owner): &(String, String)| match owner.is_empty() {
        true => id.clone(),
        false => format!("{id} (by {owner})"),
    };
    let mut text = leased
        .iter()
        .take(SHOWN)
        .map(by)
        .collect::<Vec<_>>()
        .join(", ");
    if leased.len() > SHOWN {
        text.push_str(&format!(" and {} more", leased.len() - SHOWN));
    }
    match leased.len() {
        1 => format!("id {text}"),
        _ => format!("ids {text}"),
    }
}

/// `a` minus `b`, as at most two ranges.
fn difference(a: RangeInclusive<u64>, b: RangeInclusive<u64>) -> Vec<RangeInclusive<u64>> {
    let (a0, a1, b0, b1) = (*a.start(), *a.end(), *b.start(), *b.end());
    if b1 < a0 || b0 > a1 {
        return vec![a];
    }
    let mut out = Vec::new();
    if a0 < b0 {
        out.push(a0..=b0 - 1);
    }
    if b1 < a1 {
        out.push(b1 + 1..=a1);
    }
    out
}

/// Splits a range into consecutive `(lo, hi)` pieces of at most `size` ids.
fn chunks(range: RangeInclusive<u64>, size: u64) -> impl Iterator<Item = (u64, u64)> {
    let (start, end) = (*range.start(), *range.end());
    let mut lo = Some(start);
    std::iter::from_fn(move || {
        let l = lo?;
        let h = l.saturating_add(size - 1).min(end);
        lo = if h == end { None } else { Some(h + 1) };
        Some((l, h))
    })
}

/// Records the pool's range in its stats hash, where `stats` and the next
/// `init` read it without scanning the pool.
async fn record_range(store: &mut Store, keys: &PoolKeys, min: u64, max: u64) -> Result<()> {
    store
        .query::<()>(
            redis::cmd("HSET")
                .arg(&keys.stats)
                .arg("min")
                .arg(min)
                .arg("max")
                .arg(max),
        )
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences() {
        assert_eq!(difference(1..=2047, 1..=1023), vec![1024..=2047]);
        assert_eq!(difference(1..=1023, 1..=2047), vec![]);
        assert_eq!(difference(1..=10, 3..=5), vec![1..=2, 6..=10]);
        assert_eq!(difference(1..=10, 20..=30), vec![1..=10]);
        assert_eq!(difference(0..=0, 1..=5), vec![0..=0]);
    }

    #[test]
    fn chunking_covers_the_range_once() {
        let c: Vec<_> = chunks(1..=25, 10).collect();
        assert_eq!(c, vec![(1, 10), (11, 20), (21, 25)]);
        let c: Vec<_> = chunks(5..=5, 10).collect();
        assert_eq!(c, vec![(5, 5)]);
        let c: Vec<_> = chunks(u64::MAX - 1..=u64::MAX, 10).collect();
        assert_eq!(c, vec![(u64::MAX - 1, u64::MAX)]);
    }
}
