//! `yaraus run`: lease a worker id, run the command with it, release it.

use crate::cli::RunArgs;
use yaraus::claim::{Keeper, wait_for};
use yaraus::context::PoolContext;
use yaraus::error::{Error, Result};
use yaraus::lease::{self, Leaser, Requested, Timing};
use yaraus::supervise::{ChildSpec, HoldOptions, Signals, Watchdog, hold, substitute};

pub async fn run(ctx: &PoolContext, args: RunArgs, watchdog: Watchdog) -> Result<i32> {
    let env_remove = args.child_env.removed()?;
    let range = args.min.zip(args.max);
    if let Some((min, max)) = range {
        lease::validate_range(min, max)?;
    }
    let (timing, warnings) = Timing::safeguarded(Requested {
        interval: args.interval,
        delay: args.delay,
        expire: args.expire,
        kill_after: args.kill_after,
        safeguards: !args.no_safeguards,
    })?;
    if args.no_safeguards {
        yaraus::warn!("safeguards are off: --expire, --interval and --delay are used as given");
    }
    for adjusted in warnings {
        yaraus::warn!("WARNING: {adjusted} (--no-safeguards keeps it)");
    }
    // Caught from now on, so that a signal during the wait ends it cleanly.
    let mut signals =
        Signals::install().map_err(|e| Error::State(format!("cannot catch signals: {e}")))?;
    // Not dialed yet: a Redis out of reach is waited out like a busy pool.
    let mut leaser = Leaser::new(ctx.store()?, ctx.keys.clone(), &timing);
    if let Some((min, max)) = range {
        leaser = leaser.recreating(min, max);
    }
    let cancel = async { Error::Interrupted(signals.recv().await as i32) };
    let lease = wait_for(&mut leaser, ctx.wait, cancel).await?;
    let id = lease.id().to_string();
    yaraus::info!("client id: {}, id: {id}", lease.client_id());

    let spec = ChildSpec {
        argv: substitute(&args.command, &args.replacement, &id),
        env: vec![
            ("YARAUS_WORKER_ID".into(), id),
            ("YARAUS_CLIENT_ID".into(), lease.client_id().to_string()),
        ],
        env_remove,
    };
    let deadline = lease.deadline();
    let keeper = Keeper::start(lease, timing.interval(), deadline, timing.kill_after());
    let options = HoldOptions {
        delay: timing.delay(),
        kill_after: timing.kill_after(),
        release_timeout: ctx.timeouts.release(),
    };
    hold(keeper, watchdog, &spec, options, &mut signals).await
}
