//! The in-process allocator: ids from a reserved block in memory, one at a
//! time, with the next block reserved in the background before the current
//! one runs out (double buffering, as Meituan's Leaf-segment does).
//!
//! The hot path is a comparison, a decrement and an increment on the
//! caller's own struct: no lock, no atomic, no allocation. The allocator is
//! `&mut self`, belongs to one task, and must be used inside a tokio
//! runtime (the reservation is a spawned task); a program that wants ids
//! on many threads gives each its own (their blocks never overlap). When a
//! tenth of the block is used, a tokio task takes the [`Reserver`] and reserves
//! the next block; when the block is used up, the spare takes its place.
//! A block that lasted less than [`AllocatorOptions::block_life`] doubles
//! the batch (up to `max_batch` and the window size), one that lasted four
//! times longer halves it (down to `batch`), so a busy process makes few
//! round trips and an idle one holds few ids. Ids of a block not used up
//! when the allocator is dropped are skipped, never handed out again: the
//! price of any hi-lo scheme.

use super::reserve::{Block, Reserver};
use crate::error::{Error, Result};
use crate::timing::hilo::BLOCK_LIFE;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// How an [`Allocator`] sizes its blocks.
#[derive(Clone, Debug)]
pub struct AllocatorOptions {
    /// The first batch, and the smallest.
    pub batch: u64,
    /// The largest batch (also capped by the window size).
    pub max_batch: u64,
    /// A block used up faster than this doubles the batch.
    pub block_life: Duration,
}

impl AllocatorOptions {
    /// Blocks of `batch` ids, growing up to 64 times that when they last
    /// less than [`BLOCK_LIFE`].
    pub fn new(batch: u64) -> AllocatorOptions {
        AllocatorOptions {
            batch,
            max_batch: batch.saturating_mul(64),
            block_life: BLOCK_LIFE,
        }
    }
}

/// A reservation running in the background: the reserver comes back with
/// its result.
type Reservation = oneshot::Receiver<(Reserver, Result<Block>)>;

/// Hands out ids one by one from blocks of a [`Reserver`].
pub struct Allocator {
    /// The next id of the current block.
    next: u64,
    /// Ids left in the current block.
    left: u64,
    /// While more than this many are left, the hot path needs nothing else.
    low_water: u64,
    /// Idle when no reservation runs.
    reserver: Option<Reserver>,
    running: Option<Reservation>,
    /// The next block, once reserved (or why it could not be).
    spare: Option<Result<Block>>,
    options: AllocatorOptions,
    batch: u64,
    /// When the current block came into use (none before the first).
    since: Option<Instant>,
}

impl Allocator {
    /// An allocator over `reserver`; nothing is reserved until the first id.
    pub fn new(reserver: Reserver, options: AllocatorOptions) -> Result<Allocator> {
        if options.batch == 0 || options.max_batch < options.batch {
            return Err(Error::Usage(format!(
                "the allocator's batch must be at least 1 and at most its max_batch (got {} \
                 and {})",
                options.batch, options.max_batch
            )));
        }
        Ok(Allocator {
            next: 0,
            left: 0,
            low_water: 0,
            reserver: Some(reserver),
            running: None,
            spare: None,
            batch: options.batch,
            options,
            since: None,
        })
    }

    /// The batch the next reservation asks for.
    pub fn batch(&self) -> u64 {
        self.batch
    }

    /// The next id if one is at hand, without waiting: `None` when the
    /// current block is used up and the next has not arrived yet (or could
    /// not be reserved: [`next`](Self::next) says why).
    #[inline]
    pub fn try_next(&mut self) -> Option<u64> {
        if self.left > self.low_water {
            self.left -= 1;
            let id = self.next;
            self.next = self.next.wrapping_add(1);
            return Some(id);
        }
        self.try_next_slow()
    }

    /// The next id, waiting for a block when none is at hand.
    pub async fn next(&mut self) -> Result<u64> {
        loop {
            if let Some(id) = self.try_next() {
                return Ok(id);
            }
            if let Some(running) = self.running.take() {
                self.finish(running.await);
                continue;
            }
            match self.spare.take() {
                Some(Err(e)) => return Err(e),
                Some(Ok(block)) => self.spare = Some(Ok(block)),
                None => self.reserve_next(),
            }
        }
    }

    /// Below the low-water mark: start the next reservation, and move to
    /// the spare block when this one is used up.
    #[cold]
    fn try_next_slow(&mut self) -> Option<u64> {
        self.reserve_next();
        self.low_water = 0;
        if self.left == 0 {
            self.poll_running();
            match self.spare.take() {
                Some(Ok(block)) => self.use_block(block),
                Some(Err(e)) => {
                    self.spare = Some(Err(e));
                    return None;
                }
                None => return None,
            }
        }
        self.left -= 1;
        let id = self.next;
        self.next = self.next.wrapping_add(1);
        Some(id)
    }

    /// Starts reserving the next block, unless one is reserved or on its way.
    fn reserve_next(&mut self) {
        if self.spare.is_some() || self.running.is_some() {
            return;
        }
        let Some(mut reserver) = self.reserver.take() else {
            return;
        };
        let batch = self.batch;
        let (tx, rx) = oneshot::channel();
        tokio::spawn(async move {
            let result = reserver.reserve(batch).await;
            let _ = tx.send((reserver, result));
        });
        self.running = Some(rx);
    }

    /// Takes the reservation's result if it has arrived.
    fn poll_running(&mut self) {
        if let Some(mut running) = self.running.take() {
            match running.try_recv() {
                Err(oneshot::error::TryRecvError::Empty) => self.running = Some(running),
                other => self.finish(other.map_err(|_| ())),
            }
        }
    }

    fn finish<E>(&mut self, arrived: std::result::Result<(Reserver, Result<Block>), E>) {
        match arrived {
            Ok((reserver, result)) => {
                self.reserver = Some(reserver);
                self.spare = Some(result);
            }
            Err(_) => {
                self.spare = Some(Err(Error::State(
                    "the background reservation of the next block died".into(),
                )));
            }
        }
    }

    /// Puts `block` in use, and sizes the next batch by how long the last
    /// block lasted.
    fn use_block(&mut self, block: Block) {
        let now = Instant::now();
        let cap = self.options.max_batch.min(block.window_size.max(1));
        if let Some(since) = self.since {
            let life = now.duration_since(since);
            if life < self.options.block_life {
                self.batch = self.batch.saturating_mul(2).min(cap);
            } else if life > self.options.block_life * 4 {
                self.batch = (self.batch / 2).max(self.options.batch).min(cap);
            }
        }
        self.since = Some(now);
        self.next = block.first;
        self.left = block.len();
        self.low_water = self.left - self.left / 10;
    }
}
