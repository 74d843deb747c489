//! `yaraus seq`: next, get and set-floor, one-shot commands over the
//! majority sequence of [`yaraus::seq`]; `serve` is in `serve.rs`.
//!
//! `--timeout` bounds one attempt, not one request: a node is given a
//! quarter of it per request (a round is a dial and a request), and no new
//! round starts unless it can end in time, so that a frozen node or a lost
//! majority costs an attempt at most `--timeout` and never yields a guessed
//! id. `--wait` bounds the attempts ([`yaraus::claim::Patience`]): a
//! majority out of reach is waited out that long, and the last attempt's
//! rounds end by it.

mod serve;

use crate::cli::{SeqArgs, SeqCommand, SeqNextArgs, SeqSetFloorArgs};
use std::fmt::Write;
use std::time::Duration;
use tokio::time::Instant;
use yaraus::context::Context;
use yaraus::error::{Error, Result};
use yaraus::seq::{FloorOutcome, MajoritySequence, SeqKeys, set_floor};
use yaraus::store::Quorum;

pub async fn seq(ctx: &Context, args: SeqArgs) -> Result<i32> {
    match args.command {
        SeqCommand::Next(next_args) => next(ctx, next_args).await,
        SeqCommand::Get(name) => get(ctx, &name.name).await,
        SeqCommand::SetFloor(floor_args) => floor(ctx, floor_args).await,
        SeqCommand::Serve(serve_args) => serve::serve(ctx, serve_args).await,
    }
}

/// The nodes, and the counter key of `name` on them.
fn quorum(ctx: &Context, name: &str) -> Result<(Quorum, String)> {
    let key = SeqKeys::new(ctx.namespace()).counter(name)?;
    crate::logger::set_context("sequence", name);
    let quorum = ctx.quorum(ctx.timeouts().sequence_request())?;
    Ok((quorum, key))
}

/// The last moment a round may start and still end by `--timeout` from now,
/// or by the bound of the wait (`left`), whichever comes first.
fn last_round_start(quorum: &Quorum, timeout: Duration, left: Option<Duration>) -> Instant {
    let within = left.map_or(timeout, |left| left.min(timeout));
    Instant::now() + within.saturating_sub(quorum.round_timeout())
}

async fn next(ctx: &Context, args: SeqNextArgs) -> Result<i32> {
    let (mut quorum, key) = quorum(ctx, &args.name)?;
    let timeout = ctx.timeouts().timeout();
    let mut seq = MajoritySequence::named(&args.name, key);
    let wanted = format!("the next id of the sequence {}", args.name);
    let ids = ctx
        .patience()
        .retry(&wanted, async |left| {
            let deadline = last_round_start(&quorum, timeout, left);
            seq.next_block(&mut quorum, deadline, args.count).await
        })
        .await?;
    let mut out = String::new();
    for id in ids {
        let _ = writeln!(out, "{id}");
    }
    crate::stdout::write_stdout(out.as_bytes())?;
    Ok(0)
}

async fn get(ctx: &Context, name: &str) -> Result<i32> {
    let (mut quorum, key) = quorum(ctx, name)?;
    let seq = MajoritySequence::named(name, key.clone());
    let wanted = format!("a majority of the nodes of the sequence {name}");
    let current = ctx
        .patience()
        .retry(&wanted, async |_| seq.current(&mut quorum).await)
        .await?;
    match current {
        Some(value) => {
            crate::stdout::write_stdout(format!("{value}\n").as_bytes())?;
            Ok(0)
        }
        None => {
            crate::logger::final_error(
                format_args!("no node holds the sequence {name} ({key}): it was never used"),
                1,
                crate::logger::EXIT_FLUSH,
            );
            Ok(1)
        }
    }
}

/// `set-floor`: every node must answer; one that does not is asked again
/// (raising never lowers, so asking twice is harmless) until `--wait`.
async fn floor(ctx: &Context, args: SeqSetFloorArgs) -> Result<i32> {
    let (mut quorum, key) = quorum(ctx, &args.name)?;
    let mut out = String::new();
    let wanted = format!("every node of the sequence {}", args.name);
    let raised = ctx
        .patience()
        .retry(&wanted, async |_| {
            let (mut said, mut failed) = (String::new(), Vec::new());
            for node in set_floor(&mut quorum, &key, args.value).await {
                match node.outcome {
                    Ok(FloorOutcome::Raised) => {
                        let _ = writeln!(said, "{}: {key} raised to {}", node.label, args.value);
                    }
                    Ok(FloorOutcome::Above(v)) => {
                        let _ = writeln!(said, "{}: {key} already at {v}, left alone", node.label);
                    }
                    Err(e) if e.is_fatal() => return Err(e),
                    Err(e) => failed.push(e.to_string()),
                }
            }
            // What the last attempt that finished found is what is printed.
            out = said;
            if failed.is_empty() {
                return Ok(());
            }
            Err(Error::Unavailable(format!(
                "set-floor did not reach every node, and a node without the counter cannot \
                 vote; run it again when they answer: {}",
                failed.join("; ")
            )))
        })
        .await;
    crate::stdout::write_stdout(out.as_bytes())?;
    raised.map(|()| 0)
}
