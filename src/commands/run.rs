//! `yaraus run`: lease a worker id, run the command with it, release it.

use super::PoolContext;
use crate::cli::RunArgs;
use crate::error::{Error, Result};
use crate::lease::{Acquired, Lease, LeaseTerms};
use crate::supervise::hold::kill_after_within;
use crate::supervise::{ChildSpec, HoldOptions, Keeper, Signals, Watchdog, hold, substitute};
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

/// Timing as given on the command line.
#[derive(Debug, Clone, Copy)]
pub struct Requested {
    pub interval: Duration,
    pub delay: Option<Duration>,
    pub expire: Duration,
    pub kill_after: Option<Duration>,
    pub safeguards: bool,
}

impl Timing {
    /// Applies the safeguards: expire ≥ 1s, interval ≤ expire/2, delay ≥
    /// 2 × interval + kill-after. The last makes sure that a previous holder
    /// whose record was lost (failover, restart without persistence) has seen
    /// the ownership error at its next renewal and killed its command before
    /// the new holder starts its own. A value that breaks one is raised, with
    /// a warning (returned); without safeguards all are kept as given.
    ///
    /// `--kill-after` is not a safeguard but part of the promise (the command
    /// is gone by the deadline): one that does not fit is refused, always.
    pub fn safeguarded(req: Requested) -> Result<(Timing, Vec<String>)> {
        let mut warnings = Vec::new();
        let fmt = |d: Duration| humantime::format_duration(d).to_string();
        let (mut expire, mut interval) = (req.expire, req.interval);
        if req.safeguards && expire < Duration::from_secs(1) {
            let min = Duration::from_secs(1);
            warnings.push(format!(
                "WARNING: --expire {} is too short; using {} instead",
                fmt(expire),
                fmt(min)
            ));
            expire = min;
        }
        if req.safeguards && interval > expire / 2 {
            let max = expire / 2;
            warnings.push(format!(
                "WARNING: --interval {} is too long for --expire {}; using {} instead",
                fmt(interval),
                fmt(expire),
                fmt(max)
            ));
            interval = max;
        }
        let validity = LeaseTerms { expire }.validity();
        let kill_after = kill_after_within(
            req.kill_after,
            validity,
            interval,
            req.safeguards,
            "--expire",
        )?;
        let min_delay = interval * 2 + kill_after;
        let mut delay = req.delay.unwrap_or(min_delay);
        if req.safeguards && delay < min_delay {
            warnings.push(format!(
                "WARNING: --delay {} is shorter than 2 x interval + kill-after; using {} instead",
                fmt(delay),
                fmt(min_delay)
            ));
            delay = min_delay;
        }
        let timing = Timing {
            interval,
            delay,
            expire,
            kill_after,
        };
        Ok((timing, warnings))
    }
}

pub async fn run(ctx: &PoolContext, args: RunArgs, watchdog: Watchdog) -> Result<i32> {
    let (timing, warnings) = Timing::safeguarded(Requested {
        interval: args.interval,
        delay: args.delay,
        expire: args.expire,
        kill_after: args.kill_after,
        safeguards: !args.no_safeguards,
    })?;
    if args.no_safeguards {
        crate::warn!("safeguards are off: --expire, --interval and --delay are used as given");
    }
    for w in warnings {
        crate::warn!("{w} (--no-safeguards keeps it)");
    }
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
    let keeper = Keeper::start(*lease, timing.interval, deadline, timing.kill_after);
    let options = HoldOptions {
        delay: timing.delay,
        kill_after: timing.kill_after,
        release_timeout: ctx.timeouts.response,
    };
    hold(keeper, watchdog, &spec, options, &mut signals).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn req(interval: u64, delay: Option<u64>, expire: u64, kill_after: Option<u64>) -> Requested {
        Requested {
            interval: ms(interval),
            delay: delay.map(ms),
            expire: ms(expire),
            kill_after: kill_after.map(ms),
            safeguards: true,
        }
    }

    fn t(interval: u64, delay: u64, expire: u64, kill_after: u64) -> Timing {
        Timing {
            interval: ms(interval),
            delay: ms(delay),
            expire: ms(expire),
            kill_after: ms(kill_after),
        }
    }

    #[test]
    fn defaults_pass_the_safeguards() {
        let (safe, warnings) = Timing::safeguarded(req(1000, None, 1_800_000, None)).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(safe, t(1000, 7000, 1_800_000, 5000));
    }

    #[test]
    fn unsafe_values_are_raised() {
        let (safe, warnings) = Timing::safeguarded(req(2000, Some(0), 500, Some(100))).unwrap();
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert_eq!(safe, t(500, 1100, 1000, 100));
    }

    #[test]
    fn a_kill_after_longer_than_the_lease_allows_is_refused_even_without_safeguards() {
        let e = Timing::safeguarded(req(500, None, 2000, Some(1800))).unwrap_err();
        assert!(matches!(e, Error::Usage(_)), "{e}");
        let mut r = req(500, None, 2000, Some(1800));
        r.safeguards = false;
        assert!(
            Timing::safeguarded(r).is_ok(),
            "1.8 s fits in a 1.978 s lease"
        );
        r.kill_after = Some(ms(2000));
        assert!(Timing::safeguarded(r).is_err());
    }
}
