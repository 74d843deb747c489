//! A pool's range: as its stats record it (`min` and `max`, written by
//! `init`), or measured by walking its members, for a pool that records
//! none (made by the Go tool); and that walk, which `init` also uses to
//! find the ids a shard holds outside its runs.

use super::keys::PoolKeys;
use super::worker_id::WorkerId;
use crate::error::{Error, Result};
use crate::store::Store;

/// Members asked for per `ZSCAN` step.
const SCAN_COUNT: u64 = 10_000;

/// The pool's range as recorded in its stats (`None` for a pool made by
/// the Go tool, which records none, or no pool).
pub async fn recorded_range(store: &mut Store, keys: &PoolKeys) -> Result<Option<(u64, u64)>> {
    let (min, max): (Option<u64>, Option<u64>) = store
        .query(redis::cmd("HMGET").arg(&keys.stats).arg("min").arg("max"))
        .await?;
    Ok(min.zip(max))
}

/// Scans a pool (one written by the Go tool, say) for its smallest and
/// largest id.
pub(super) async fn measure(store: &mut Store, keys: &PoolKeys) -> Result<(u64, u64)> {
    let mut range: Option<(u64, u64)> = None;
    each_member(store, keys, |member| {
        let id = WorkerId::decode(&member).ok_or_else(|| {
            Error::State(format!(
                "the pool {} holds '{member}', which is not an encoded id (A1, B10, …)",
                keys.ids
            ))
        })?;
        range = Some(match range {
            None => (id.0, id.0),
            Some((lo, hi)) => (lo.min(id.0), hi.max(id.0)),
        });
        Ok(())
    })
    .await?;
    range.ok_or_else(|| Error::State(format!("the pool {} is empty", keys.ids)))
}

/// Gives `each` every member of the pool `keys`, walked with `ZSCAN`
/// ([`SCAN_COUNT`] at a time, never blocking the server); stops at its first error.
pub(super) async fn each_member(
    store: &mut Store,
    keys: &PoolKeys,
    mut each: impl FnMut(String) -> Result<()>,
) -> Result<()> {
    let mut cursor: u64 = 0;
    loop {
        let (next, page): (u64, Vec<(String, f64)>) = store
            .query(
                redis::cmd("ZSCAN")
                    .arg(&keys.ids)
                    .arg(cursor)
                    .arg("COUNT")
                    .arg(SCAN_COUNT),
            )
            .await?;
        for (member, _) in page {
            each(member)?;
        }
        if next == 0 {
            return Ok(());
        }
        cursor = next;
    }
}
