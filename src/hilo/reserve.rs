//! Reserving blocks: one script on one shard, and moving on to the next
//! shard when that one is down or has no open window.
//!
//! A [`Reserver`] stays with the shard that served it last, so that one
//! process takes its blocks from one window at a time, and starts at a
//! random shard, so that a fleet spreads over the shards. A shard that
//! fails is left for the next one in `--redis` order; only when every
//! shard has failed is the call an error, and the error names what each
//! shard said.

use super::keys::HiloKeys;
use super::script::Reserve;
use super::wire::garbled;
use crate::base::setting::Setting;
use crate::error::{Error, Result};
use crate::store::Quorum;

/// A block of ids, `first..=last`, taken from one shard's window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub first: u64,
    pub last: u64,
    /// Which shard (its place in `--redis`) served it.
    pub shard: usize,
    /// The sequence's window size on that shard (no batch may exceed it).
    pub window_size: u64,
}

impl Block {
    /// How many ids: `last - first + 1`.
    pub fn len(&self) -> u64 {
        self.last - self.first + 1
    }

    /// Never true: a block holds at least one id.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// What one shard said to a reservation.
enum Outcome {
    Block(Block),
    /// No open window (the agent has not stocked this shard).
    Empty,
    /// The shard does not know the sequence.
    Unknown,
}

/// Takes blocks of one sequence from its shards.
pub struct Reserver {
    shards: Quorum,
    keys: HiloKeys,
    /// The shard to try first.
    current: usize,
}

impl Reserver {
    /// A reserver over `shards`, starting at a random one.
    pub fn new(shards: Quorum, keys: HiloKeys) -> Result<Reserver> {
        let mut byte = [0u8; 2];
        crate::base::random::fill_random(&mut byte)
            .map_err(|e| Error::State(format!("cannot read random bytes: {e}")))?;
        let current = usize::from(u16::from_le_bytes(byte)) % shards.len();
        Ok(Reserver {
            shards,
            keys,
            current,
        })
    }

    pub fn keys(&self) -> &HiloKeys {
        &self.keys
    }

    /// Makes `shard` the first one tried (tests and benchmarks pin it).
    pub fn start_at(&mut self, shard: usize) {
        self.current = shard % self.shards.len();
    }

    /// Reserves up to `batch` ids (fewer at the end of a window), from the
    /// first shard that has an open window.
    ///
    /// Errors: [`Error::Usage`] when `batch` is 0 or above the window size;
    /// [`Error::Exhausted`] when no shard that answered has an open window;
    /// [`Error::State`] when none that answered knows the sequence, or a
    /// key holds another type; [`Error::Unavailable`] when none answered.
    pub async fn reserve(&mut self, batch: u64) -> Result<Block> {
        if batch == 0 {
            return Err(Error::Usage(format!(
                "a batch of 0 ids reserves nothing; give {} 1 or more",
                Setting::Batch
            )));
        }
        let n = self.shards.len();
        let mut said: Vec<(usize, Result<Outcome>)> = Vec::with_capacity(n);
        for step in 0..n {
            let shard = (self.current + step) % n;
            let outcome = self.reserve_on(shard, batch).await;
            match outcome {
                Ok(Outcome::Block(block)) => {
                    self.current = shard;
                    return Ok(block);
                }
                // Not a shard that is down: a mistake to report, not hide.
                Err(e) if e.is_fatal() || matches!(e, Error::Usage(_)) => return Err(e),
                other => said.push((shard, other)),
            }
        }
        Err(self.nothing(said))
    }

    async fn reserve_on(&mut self, shard: usize, batch: u64) -> Result<Outcome> {
        let node = &mut self.shards.nodes_mut()[shard];
        let reserve = Reserve {
            keys: &self.keys,
            batch,
        };
        let answer = node.ask(&reserve.invocation()).await?;
        match answer.code()? {
            1 => {
                let first = answer.counter(1)?;
                let next = answer.counter(2)?;
                let window_size = answer.counter(3)?;
                if next <= first {
                    return Err(garbled(&answer.label, "an empty block"));
                }
                Ok(Outcome::Block(Block {
                    first,
                    last: next - 1,
                    shard,
                    window_size,
                }))
            }
            2 => Ok(Outcome::Empty),
            3 => Ok(Outcome::Unknown),
            4 => Err(Error::Usage(format!(
                "{} {batch} is larger than the window size of the hilo sequence {} ({}, \
                 at {}); use a smaller batch, or have the agent make larger windows",
                Setting::Batch,
                self.keys.name(),
                answer.counter(1)?,
                answer.label
            ))),
            _ => Err(answer.unknown()),
        }
    }

    /// The error when no shard gave a block: "nothing available" if a
    /// shard that answered knows the sequence, "never stocked" if none
    /// does, "unavailable" if none answered.
    fn nothing(&self, said: Vec<(usize, Result<Outcome>)>) -> Error {
        let labels = self.shards.labels();
        let name = self.keys.name();
        let (mut empty, mut unknown, mut down) = (0, 0, 0);
        let details: Vec<String> = said
            .into_iter()
            .map(|(shard, outcome)| {
                let label = &labels[shard];
                match outcome {
                    Ok(Outcome::Empty) => {
                        empty += 1;
                        format!("{label}: no open window")
                    }
                    Ok(Outcome::Unknown) => {
                        unknown += 1;
                        format!("{label}: does not know {name}")
                    }
                    Ok(Outcome::Block(_)) => unreachable!("a block is returned at once"),
                    Err(e) => {
                        down += 1;
                        e.to_string()
                    }
                }
            })
            .collect();
        let details = details.join("; ");
        if empty > 0 {
            Error::Exhausted(format!(
                "no open window of the hilo sequence {name} on any shard that answered; run \
                 `yaraus hilo agent {name}` (or give it a larger {} or {}): {details}",
                Setting::MinOpen,
                Setting::WindowSize
            ))
        } else if unknown > 0 {
            Error::State(format!(
                "no shard that answered knows the hilo sequence {name}; create it with \
                 `yaraus hilo agent {name} {} ...` over every shard: {details}",
                Setting::Redis
            ))
        } else {
            debug_assert_eq!(down, labels.len());
            Error::Unavailable(format!("no shard answered: {details}"))
        }
    }
}
