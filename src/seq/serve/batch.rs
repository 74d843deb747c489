//! Group commit: one task per sequence name, the *sequencer*, turns the
//! requests waiting for that name into one majority round.
//!
//! The sequencer takes the first waiting request and every one queued
//! behind it, in arrival order, up to `--max-batch` ids (never splitting a
//! request: an `INCRBY` promises consecutive ids), asks
//! [`MajoritySequence::next_block`] for one block of that many, and hands
//! it out in queue order. Each node fsyncs once per round, however many
//! requests it answers, so the batch grows with the load.
//!
//! Nothing here decides what is handed out: a block goes out only once a
//! majority accepted it, so ids are unique; and a request answered before
//! another was sent had its round accepted before the other was queued, so
//! real-time order holds. What this module adds changes only *when* a
//! round starts or *how high* it proposes, which that argument does not
//! depend on:
//!
//! * one round in flight per name: a second would wait for the same fsync
//!   on every node, and contend with the first;
//! * a refused round (another `serve` on the same nodes) is retried at
//!   once, and from the second refusal in a row proposes past where the
//!   competitor will be ([`QUICK_RETRIES`]; ids skip, never repeat), since
//!   the library's pause-then-retry starves against a busy competitor;
//! * while closed-loop clients come back, the next round lingers for the
//!   rest of their cohort ([`MAX_LINGER`]), so that they do not split into
//!   two cohorts that each wait two rounds;
//! * an idle sequencer retires
//!   ([`RETIRE_AFTER`](crate::timing::serve::RETIRE_AFTER)) and at most
//!   [`MAX_SEQUENCES`] exist, so a client inventing names costs bounded
//!   memory; requests are sent under the registry's lock, so none lands in
//!   a retiring sequencer's queue.
//!
//! The whole argument, with the throughput ceiling it is measured against:
//! docs/seq.md, "Group commit".

use super::info::SeqStats;
use super::metrics::ServeMetrics;
use super::reply::{Answer, SHUTTING_DOWN};
use crate::base::random::random_below;
use crate::error::Result;
use crate::seq::MajoritySequence;
use crate::store::Quorum;
use crate::timing::sequence::{FIRST_ROUND_PAUSE, MAX_ROUND_PAUSE};
use crate::timing::serve::MAX_LINGER;
use std::collections::HashMap;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// Most sequences served at once by one process.
pub const MAX_SEQUENCES: usize = 10_000;
/// Refused rounds retried at once (with a leap from the second on) before
/// the retries also pause.
const QUICK_RETRIES: u32 = 6;

/// One request for ids.
pub struct Ask {
    /// How many consecutive ids.
    pub count: u64,
    /// Reply with the last id of the block (`INCRBY`), not the first.
    pub last: bool,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Answer>,
    pub arrived: Instant,
}

/// What the sequencers share.
pub struct Settings {
    /// Cloned for each sequencer: clones share the live connections.
    pub quorum: Quorum,
    /// `--timeout`: a round is retried (when refused or short of a
    /// majority) until this long after its oldest request arrived, less
    /// the time one more round may take; so a request that did not wait
    /// behind a failing round is answered within about this long.
    pub timeout: Duration,
    /// Most ids per round (`--max-batch`).
    pub max_batch: u64,
    /// Rounds, their latency and the ids handed out (`--metrics-listen`).
    pub metrics: ServeMetrics,
    /// A sequencer idle this long retires ([`RETIRE_AFTER`](crate::timing::serve::RETIRE_AFTER)).
    pub retire_after: Duration,
}

/// The sequencers by name.
pub struct Registry {
    settings: Arc<Settings>,
    state: Mutex<State>,
}

struct State {
    open: bool,
    sequences: HashMap<String, Entry>,
}

struct Entry {
    queue: mpsc::UnboundedSender<Ask>,
    stats: Arc<SeqStats>,
}

