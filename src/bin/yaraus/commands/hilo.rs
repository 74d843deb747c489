//! `yaraus hilo`: agent, next and status over the shards of a sequence.

use super::{quorum_namespace, targets, write_stdout, write_stdout_unless_closed};
use crate::cli::{GlobalArgs, HiloAgentArgs, HiloArgs, HiloCommand, HiloNextArgs};
use serde_json::json;
use std::fmt::Write;
use std::time::Duration;
use yaraus::error::{Error, Result};
use yaraus::hilo::{
    Agent, AgentOptions, AgentRun, Allocator, AllocatorOptions, HiloKeys, Reserver, shard_statuses,
};
use yaraus::store::{Quorum, Target};

pub async fn hilo(global: &GlobalArgs, args: HiloArgs) -> Result<i32> {
    let durable = !args.allow_volatile;
    match args.command {
        HiloCommand::Agent(agent_args) => agent(global, agent_args, durable).await,
        HiloCommand::Next(next_args) => next(global, next_args, durable).await,
        HiloCommand::Status(status_args) => status(global, &status_args.name, durable).await,
    }
}

/// The shards of `--redis`, the namespace and the keys of `name`.
fn shards(global: &GlobalArgs, name: &str) -> Result<(Vec<Target>, String, HiloKeys)> {
    let targets = targets(global)?;
    let ns = quorum_namespace(global, &targets)?;
    let keys = HiloKeys::new(&ns, name)?;
    Ok((targets, ns, keys))
}

/// The bound on one request to one shard: `next` may try every shard, a
/// dial and a request each, within about `--timeout`.
fn request_timeout(global: &GlobalArgs) -> Duration {
    (global.timeout / 2).max(Duration::from_millis(1))
}

async fn next(global: &GlobalArgs, args: HiloNextArgs, durable: bool) -> Result<i32> {
    let (targets, _, keys) = shards(global, &args.name)?;
    let quorum = Quorum::new(&targets, request_timeout(global), durable)?;
    let mut reserver = Reserver::new(quorum, keys)?;
    let Some(count) = args.count else {
        let block = reserver.reserve(args.batch).await?;
        write_stdout(format!("{} {}\n", block.first, block.last).as_bytes())?;
        return Ok(0);
    };
    let options = AllocatorOptions::new(args.batch.min(count));
    let mut allocator = Allocator::new(reserver, options)?;
    let mut out = String::new();
    for _ in 0..count {
        let _ = writeln!(out, "{}", allocator.next().await?);
        if out.len() > 1 << 16 {
            write_stdout_unless_closed(out.as_bytes())?;
            out.clear();
        }
    }
    write_stdout_unless_closed(out.as_bytes())?;
    Ok(0)
}

async fn agent(global: &GlobalArgs, args: HiloAgentArgs, durable: bool) -> Result<i32> {
    let (targets, ns, keys) = shards(global, &args.name)?;
    let options = AgentOptions {
        window_size: args.window_size,
        min_open: args.min_open,
        start: args.start,
        lock_wait: args.wait,
    };
    let mut agent = Agent::new(
        &targets,
        &ns,
        keys,
        options,
        durable,
        request_timeout(global),
    )?;
    let Some(every) = args.every else {
        let run = agent.run().await?;
        return report(&agent, &run).map(|()| 0);
    };
    let mut signals = yaraus::supervise::Signals::stopping()
        .map_err(|e| Error::State(format!("cannot catch signals: {e}")))?;
    loop {
        // A signal during a run is kept by tokio and ends the wait below.
        match agent.run().await {
            Ok(run) => {
                if let Err(e) = report(&agent, &run) {
                    yaraus::warn!("{e}");
                }
            }
            Err(e) => yaraus::warn!("{e}"),
        }
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = signals.recv() => return Ok(0),
        }
    }
}

/// What a run did, on stderr; an error when a planned window could not be
/// opened.
fn report(agent: &Agent, run: &AgentRun) -> Result<()> {
    let name = agent.keys().name();
    let labels = agent.labels();
    if run.new_sequence {
        yaraus::info!("hilo {name}: a new sequence");
    }
    for (shard, window) in &run.created {
        yaraus::info!(
            "hilo {name}: opened [{}, {}) on {}",
            window.start,
            window.end,
            labels[*shard]
        );
    }
    yaraus::info!(
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

async fn status(global: &GlobalArgs, name: &str, durable: bool) -> Result<i32> {
    let (targets, _, keys) = shards(global, name)?;
    let mut quorum = Quorum::new(&targets, request_timeout(global), durable)?;
    let labels = quorum.labels();
    let replies = shard_statuses(&mut quorum, &keys).await;
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
    write_stdout(format!("{doc}\n").as_bytes())?;
    Ok(if known == 0 { 1 } else { 0 })
}
