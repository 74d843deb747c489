//! `yaraus hilo`: agent, next and status over the shards of a sequence.

use crate::cli::{HiloAgentArgs, HiloArgs, HiloCommand, HiloNextArgs};
use crate::stdout::{write_stdout, write_stdout_unless_closed};
use serde_json::json;
use std::fmt::Write;
use tokio::sync::watch;
use yaraus::context::Context;
use yaraus::error::{Error, Result};
use yaraus::hilo::{
    Agent, AgentMetrics, AgentOptions, AgentRun, Allocator, AllocatorOptions, HiloKeys, Reserver,
    shard_statuses,
};
use yaraus::metrics::{Kind, Metrics, http};
use yaraus::seq::sweep::sweep_forever;
use yaraus::store::Quorum;

pub async fn hilo(ctx: &Context, args: HiloArgs) -> Result<i32> {
    match args.command {
        HiloCommand::Agent(agent_args) => agent(ctx, agent_args).await,
        HiloCommand::Next(next_args) => next(ctx, next_args).await,
        HiloCommand::Status(status_args) => status(ctx, &status_args.name).await,
    }
}

/// The shards of the context, each request bounded for a call that may try
/// every shard within about `--timeout`.
fn shards(ctx: &Context) -> Result<Quorum> {
    ctx.quorum(ctx.timeouts().shard_request())
}

async fn next(ctx: &Context, args: HiloNextArgs) -> Result<i32> {
    let keys = HiloKeys::new(ctx.namespace(), &args.name)?;
    crate::logger::set_context("sequence", keys.name());
    let mut reserver = Reserver::new(shards(ctx)?, keys)?;
    let wanted = format!("a shard of the hilo sequence {}", args.name);
    let Some(count) = args.count else {
        let block = ctx
            .patience()
            .retry(&wanted, async |_| reserver.reserve(args.batch).await)
            .await?;
        write_stdout(format!("{} {}\n", block.first, block.last).as_bytes())?;
        return Ok(0);
    };
    let options = AllocatorOptions::new(args.batch.min(count));
    let mut allocator = Allocator::new(reserver, options)?;
    let mut out = String::new();
    for _ in 0..count {
        // Each wait for a block rides out what passes for up to --wait.
        let id = match allocator.try_next() {
            Some(id) => id,
            None => {
                ctx.patience()
                    .retry(&wanted, async |_| allocator.next().await)
                    .await?
            }
        };
        let _ = writeln!(out, "{id}");
        if out.len() > 1 << 16 {
            write_stdout_unless_closed(out.as_bytes())?;
            out.clear();
        }
    }
    write_stdout_unless_closed(out.as_bytes())?;
    Ok(0)
}

async fn agent(ctx: &Context, args: HiloAgentArgs) -> Result<i32> {
    let metrics_args = args.metrics.clone();
    http::with_metrics(
        metrics_args.metrics_listen.as_deref(),
        Kind::HiloAgent,
        |metrics| agent_with(ctx, args, metrics),
    )
    .await
}

async fn agent_with(ctx: &Context, args: HiloAgentArgs, metrics: Metrics) -> Result<i32> {
    // Before the first wait: a scrape never sees the page without them.
    let metrics = AgentMetrics::register(&metrics);
    let keys = HiloKeys::new(ctx.namespace(), &args.name)?;
    crate::logger::set_context("sequence", keys.name());
    let options = AgentOptions {
        window_size: args.window_size,
        min_open: args.min_open,
        start: args.start,
        lock_wait: args.wait,
    };
    let mut agent = Agent::new(
        ctx.targets(),
        ctx.namespace(),
        keys,
        options,
        ctx.requires_durable(),
        ctx.timeouts().shard_request(),
    )?;
    let wanted = format!("every shard of the hilo sequence {}", args.name);
    let Some(every) = args.every else {
        let run = ctx
            .patience()
            .retry(&wanted, async |_| agent.run().await)
            .await?;
        return report(&agent, &run).map(|()| 0);
    };
    let mut signals = yaraus::supervise::Signals::stopping()
        .map_err(|e| Error::State(format!("cannot catch signals: {e}")))?;
    // Stops the sweep when the agent returns (the sender is dropped).
    let _sweeping = sweep_in_background(ctx, &agent, &metrics)?;
    loop {
        // A signal during a run is kept by tokio and ends the wait below.
        let run = ctx
            .patience()
            .retry(&wanted, async |_| agent.run().await)
            .await;
        metrics.cycle(&agent.labels(), &run);
        match run {
            Ok(run) => {
                if let Err(e) = report(&agent, &run) {
                    log::warn!("{e}");
                }
            }
            Err(e) => log::warn!("{e}"),
        }
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = signals.recv() => return Ok(0),
        }
    }
}