impl Registry {
    pub fn new(settings: Settings) -> Arc<Registry> {
        Arc::new(Registry {
            settings: Arc::new(settings),
            state: Mutex::new(State {
                open: true,
                sequences: HashMap::new(),
            }),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `ask` for the sequence `name` (counter at `key()`), starting
    /// its sequencer if it has none. The error is the reply to send.
    pub fn submit(
        self: &Arc<Self>,
        name: &str,
        key: impl FnOnce() -> Result<String>,
        ask: Ask,
    ) -> std::result::Result<(), String> {
        let mut state = self.state();
        if !state.open {
            return Err(SHUTTING_DOWN.into());
        }
        if let Some(entry) = state.sequences.get(name) {
            entry.stats.requests.fetch_add(1, Relaxed);
            // The sequencer removes its entry before it stops reading.
            let _ = entry.queue.send(ask);
            return Ok(());
        }
        if state.sequences.len() >= MAX_SEQUENCES {
            return Err(format!(
                "ERR this server already serves {MAX_SEQUENCES} sequences; use fewer names \
                 (idle ones are dropped after {})",
                crate::base::duration::shown(self.settings.retire_after)
            ));
        }
        let key = key().map_err(|e| format!("ERR {e}"))?;
        let (queue, rx) = mpsc::unbounded_channel();
        let stats = Arc::new(SeqStats::default());
        stats.requests.fetch_add(1, Relaxed);
        let _ = queue.send(ask);
        let sequencer = Sequencer {
            seq: MajoritySequence::named(name, key),
            name: name.to_string(),
            quorum: self.settings.quorum.clone(),
            settings: Arc::clone(&self.settings),
            stats: Arc::clone(&stats),
            registry: Arc::downgrade(self),
        };
        tokio::spawn(sequencer.run(rx));
        state
            .sequences
            .insert(name.to_string(), Entry { queue, stats });
        Ok(())
    }

    /// The counters of every sequence served now, by name.
    pub fn stats(&self) -> Vec<(String, Arc<SeqStats>)> {
        let mut all: Vec<_> = self
            .state()
            .sequences
            .iter()
            .map(|(name, e)| (name.clone(), Arc::clone(&e.stats)))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// Refuses new requests; each sequencer answers what is queued and ends.
    pub fn close(&self) {
        let mut state = self.state();
        state.open = false;
        state.sequences.clear();
    }

    /// Removes `name`'s entry if its queue is empty; true if removed.
    fn retire(&self, name: &str, rx: &mpsc::UnboundedReceiver<Ask>) -> bool {
        let mut state = self.state();
        if !rx.is_empty() {
            return false;
        }
        state.sequences.remove(name);
        // Under the lock: no new sequencer of the name records a round yet.
        self.settings.metrics.retired(name);
        true
    }
}

struct Sequencer {
    seq: MajoritySequence,
    name: String,
    quorum: Quorum,
    settings: Arc<Settings>,
    stats: Arc<SeqStats>,
    registry: Weak<Registry>,
}

impl Sequencer {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Ask>) {
        let mut carry: Option<Ask> = None;
        // The previous round: how many requests it answered, how long it
        // took, when it ended.
        let mut previous: Option<(usize, Duration, Instant)> = None;
        loop {
            let first = match carry.take() {
                Some(ask) => ask,
                None => match tokio::time::timeout(self.settings.retire_after, rx.recv()).await {
                    Ok(Some(ask)) => ask,
                    Ok(None) => return,
                    Err(_) => match self.registry.upgrade() {
                        Some(registry) if !registry.retire(&self.name, &rx) => continue,
                        _ => return,
                    },
                },
            };
            let mut total = first.count;
            let mut batch = vec![first];
            while carry.is_none()
                && let Ok(ask) = rx.try_recv()
            {
                carry = self.add(&mut batch, &mut total, ask);
            }
            if carry.is_none()
                && let Some((answered, took, ended)) = previous
                && batch[0].arrived.saturating_duration_since(ended) < took
            {
                // The clients of the previous round, and those who waited
                // through it: all that may come back now.
                let expected = answered + batch.iter().filter(|a| a.arrived < ended).count();
                let until = Instant::now() + (took / 2).min(MAX_LINGER);
                while carry.is_none() && batch.len() < expected {
                    let Ok(Some(ask)) = tokio::time::timeout_at(until, rx.recv()).await else {
                        break;
                    };
                    carry = self.add(&mut batch, &mut total, ask);
                }
            }
            // A client that went away gets no ids: none are burnt for it.
            batch.retain(|ask| !ask.reply.is_closed());
            if !batch.is_empty() {
                let answered = batch.len();
                let started = Instant::now();
                self.round(batch).await;
                previous = Some((answered, started.elapsed(), Instant::now()));
            }
        }
    }

    /// Adds `ask` to `batch` if the ids stay within `--max-batch`; gives it
    /// back otherwise (it starts the next batch).
    fn add(&self, batch: &mut Vec<Ask>, total: &mut u64, ask: Ask) -> Option<Ask> {
        match total.checked_add(ask.count) {
            Some(t) if t <= self.settings.max_batch => {
                *total = t;
                batch.push(ask);
                None
            }
            _ => Some(ask),
        }
    }

    /// One round for `batch` (retried within the deadline), and the replies.
    ///
    /// The retries are decided here, not in the library: each call of
    /// `next_block` is given a deadline already reached, which makes it one
    /// round. See "Contention" in the module doc.
    async fn round(&mut self, mut batch: Vec<Ask>) {
        let oldest = batch
            .iter()
            .map(|a| a.arrived)
            .min()
            .unwrap_or_else(Instant::now);
        let deadline = oldest
            + self
                .settings
                .timeout
                .saturating_sub(self.quorum.round_timeout());
        batch = self.without_overflow(batch);
        let mut pause = FIRST_ROUND_PAUSE;
        let mut refused = 0u32;
        loop {
            if batch.is_empty() {
                return;
            }
            let total: u64 = batch.iter().map(|a| a.count).sum();
            let before = self.seq.guess();
            let sent = Instant::now();
            let e = match self.seq.next_block(&mut self.quorum, sent, total).await {
                Ok(block) => {
                    let metrics = &self.settings.metrics;
                    metrics.round(&self.name, total, sent.elapsed());
                    return self.hand_out(batch, block.start(), total);
                }
                Err(e) => e,
            };
            // What the round learnt may show requests that cannot fit
            // under 2^64 (the first round of a sequencer reads the floor):
            // they get their error, the others go again.
            let n = batch.len();
            batch = self.without_overflow(batch);
            if batch.len() < n {
                continue;
            }
            if e.is_fatal() || Instant::now() >= deadline {
                let text: Arc<str> = format!("ERR {e}").into();
                self.stats.failed(batch.len() as u64, true);
                self.settings.metrics.round_failed(&self.name);
                for ask in batch {
                    let _ = ask.reply.send(Err(Arc::clone(&text)));
                }
                return;
            }
            match (before, self.seq.guess()) {
                // Nodes hold values at or above the block's first: refused
                // (or accepted by a minority only).
                (Some(first), Some(now)) if now > first => {
                    refused += 1;
                    self.stats.refused.fetch_add(1, Relaxed);
                    if refused >= 2 {
                        self.leap(now - first, refused - 2, total);
                    }
                    if refused <= QUICK_RETRIES {
                        continue;
                    }
                }
                _ => {}
            }
            let left = deadline.saturating_duration_since(Instant::now());
            tokio::time::sleep(random_below(pause).min(left)).await;
            pause = (pause * 2).min(MAX_ROUND_PAUSE);
        }
    }

    /// Raises the next proposal past where a competitor that advanced by
    /// `advance` during one round will be, twice as far per further
    /// refusal (`doublings`); never so far that `total` ids would not fit.
    fn leap(&mut self, advance: u64, doublings: u32, total: u64) {
        let Some(floor) = self.seq.guess().map(|g| g - 1) else {
            return;
        };
        let leap = advance.saturating_mul(1 << doublings.min(20));
        if let Some(target) = floor.checked_add(leap)
            && target.checked_add(total).is_some()
        {
            self.seq.observe(target);
        }
    }

    /// Gives the block from `first` out in queue order.
    fn hand_out(&self, batch: Vec<Ask>, first: &u64, total: u64) {
        let mut next = *first;
        let n = batch.len() as u64;
        for ask in batch {
            let last = next + (ask.count - 1);
            let _ = ask.reply.send(Ok(if ask.last { last } else { next }));
            next = last.saturating_add(1);
        }
        self.stats.round(n, total);
    }

    /// `batch` without the requests that would pass 2^64 - 1 even if the
    /// round started at the lowest value it can (the guess); those get
    /// their error now, and nothing is proposed for them.
    fn without_overflow(&self, batch: Vec<Ask>) -> Vec<Ask> {
        let Some(guess) = self.seq.guess() else {
            return batch;
        };
        let mut next = Some(guess);
        let mut kept = Vec::with_capacity(batch.len());
        for ask in batch {
            match next.and_then(|n| n.checked_add(ask.count - 1)) {
                Some(last) => {
                    next = last.checked_add(1);
                    kept.push(ask);
                }
                None => {
                    let text = format!(
                        "ERR the sequence {} cannot give {} more: it would pass \
                         18446744073709551615, the largest 64-bit id (it is at {} or above); \
                         nothing was written",
                        self.name,
                        ask.count,
                        guess - 1
                    );
                    self.stats.failed(1, false);
                    let _ = ask.reply.send(Err(text.into()));
                }
            }
        }
        kept
    }
}
