//! `yaraus run`: lease a worker id, run the command with it, release it.

use super::PoolContext;
use crate::cli::RunArgs;
use crate::error::{Error, Result};
use crate::hold::{HoldOptions, hold};
use crate::keeper::LeaseKeeper;
use crate::lease::{Acquired, Lease, LeaseTerms};
use crate::signals::Signals;
use crate::supervise::{ChildSpec, substitute};
use std::time::Duration;
use tokio::time::Instant;

/// Timing of a run after the safeguards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub interval: Duration,
    pub delay: Duration,
    pub expire: Duration,
    pub kill_after: Duration,
}

impl Timing {
    /// Applies the safeguards: expire ≥ 1s, interval ≤ expire/2, delay ≥
    /// 2 × interval + kill-after. The last makes sure that a previous holder
    /// whose record was lost (failover, restart without persistence) has seen
    /// the ownership error at its next renewal and killed its child before
    /// the new holder starts its own. Returns the warnings.
    pub fn safeguarded(self) -> (Timing, Vec<String>) {
        let mut t = self;
        let mut warnings = Vec::new();
        let fmt = |d: Duration| humantime::format_duration(d).to_string();
        if t.expire < Duration::from_secs(1) {
            let min = Duration::from_secs(1);
            warnings.push(format!(
                "WARNING: --expire {} is too short; using {} instead",
                fmt(t.expire),
                fmt(min)
            ));
            t.expire = min;
        }
        if t.interval > t.expire / 2 {
            let max = t.expire / 2;
            warnings.push(format!(
                "WARNING: --interval {} is too long for --expire {}; using {} instead",
                fmt(t.interval),
                fmt(t.expire),
                fmt(max)
            ));
            t.interval = max;
        }
        let min_delay = t.interval * 2 + t.kill_after;
        if t.delay < min_delay {
            warnings.push(format!(
                "WARNING: --delay {} is shorter than 2 x interval + kill-after; using {} instead",
                fmt(t.delay),
                fmt(min_delay)
            ));
            t.delay = min_delay;
        }
        (t, warnings)
    }
}

pub async fn run(ctx: &PoolContext, args: RunArgs) -> Result<i32> {
    let requested = Timing {
        interval: args.interval,
        delay: args.delay.unwrap_or(args.interval * 2 + args.kill_after),
        expire: args.expire,
        kill_after: args.kill_after,
    };
    let timing = if args.no_safeguards {
        crate::warn!("safeguards are off: --expire, --interval and --delay are used as given");
        requested
    } else {
        let (t, warnings) = requested.safeguarded();
        for w in warnings {
            crate::warn!("{w} (--no-safeguards keeps it)");
        }
        t
    };
    // Caught from now on, so that a signal during the wait ends it cleanly.
    let mut signals =
        Signals::install().map_err(|e| Error::State(format!("cannot catch signals: {e}")))?;
    let mut store = ctx.connect().await?;
    let terms = LeaseTerms {
        expire: timing.expire,
    };
    let give_up = args.wait.map(|w| Instant::now() + w);

    let mut client_id = String::new();
    let mut announced = false;
    let (lease, deadline) = loop {
        let attempt = Lease::acquire(&mut store, &ctx.keys, &mut client_id, terms).await;
        // Announced once the pool has answered, so that a pool that is not
        // there (bad input) gets one line on stderr: the error.
        if !announced && !matches!(&attempt, Err(e) if !e.is_unavailable()) {
            crate::info!("getting new id...");
            announced = true;
        }
        let why = match attempt {
            Ok(Acquired::Leased { lease, deadline }) => break (lease, deadline),
            Ok(Acquired::Exhausted { next_free }) => Error::Exhausted(format!(
                "no id is free in {} (the next one frees in {})",
                ctx.keys.ids,
                humantime::format_duration(Duration::from_secs(next_free.as_secs()))
            )),
            Ok(Acquired::NotReplicated { why }) => Error::Unavailable(why),
            Err(e) if e.is_unavailable() => e,
            Err(e) => return Err(e),
        };
        let now = Instant::now();
        let mut pause = timing.interval;
        if let Some(limit) = give_up {
            if now >= limit {
                return Err(match why {
                    Error::Exhausted(m) => Error::Exhausted(format!(
                        "{m}; gave up after --wait {}",
                        humantime::format_duration(args.wait.unwrap_or_default())
                    )),
                    e => e,
                });
            }
            pause = pause.min(limit - now);
        }
        crate::info!("{why}; retrying in {}", humantime::format_duration(pause));
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            sig = signals.recv() => return Err(Error::Interrupted(sig as i32)),
        }
    };
    let id = lease.id().to_string();
    crate::info!("client id: {}, id: {id}", lease.client_id());

    let spec = ChildSpec {
        argv: substitute(&args.command, &args.replacement, &id),
        env: vec![
            ("YARAUS_WORKER_ID".into(), id),
            ("YARAUS_CLIENT_ID".into(), lease.client_id().to_string()),
        ],
    };
    let keeper = LeaseKeeper::start(*lease, timing.interval, deadline);
    let options = HoldOptions {
        delay: timing.delay,
        kill_after: timing.kill_after,
        release_timeout: ctx.timeouts.response,
    };
    hold(keeper, &spec, options, &mut signals).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(interval: u64, delay: u64, expire: u64, kill_after: u64) -> Timing {
        Timing {
            interval: Duration::from_millis(interval),
            delay: Duration::from_millis(delay),
            expire: Duration::from_millis(expire),
            kill_after: Duration::from_millis(kill_after),
        }
    }

    #[test]
    fn defaults_pass_the_safeguards() {
        let (safe, warnings) = t(1000, 7000, 1_800_000, 5000).safeguarded();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(safe, t(1000, 7000, 1_800_000, 5000));
    }

    #[test]
    fn unsafe_values_are_raised() {
        let (safe, warnings) = t(2000, 0, 500, 100).safeguarded();
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert_eq!(safe, t(500, 1100, 1000, 100));
    }
}
