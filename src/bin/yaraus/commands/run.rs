//! `yaraus run`: lease a worker id, run the command with it, release it.

use crate::cli::{RunArgs, command_env};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Unit;
use std::sync::atomic::AtomicU64;
use std::time::Duration;
use yaraus::base::setting::Setting;
use yaraus::claim::{Claim, Keeper, wait_for};
use yaraus::context::PoolContext;
use yaraus::error::{Error, Result};
use yaraus::lease::clock_guard::{show_wall, wall_instant, wall_ms};
use yaraus::lease::{self, ClockPolicy, Lease, Leaser};
use yaraus::metrics::{Kind, Metrics, http};
use yaraus::supervise::{ChildSpec, HoldOptions, Signals, StartAfter, Watchdog, hold, substitute};
use yaraus::timing::clock_guard::offset_warning;
use yaraus::timing::lease::{Requested, Timing};

pub async fn run(ctx: &PoolContext, args: RunArgs, watchdog: Watchdog) -> Result<i32> {
    let metrics_args = args.metrics.clone();
    http::with_metrics(
        metrics_args.metrics_listen.as_deref(),
        Kind::Run,
        |metrics| run_with(ctx, args, watchdog, metrics),
    )
    .await
}

async fn run_with(
    ctx: &PoolContext,
    args: RunArgs,
    watchdog: Watchdog,
    metrics: Metrics,
) -> Result<i32> {
    // Before the first wait: a scrape never sees the page without them.
    let mut measured = RunMetrics::register(&metrics);
    let env_remove = args.child_env.removed()?;
    let range = args.min.zip(args.max);
    if let Some((min, max)) = range {
        lease::validate_range(min, max)?;
    }
    let timing = timing(&args)?;
    // Caught from now on, so that a signal during the wait ends it cleanly.
    let mut signals =
        Signals::install().map_err(|e| Error::State(format!("cannot catch signals: {e}")))?;
    // Not dialed yet: a Redis out of reach is waited out like a busy pool.
    let mut leaser = Leaser::new(ctx.store()?, ctx.keys.clone(), &timing)
        .clock(clock_policy(&args, timing.delay()))
        .waiting_as(crate::settings::wait_options(&args.knobs));
    if let Some((min, max)) = range {
        leaser = leaser.recreating(min, max);
    }
    let cancel = async { Error::Interrupted(signals.recv().await as i32) };
    let mut lease = wait_for(&mut leaser, ctx.wait, cancel).await?;
    let start_after = match clock_guard(&lease, timing.delay(), args.max_clock_wait) {
        Ok(after) => after,
        Err(e) => {
            lease.never_ran();
            let _ = lease.release().await;
            return Err(e);
        }
    };
    let id = lease.id().to_string();
    said_leased(&lease);
    // Said once the command is sure to start, so that a run that fails
    // before it (no free id, a bad URL) still says one line: its error.
    if let Some(warning) = unplaced_id(&args.command, &args.replacement) {
        log::warn!("{warning}");
    }

    let spec = ChildSpec {
        argv: substitute(&args.command, &args.replacement, &id),
        env: vec![
            (command_env::WORKER_ID.into(), id),
            (command_env::CLIENT_ID.into(), lease.client_id().to_string()),
        ],
        env_remove,
    };
    let deadline = lease.deadline();
    let keeper = Keeper::observed(
        lease,
        timing.interval(),
        deadline,
        timing.kill_after(),
        metrics,
        move |lease: &Lease| measured.measure(lease.clock_offset(), lease.wait_shortfalls()),
    );
    let options = HoldOptions {
        delay: timing.delay(),
        kill_after: timing.kill_after(),
        release_timeout: ctx.timeouts.release(),
        start_after,
    };
    hold(keeper, watchdog, &spec, options, &mut signals).await
}

/// The timing asked for, made safe unless `--no-safeguards`; each value
/// adjusted is a warning.
fn timing(args: &RunArgs) -> Result<Timing> {
    let (timing, warnings) = Timing::safeguarded(Requested {
        interval: args.interval,
        delay: args.delay,
        expire: args.expire,
        kill_after: args.kill_after,
        safeguards: !args.no_safeguards,
    })?;
    if args.no_safeguards {
        log::warn!("safeguards are off: --expire, --interval and --delay are used as given");
    }
    for adjusted in warnings {
        log::warn!("WARNING: {adjusted} (--no-safeguards keeps it)");
    }
    Ok(timing)
}

/// What run shows of its worker id beyond what every claim shows (the
/// keeper's renewals): the clock offset its lease measures, and the writes
/// WAIT confirmed short of their replicas. Empty without `--metrics-listen`.
#[derive(Default)]
struct RunMetrics(Option<RunSeries>);

struct RunSeries {
    wait_shortfalls: Counter,
    clock_offset: Gauge<f64, AtomicU64>,
    /// The lease's shortfalls counted so far (its count only grows).
    counted: u64,
}

impl RunMetrics {
    fn register(metrics: &Metrics) -> RunMetrics {
        RunMetrics(metrics.register(|r| {
            let series = RunSeries {
                wait_shortfalls: Counter::default(),
                clock_offset: Gauge::default(),
                counted: 0,
            };
            r.register(
                "wait_shortfalls",
                "Renewals the replicas confirmed short of their majority (WAIT), still counted",
                series.wait_shortfalls.clone(),
            );
            r.register_with_unit(
                "clock_offset",
                "This host's wall clock minus the Redis server's, as last measured by run",
                Unit::Seconds,
                series.clock_offset.clone(),
            );
            series
        }))
    }

