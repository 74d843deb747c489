//! `yaraus run`: lease a worker id, run the command with it, release it.

use super::PoolContext;
use crate::cli::RunArgs;
use crate::error::{Error, Result};
use crate::lease::{Acquired, Lease, LeaseTerms, Requested, Timing};
use crate::supervise::{ChildSpec, HoldOptions, Keeper, Signals, Watchdog, hold, substitute};
use std::time::Duration;
use tokio::time::Instant;

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
