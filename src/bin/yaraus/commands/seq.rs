//! `yaraus seq`: next, get and set-floor, one-shot commands over the
//! majority sequence of [`yaraus::seq`]; `serve` is in `seq_serve.rs`.
//!
//! `--timeout` bounds the whole call, not one request: a node is given a
//! quarter of it per request (a round is a dial and a request), and no new
//! round starts unless it can end in time, so that a frozen node or a lost
//! majority costs at most `--timeout` and never yields a guessed id.

use crate::cli::{GlobalArgs, SeqArgs, SeqCommand, SeqNextArgs, SeqSetFloorArgs};
use std::fmt::Write;
use std::time::Duration;
use tokio::time::Instant;
use yaraus::error::{Error, Result};
use yaraus::seq::{FloorOutcome, MajoritySequence, set_floor};
use yaraus::store::Quorum;

pub async fn seq(global: &GlobalArgs, args: SeqArgs) -> Result<i32> {
    let durable = !args.allow_volatile;
    match args.command {
        SeqCommand::Next(next_args) => next(global, next_args, durable).await,
        SeqCommand::Get(name) => get(global, &name.name, durable).await,
        SeqCommand::SetFloor(floor_args) => floor(global, floor_args, durable).await,
        SeqCommand::Serve(serve_args) => super::seq_serve::serve(global, serve_args, durable).await,
    }
}

/// The nodes of `--redis`, and the counter key of `name` on them.
pub(crate) fn quorum(global: &GlobalArgs, name: &str, durable: bool) -> Result<(Quorum, String)> {
    let key = key(global, name)?;
    let targets = super::targets(global)?;
    let quorum = Quorum::new(&targets, request_timeout(global.timeout), durable)?;
    Ok((quorum, key))
}

/// The key of sequence `name`: `NAMESPACE:seq:NAME`.
pub(crate) fn key(global: &GlobalArgs, name: &str) -> Result<String> {
    if name.is_empty() {
        return Err(Error::Usage("the sequence name must not be empty".into()));
    }
    let targets = super::targets(global)?;
    Ok(format!(
        "{}:seq:{name}",
        super::quorum_namespace(global, &targets)?
    ))
}

/// The bound on one request to one node, for a call bounded by `timeout`.
pub(crate) fn request_timeout(timeout: Duration) -> Duration {
    (timeout / 4).max(Duration::from_millis(1))
}

/// The last moment a round may start and still end by `timeout` from now.
fn last_round_start(quorum: &Quorum, timeout: Duration) -> Instant {
    Instant::now() + timeout.saturating_sub(quorum.round_timeout())
}

async fn next(global: &GlobalArgs, args: SeqNextArgs, durable: bool) -> Result<i32> {
    let (mut quorum, key) = quorum(global, &args.name, durable)?;
    let deadline = last_round_start(&quorum, global.timeout);
    let mut seq = MajoritySequence::named(&args.name, key);
    let ids = seq.next_block(&mut quorum, deadline, args.count).await?;
    let mut out = String::new();
    for id in ids {
        let _ = writeln!(out, "{id}");
    }
    super::write_stdout(out.as_bytes())?;
    Ok(0)
}

async fn get(global: &GlobalArgs, name: &str, durable: bool) -> Result<i32> {
    let (mut quorum, key) = quorum(global, name, durable)?;
    let seq = MajoritySequence::named(name, key.clone());
    match seq.current(&mut quorum).await? {
        Some(value) => {
            super::write_stdout(format!("{value}\n").as_bytes())?;
            Ok(0)
        }
        None => {
            eprintln!("yaraus: no node holds the sequence {name} ({key}): it was never used");
            Ok(1)
        }
    }
}

async fn floor(global: &GlobalArgs, args: SeqSetFloorArgs, durable: bool) -> Result<i32> {
    let (mut quorum, key) = quorum(global, &args.name, durable)?;
    let mut out = String::new();
    let mut failed = Vec::new();
    for node in set_floor(&mut quorum, &key, args.value).await {
        match node.outcome {
            Ok(FloorOutcome::Raised) => {
                let _ = writeln!(out, "{}: {key} raised to {}", node.label, args.value);
            }
            Ok(FloorOutcome::Above(v)) => {
                let _ = writeln!(out, "{}: {key} already at {v}, left alone", node.label);
            }
            Err(e) if e.is_fatal() => return Err(e),
            Err(e) => failed.push(e.to_string()),
        }
    }
    super::write_stdout(out.as_bytes())?;
    if failed.is_empty() {
        return Ok(0);
    }
    Err(Error::Unavailable(format!(
        "set-floor did not reach every node, and a node without the counter cannot vote; run \
         it again when they answer: {}",
        failed.join("; ")
    )))
}