    /// What the lease measured, at its start and after each renewal: its
    /// clock offset (in seconds, if known) and its shortfalls so far.
    fn measure(&mut self, offset: Option<f64>, shortfalls: u64) {
        let Some(m) = &mut self.0 else {
            return;
        };
        if let Some(offset) = offset {
            m.clock_offset.set(offset);
        }
        m.wait_shortfalls
            .inc_by(shortfalls.saturating_sub(m.counted));
        m.counted = shortfalls;
    }
}

/// The clock guard's policy, as `--max-clock-offset` and
/// `--stop-on-clock-step` ask, warning of an offset that the grace `delay`
/// was not sized for.
fn clock_policy(args: &RunArgs, delay: Duration) -> ClockPolicy {
    ClockPolicy {
        max_offset: args.max_clock_offset,
        stop_on_step: args.stop_on_clock_step,
        warn_over: offset_warning(delay),
    }
}

/// The warning for a command that never sees the worker id in its
/// arguments: most often a forgotten `<>` (`run -- ./gen --worker`), and
/// the id then reaches it only through the environment. A command that
/// names `YARAUS_WORKER_ID` (`sh -c '... $YARAUS_WORKER_ID'`) reads it there,
/// and an empty `--replacement` says substitution is not wanted: no warning.
fn unplaced_id(command: &[String], placeholder: &str) -> Option<String> {
    let mentions = |text: &str| command.iter().any(|a| a.contains(text));
    if placeholder.is_empty() || mentions(placeholder) || mentions("YARAUS_WORKER_ID") {
        return None;
    }
    Some(format!(
        "COMMAND has no {placeholder} for the worker id, so it gets the id only in its \
         environment, as YARAUS_WORKER_ID; if that is intended, pass --replacement '' (or \
         name YARAUS_WORKER_ID in COMMAND) and this warning goes"
    ))
}

/// What the command waits for when the id has a clock record.
const PAST_THE_HORIZON: &str =
    "the last instant at which the previous holder could make ids (on its clock)";

/// What it waits for when the id has none (a new pool, a lost record) and
/// `--max-clock-offset` bounds every holder's clock.
const PAST_THE_BOUND: &str = "the server's time at the end of --delay plus --max-clock-offset \
     (on this host's clock): the id has no clock record, and no holder within that offset of \
     the server can have made an id later";

/// The wall-clock instant the command waits for (the id's previous holder's
/// horizon, or the bound of an id without one), or `Err` when that is more
/// than `max_wait` beyond the delay.
fn clock_guard(
    lease: &Lease,
    delay: std::time::Duration,
    max_wait: std::time::Duration,
) -> Result<Option<StartAfter>> {
    let Some(handover) = lease.handover(delay) else {
        return Ok(None);
    };
    if handover.beyond_delay <= max_wait {
        return Ok(Some(StartAfter {
            at: wall_instant(handover.floor),
            what: match handover.horizon {
                Some(_) => PAST_THE_HORIZON,
                None => PAST_THE_BOUND,
            },
        }));
    }
    let ours = show_wall(wall_ms());
    let why = match handover.horizon {
        Some(horizon) => format!(
            "its previous holder could make ids until {} on its clock, and this host's clock \
             shows {ours}",
            show_wall(horizon)
        ),
        None => format!(
            "it has no clock record (a new pool, or one restarted empty), and this host's clock \
             ({ours}) is {}",
            lease.offset().describe()
        ),
    };
    Err(Error::Exhausted(format!(
        "id {}: {why}: waiting {} beyond {} for this clock to pass it is more than {} {}; \
         gave the id back",
        lease.id(),
        yaraus::base::duration::shown(handover.beyond_delay),
        Setting::Delay,
        Setting::MaxClockWait,
        yaraus::base::duration::shown(max_wait)
    )))
}

/// The lease in the log: every line from here on names the id and the
/// client (JSON fields), and a line says which they are.
fn said_leased(lease: &Lease) {
    crate::logger::set_context("id", lease.id().0);
    crate::logger::set_context("client_id", lease.client_id());
    log::info!("client id: {}, id: {}", lease.client_id(), lease.id());
}

#[cfg(test)]
mod tests {
    use super::{RunMetrics, unplaced_id};
    use yaraus::metrics::{Kind, Metrics};

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn warns_only_when_the_id_is_nowhere_in_the_command() {
        assert!(unplaced_id(&argv(&["./gen", "--worker"]), "<>").is_some());
        assert!(unplaced_id(&argv(&["./gen", "--worker=<>"]), "<>").is_none());
        assert!(unplaced_id(&argv(&["./gen", "{id}"]), "{id}").is_none());
        let sh = argv(&["sh", "-c", "exec ./gen --worker $YARAUS_WORKER_ID"]);
        assert!(unplaced_id(&sh, "<>").is_none());
        assert!(unplaced_id(&argv(&["./gen"]), "").is_none());
    }

    #[test]
    fn run_shows_its_clock_offset_and_the_shortfalls_once_each() {
        let metrics = Metrics::new(Kind::Run);
        let mut measured = RunMetrics::register(&metrics);
        measured.measure(Some(-0.25), 2);
        measured.measure(None, 3);
        let text = metrics.render();
        for line in [
            "yaraus_clock_offset_seconds -0.25",
            "yaraus_wait_shortfalls_total 3",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
        RunMetrics::register(&Metrics::off()).measure(Some(1.0), 1);
    }
}
