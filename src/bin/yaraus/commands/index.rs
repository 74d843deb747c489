//! `yaraus index`: run a command under this replica's (index, replicas), and
//! start it again, safely, whenever the pair changes; or print the pairs;
//! or report the index's recent intervals.

use crate::cli::{IndexArgs, command_env};
use crate::stdout::{write_stdout, write_stdout_while_read};
use std::time::Duration;
use yaraus::claim::Keeper;
use yaraus::context::Context;
use yaraus::error::{Error, Result};
use yaraus::index::{Index, IndexKeys, Pair, Replica, status};
use yaraus::metrics::{Kind, Metrics, http};
use yaraus::store::Store;
use yaraus::supervise::{ChildSpec, HoldOptions, Signals, Watchdog, hold_once, substitute};
use yaraus::timing::Timeouts;
use yaraus::timing::index::Timing;

pub async fn index(ctx: &Context, args: IndexArgs, watchdog: Result<Watchdog>) -> Result<i32> {
    let metrics_args = args.metrics.clone();
    http::with_metrics(
        metrics_args.metrics_listen.as_deref(),
        Kind::Index,
        |metrics| index_with(ctx, args, watchdog, metrics),
    )
    .await
}

async fn index_with(
    ctx: &Context,
    args: IndexArgs,
    watchdog: Result<Watchdog>,
    metrics: Metrics,
) -> Result<i32> {
    let target = ctx.server("an index")?;
    let keys = IndexKeys::new(ctx.namespace(), &args.name)?;
    let timeouts = ctx.timeouts();
    let server = format!("Redis at {}", target.display());
    if args.status {
        let doc = ctx
            .patience()
            .retry(&server, async |_| {
                let mut store = Store::connect(target, timeouts).await?;
                yaraus::index::check_type(&mut store, &keys).await?;
                status::read(&mut store, &keys).await
            })
            .await?;
        return print_status(doc, &keys);
    }
    if args.command.is_empty() && !args.print {
        return Err(Error::Usage(
            "no COMMAND to run: give `yaraus index NAME -- COMMAND ...`, or --print".into(),
        ));
    }
    let env_remove = args.child_env.removed()?;
    let timing = Timing::new(args.interval, args.skew, args.kill_after)?;
    // Caught from now on, so that a signal before the command starts ends
    // the wait cleanly.
    let mut signals =
        Signals::install().map_err(|e| Error::State(format!("cannot catch signals: {e}")))?;
    let client = format!(
        "{}-{}-{}",
        yaraus::lock::host(),
        std::process::id(),
        yaraus::base::random::random_hex::<3>("the client id")?
    );
    let mut index = Index::new(Store::new(target, timeouts)?, keys, client, timing);
    // Redis out of reach at start is waited out (a signal ends the wait);
    // once started, the replica rides out any outage by itself.
    let mut patience = ctx.patience();
    tokio::select! {
        biased;
        signal = signals.recv() => return Err(Error::Interrupted(signal as i32)),
        checked = patience.retry(&server, async |_| index.check().await) => checked?,
    }
    crate::logger::set_context("index", index.keys().name());
    crate::logger::set_context("client_id", index.client());
    log::info!(
        "index {}: interval {}, skew {}, client id {}",
        index.keys().name(),
        yaraus::base::duration::shown(timing.interval()),
        yaraus::base::duration::shown(timing.skew()),
        index.client()
    );
    let mut replica = Replica::new(index);
    if args.print {
        return print(&mut replica, &mut signals).await;
    }
    let watchdog = watchdog?;
    supervise(
        &mut replica,
        (&args.command, &env_remove),
        watchdog,
        &mut signals,
        (timeouts, metrics),
    )
    .await
}

/// The command with this pair: its placeholders replaced, its environment.
fn spec((command, env_remove): (&[String], &[String]), pair: Pair) -> ChildSpec {
    let index = pair.index.to_string();
    let replicas = pair.replicas.to_string();
    let rank = (pair.index + 1).to_string();
    let argv = substitute(command, "<index>", &index);
    let argv = substitute(&argv, "<replicas>", &replicas);
    let argv = substitute(&argv, "<rank>", &rank);
    ChildSpec {
        argv,
        env: vec![
            (command_env::INDEX.into(), index),
            (command_env::REPLICAS.into(), replicas),
            (command_env::RANK.into(), rank),
        ],
        env_remove: env_remove.to_vec(),
    }
}

/// Starts the command under each pair in turn, for as long as it runs.
async fn supervise(
    replica: &mut Replica,
    command: (&[String], &[String]),
    mut watchdog: Watchdog,
    signals: &mut Signals,
    (timeouts, metrics): (Timeouts, Metrics),
) -> Result<i32> {
    let timing = *replica.index().timing();
    let options = HoldOptions {
        delay: Duration::ZERO,
        kill_after: timing.kill_after(),
        release_timeout: timeouts.release(),
        start_after: None,
    };
    loop {
        let cancel = async { Error::Interrupted(signals.recv().await as i32) };
        let (pair, number, deadline) = match replica.wait_for_start(cancel).await {
            Ok(start) => start,
            Err(e) => {
                watchdog.stand_down().await;
                return Err(e);
            }
        };
        let keeper = Keeper::observed(
            replica.slot(pair, number),
            timing.interval(),
            deadline,
            timing.kill_after(),
            metrics.clone(),
            |_| {},
        );
        let outcome = hold_once(keeper, watchdog, &spec(command, pair), options, signals).await;
        match outcome.restartable() {
            Ok((why, back)) => {
                log::info!("{why}; it starts again once a fresh pair is settled");
                watchdog = back;
            }
            Err(outcome) => return outcome.finish().await,
        }
    }
}

/// `--print`: one JSON line per interval, until a signal.
async fn print(replica: &mut Replica, signals: &mut Signals) -> Result<i32> {
    loop {
        let (number, tick) = tokio::select! {
            ticked = replica.tick_when_due() => ticked?,
            _ = signals.recv() => return Ok(0),
        };
        let pair = tick.and_then(|t| t.pair);
        let line = serde_json::json!({
            "index": pair.map(|p| p.index),
            "replicas": pair.map(|p| p.replicas),
            "interval": number,
        });
        // A reader that went away ends the printing, as `yes | head` does;
        // any other write error is one (the output is lost).
        if !write_stdout_while_read(format!("{line}\n").as_bytes())? {
            return Ok(0);
        }
    }
}

/// `--status`: the JSON document of [`status::read`]; exit 1 when the
/// index has no recent interval.
fn print_status(doc: Option<serde_json::Value>, keys: &IndexKeys) -> Result<i32> {
    match doc {
        Some(doc) => {
            write_stdout(format!("{doc:#}\n").as_bytes())?;
            Ok(0)
        }
        None => {
            let doc = serde_json::json!({"name": keys.name(), "current": null, "pairs": [], "intervals": []});
            write_stdout(format!("{doc:#}\n").as_bytes())?;
            log::warn!(
                "the index {} has no recent interval (never used, or idle for {} intervals)",
                keys.name(),
                yaraus::timing::index::KEEP
            );
            Ok(1)
        }
    }
}