/// Starts the sweep of the agent's lock's fencing counter on its own task,
/// every [`SWEEP_EVERY`](yaraus::timing::sequence::SWEEP_EVERY): a shard
/// restarted empty gets it back after its quarantine with no run needed.
/// It stops when the returned sender is dropped or sends.
fn sweep_in_background(
    ctx: &Context,
    agent: &Agent,
    metrics: &AgentMetrics,
) -> Result<watch::Sender<bool>> {
    let quorum = shards(ctx)?;
    quorum.put_in_service();
    let (stop, stopped) = watch::channel(false);
    tokio::spawn(sweep_forever(
        quorum,
        agent.sweep_scope(),
        metrics.sweeps(),
        stopped,
    ));
    Ok(stop)
}

/// What a run did, on stderr; an error when a planned window could not be
/// opened.
fn report(agent: &Agent, run: &AgentRun) -> Result<()> {
    let name = agent.keys().name();
    let labels = agent.labels();
    if run.new_sequence {
        log::info!("hilo {name}: a new sequence");
    }
    for (shard, window) in &run.created {
        log::info!(
            "hilo {name}: opened [{}, {}) on {}",
            window.start,
            window.end,
            labels[*shard]
        );
    }
    log::info!(
        "hilo {name}: {} window(s) opened, high-water mark {}",
        run.created.len(),
        run.hwm
    );
    if run.failed.is_empty() {
        return Ok(());
    }
    Err(Error::Unavailable(format!(
        "hilo {name}: the high-water mark was raised but these windows could not be opened \
         (their ids are skipped; the next run opens others): {}",
        run.failed.join("; ")
    )))
}

async fn status(ctx: &Context, name: &str) -> Result<i32> {
    let keys = HiloKeys::new(ctx.namespace(), name)?;
    crate::logger::set_context("sequence", keys.name());
    let mut quorum = shards(ctx)?;
    let wanted = format!("a shard of the hilo sequence {name}");
    let (doc, known) = ctx
        .patience()
        .retry(&wanted, async |_| status_doc(&mut quorum, &keys).await)
        .await?;
    write_stdout(format!("{doc}\n").as_bytes())?;
    Ok(if known == 0 { 1 } else { 0 })
}

/// What `status` prints, and how many shards know the sequence;
/// [`Error::Unavailable`] when no shard answered.
async fn status_doc(quorum: &mut Quorum, keys: &HiloKeys) -> Result<(serde_json::Value, usize)> {
    let name = keys.name();
    let labels = quorum.labels();
    let replies = shard_statuses(quorum, keys).await;
    let (mut known, mut answered, mut hwm) = (0, 0, None::<u64>);
    let mut shards = Vec::new();
    for (label, reply) in labels.iter().zip(replies) {
        match reply {
            Ok(s) => {
                answered += 1;
                known += usize::from(s.known);
                hwm = hwm.max(s.hwm);
                let windows: Vec<_> = s
                    .open
                    .iter()
                    .map(|w| json!({"start": w.start, "end": w.end, "next": w.next, "left": w.left()}))
                    .collect();
                shards.push(json!({
                    "redis": label, "ok": true, "known": s.known, "hwm": s.hwm,
                    "fence": s.fence, "window_size": s.window_size, "reserved": s.reserved,
                    "created": s.created, "open_windows": s.open.len(),
                    "ids_left": s.ids_left(), "windows": windows,
                }));
            }
            Err(e) if e.is_fatal() => return Err(e),
            Err(e) => shards.push(json!({"redis": label, "ok": false, "error": e.to_string()})),
        }
    }
    if answered == 0 {
        return Err(Error::Unavailable(format!(
            "no shard of the hilo sequence {name} answered"
        )));
    }
    let doc = json!({"name": name, "hwm": hwm, "shards": shards});
    Ok((doc, known))
}
