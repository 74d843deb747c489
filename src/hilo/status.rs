//! What one shard holds for a sequence, read in one script: the agent's
//! first look at every shard, and `yaraus hilo status`.

use super::keys::HiloKeys;
use super::script::Status;
use super::wire::{garbled, parse_id};
use crate::error::Result;
use crate::store::{Node, Quorum};

/// One open window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub start: u64,
    /// Exclusive.
    pub end: u64,
    /// The next id to hand out.
    pub next: u64,
}

impl Window {
    /// Ids not handed out yet.
    pub fn left(&self) -> u64 {
        self.end - self.next
    }
}

/// One shard's state of a sequence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShardStatus {
    /// False when the shard has no key of the sequence.
    pub known: bool,
    pub hwm: Option<u64>,
    pub fence: Option<String>,
    pub window_size: Option<u64>,
    /// Ids handed out by this shard (since it last lost its data).
    pub reserved: u64,
    /// Windows opened on this shard (idem).
    pub created: u64,
    /// Lowest start first.
    pub open: Vec<Window>,
}

impl ShardStatus {
    /// Ids left in the open windows (saturating: a 64-bit space of them
    /// does not fit).
    pub fn ids_left(&self) -> u64 {
        self.open
            .iter()
            .fold(0u64, |sum, w| sum.saturating_add(w.left()))
    }
}

/// What every shard holds of the sequence of `keys`, read at once, in
/// `--redis` order.
pub async fn shard_statuses(shards: &mut Quorum, keys: &HiloKeys) -> Vec<Result<ShardStatus>> {
    shards.round(|node| shard_status(node, keys)).all().await
}

/// Reads what `node` holds of the sequence of `keys`.
pub async fn shard_status(node: &mut Node, keys: &HiloKeys) -> Result<ShardStatus> {
    let answer = node.ask(&Status { keys }.invocation()).await?;
    match answer.code()? {
        1 => {}
        3 => return Ok(ShardStatus::default()),
        _ => return Err(answer.unknown()),
    }
    let number = |i: usize| -> Result<u64> { Ok(parse_id(&answer, i)?.unwrap_or(0)) };
    let fence = answer.text(2)?;
    let mut status = ShardStatus {
        known: true,
        hwm: parse_id(&answer, 1)?,
        fence: (!fence.is_empty()).then_some(fence),
        window_size: parse_id(&answer, 3)?,
        reserved: number(4)?,
        created: number(5)?,
        open: Vec::new(),
    };
    for i in (6..answer.len()).step_by(2) {
        let start = answer.text(i)?;
        let window = answer.text(i + 1)?;
        let (end, next) = window.split_once(' ').unwrap_or(("", ""));
        let (start, end, next) = (start.parse(), end.parse(), next.parse());
        let (Ok(start), Ok(end), Ok(next)) = (start, end, next) else {
            return Err(garbled(&answer.label, &format!("the window {window:?}")));
        };
        if !(start <= next && next <= end) {
            return Err(garbled(&answer.label, &format!("the window {window:?}")));
        }
        status.open.push(Window { start, end, next });
    }
    Ok(status)
}
