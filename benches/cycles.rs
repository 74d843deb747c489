//! Lock cycles through the library (N acquire + release cycles), beside a
//! PING loop over the same masters in the same run. Part of the benchmark
//! harness, not of the library: it uses only the library's public API.
//!
//! The target is "≥ 80% of the two-round-trip limit": a cycle needs
//! at least two round trips (the acquire script, with its fencing token, and
//! the release script), so the limit is `1 / (2 × rtt)` cycles per second,
//! where `rtt` is what one concurrent PING to every master costs, measured by
//! the same process, the same way the lock talks to them (one multiplexed
//! connection per master, one request to all of them at once).
//!
//! With several masters, the fencing vote rides in the acquire script once
//! the process knows the counter (after the first cycle), so the steady state
//! is two round trips there too. Every cycle uses a fresh token, as every real
//! acquisition does.
//!

use crate::{BLOCKS, take_turns};
use serde::Serialize;
use std::time::Duration;
use yaraus::error::{Error, Result};
use yaraus::lock::{Attempt, LockOptions, Locker, Token};
use yaraus::store::Quorum;
use yaraus::store::Target;

/// What [`acquire_release_cycles`] measured.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub masters: usize,
    pub cycles: u64,
    /// Wall time of the cycles, in seconds.
    pub seconds: f64,
    pub cycles_per_second: f64,
    /// Mean time of one PING sent to every master at once, in microseconds.
    pub ping_round_trip_us: f64,
    /// `1 / (2 × ping round trip)`: the most cycles a second two round trips allow.
    pub two_round_trip_limit_per_second: f64,
    /// `cycles_per_second / two_round_trip_limit_per_second`.
    pub fraction_of_limit: f64,
}

/// Runs `cycles` acquire + release cycles of the lock `name` on `urls` (one
/// master, or several), one after the other, and as many PINGs to measure
/// the round trip, the two taking turns in ten blocks. Fails if any acquisition is refused (the lock must be
/// free: use a name nobody else uses). Needs a tokio runtime; see
/// [`acquire_release_cycles_blocking`] for one that makes its own.
pub async fn acquire_release_cycles(
    urls: &[String],
    name: &str,
    cycles: u64,
    options: LockOptions,
) -> Result<BenchReport> {
    if cycles == 0 {
        return Err(Error::Usage(
            "the benchmark needs at least one cycle".into(),
        ));
    }
    let targets = urls
        .iter()
        .map(|u| Target::parse(u))
        .collect::<Result<Vec<_>>>()?;
    let mut quorum = Quorum::new(&targets, options.request_timeout, false)?;
    let mut locker = Locker::new(&targets, name, options)?;

    // Warm up: connections dialed, scripts loaded, fencing counter known.
    ping_all(&mut quorum).await?;
    one_cycle(&mut locker).await?;

    // PINGs and cycles take turns in blocks, so that a machine whose speed
    // drifts during the run (a VM's neighbours) slows both alike.
    let n = cycles as usize;
    let turns = take_turns(
        &mut (quorum, locker),
        BLOCKS,
        &[n, n],
        async |(quorum, locker), i| match i {
            0 => ping_all(quorum).await,
            _ => one_cycle(locker).await,
        },
    )
    .await?;
    let ping_time: Duration = turns[0].iter().sum();
    let cycle_time: Duration = turns[1].iter().sum();
    let rtt = ping_time.as_secs_f64() / cycles as f64;
    let seconds = cycle_time.as_secs_f64();
    let cycles_per_second = cycles as f64 / seconds;
    let limit = 1.0 / (2.0 * rtt);
    Ok(BenchReport {
        masters: targets.len(),
        cycles,
        seconds,
        cycles_per_second,
        ping_round_trip_us: rtt * 1e6,
        two_round_trip_limit_per_second: limit,
        fraction_of_limit: cycles_per_second / limit,
    })
}

/// [`acquire_release_cycles`] on a runtime of its own (a current-thread one,
/// like the binary's), for callers without tokio.
pub fn acquire_release_cycles_blocking(
    urls: &[String],
    name: &str,
    cycles: u64,
    options: LockOptions,
) -> Result<BenchReport> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::State(format!("cannot start a tokio runtime: {e}")))?;
    runtime.block_on(acquire_release_cycles(urls, name, cycles, options))
}

async fn one_cycle(locker: &mut Locker) -> Result<()> {
    let token = Token::generate()?;
    match locker.try_acquire(&token).await? {
        Attempt::Acquired(_) => {}
        Attempt::Refused(refusal) => return Err(refusal.into_error(Some(Duration::ZERO))),
    }
    let released = locker.release(&token).await;
    if released.freed < locker.majority() {
        return Err(Error::Unavailable(format!(
            "released on only {} of {} masters: {}",
            released.freed,
            released.masters,
            released.problems.join("; ")
        )));
    }
    Ok(())
}

async fn ping_all(quorum: &mut Quorum) -> Result<()> {
    let replies = quorum
        .round(|node| async move {
            node.store()
                .query::<String>(&redis::cmd("PING"))
                .await
                .map(drop)
        })
        .all()
        .await;
    replies.into_iter().collect()
}
