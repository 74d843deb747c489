//! The agent: keeps every shard stocked with `min_open` open windows above
//! the high-water mark, by the three phases of the module's safety
//! argument (fence, raise, create), under the agent lock.
//!
//! A run writes nothing until it has seen every shard answer with keys of
//! the right types (a read-only look first), so an agent with a shard down
//! or a key of another type says which and leaves every shard as it was.
//! Between phases it stops at the first shard that refuses: the fence of a
//! newer run means another agent took over, and it does the work.

use super::keys::HiloKeys;
use super::script::{Create, Fence, Raise};
use super::status::{ShardStatus, Window, shard_statuses};
use super::wire::{parse_id, wire};
use crate::base::setting::Setting;
use crate::claim::Claim;
use crate::error::{Error, Result};
use crate::lock::{LockOptions, Locker};
use crate::seq::census::Kind;
use crate::seq::sweep::Scope;
use crate::store::{Node, Quorum, Target};
use crate::timing::hilo::AGENT_LOCK_TTL;
use std::time::Duration;

/// What the agent keeps.
#[derive(Clone, Debug)]
pub struct AgentOptions {
    /// Ids per window.
    pub window_size: u64,
    /// Open windows each shard should have.
    pub min_open: u32,
    /// The first id of a new sequence (no shard knows it).
    pub start: u64,
    /// How long to wait for the agent lock.
    pub lock_wait: Duration,
}

/// What one run did.
#[derive(Clone, Debug, Default)]
pub struct AgentRun {
    /// True when no shard knew the sequence: it starts at `start`.
    pub new_sequence: bool,
    /// The high-water mark every shard now holds.
    pub hwm: u64,
    /// Windows opened, with the shard (its place in `--redis`).
    pub created: Vec<(usize, Window)>,
    /// Windows planned but not opened (their shard failed after the raise):
    /// their ids are skipped, never handed out.
    pub failed: Vec<String>,
    /// Windows open on each shard (in `--redis` order) after the run: those
    /// the fence found plus those created (for `yaraus_hilo_windows_open`).
    pub open: Vec<u64>,
}

/// The agent of one sequence over its shards.
pub struct Agent {
    shards: Quorum,
    keys: HiloKeys,
    locker: Locker,
    options: AgentOptions,
}

impl Agent {
    /// The agent over `targets` (every shard of the sequence). `durable`:
    /// refuse shards that do not fsync every write (see the module doc).
    pub fn new(
        targets: &[Target],
        namespace: &str,
        keys: HiloKeys,
        options: AgentOptions,
        durable: bool,
        request_timeout: Duration,
    ) -> Result<Agent> {
        if options.window_size == 0 {
            return Err(Error::Usage(format!(
                "{} 0 holds no ids",
                Setting::WindowSize
            )));
        }
        if options.min_open == 0 {
            return Err(Error::Usage(format!(
                "{} 0 would keep no window open; give 1 or more",
                Setting::MinOpen
            )));
        }
        let shards = Quorum::new(targets, request_timeout, durable)?;
        let mut lock = LockOptions::new(namespace, AGENT_LOCK_TTL);
        lock.request_timeout = request_timeout;
        lock.require_fsync = durable;
        let locker = Locker::new(targets, &keys.agent_lock(), lock)?;
        Ok(Agent {
            shards,
            keys,
            locker,
            options,
        })
    }

    pub fn keys(&self) -> &HiloKeys {
        &self.keys
    }

    /// What a long-running agent sweeps with no request
    /// ([`crate::seq::sweep::sweep_forever`]): its lock's fencing counter,
    /// so that a shard restarted empty gets it back after its quarantine
    /// however far apart the runs are, and a second wipe finds it held.
    pub fn sweep_scope(&self) -> Scope {
        Scope::Keys(vec![(Kind::Fencing, self.locker.fencing_key().to_string())])
    }

    /// The shards' URLs, in `--redis` order.
    pub fn labels(&self) -> std::sync::Arc<[String]> {
        self.shards.labels()
    }

    /// One run: look at every shard, take the lock, fence, raise, create,
    /// release the lock.
    pub async fn run(&mut self) -> Result<AgentRun> {
        let seen = self.look().await?;
        // The same plan, on what the look saw: one that cannot be made (the
        // id space used up) is refused before anything is written.
        let looked: Vec<Fenced> = seen
            .iter()
            .map(|s| Fenced {
                hwm: s.hwm,
                open: s.open.len() as u64,
            })
            .collect();
        Plan::new(&self.options, &looked, &seen)?;
        let mut held = self
            .locker
            .acquire(
                Some(self.options.lock_wait),
                std::future::pending::<Error>(),
            )
            .await?;
        let fence = format!(
            "{}:{}",
            wire(held.fencing_token()),
            crate::base::random::random_hex::<8>("the agent's fence")?
        );
        let outcome = self.stock(&seen, &fence).await;
        // A lock left behind only delays the next run by its ttl.
        let _ = held.release().await;
        outcome
    }

    /// Every shard's state, read-only; an error naming each shard that did
    /// not answer, or the first fault retrying cannot cure.
    async fn look(&mut self) -> Result<Vec<ShardStatus>> {
        let replies = shard_statuses(&mut self.shards, &self.keys).await;
        let mut seen = Vec::with_capacity(replies.len());
        let mut silent = Vec::new();
        for reply in replies {
            match reply {
                Ok(status) => seen.push(status),
                Err(e) if e.is_fatal() => return Err(e),
                Err(e) => silent.push(e.to_string()),
            }
        }
        if !silent.is_empty() {
            return Err(Error::Unavailable(format!(
                "the hilo agent of {} creates windows only when every shard answers, and \
                 wrote nothing: {}",
                self.keys.name(),
                silent.join("; ")
            )));
        }
        Ok(seen)
    }

    /// The three phases, with `fence` for this run.
    async fn stock(&mut self, seen: &[ShardStatus], fence: &str) -> Result<AgentRun> {
        let labels = self.shards.labels();
        let keys = &self.keys;
        let replies = self
            .shards
            .round(|node| fence_one(node, keys, fence))
            .all()
            .await;
        let fenced = self.all_or_stop("fence", replies)?;
        let plan = Plan::new(&self.options, &fenced, seen)?;
        if plan.windows.is_empty() && fenced.iter().all(|f| f.hwm == Some(plan.hwm)) {
            return Ok(plan.into_run(Vec::new()));
        }
        let raise = Raise {
            keys,
            fence,
            hwm: plan.hwm,
            window_size: self.options.window_size,
        };
        let replies = self.shards.round(|node| raise_one(node, raise)).all().await;
        self.all_or_stop("raise", replies)?;
        let mut failed = Vec::new();
        let mut created = Vec::new();
        for &(shard, window) in &plan.windows {
            let node = &mut self.shards.nodes_mut()[shard];
            match create_one(node, &self.keys, fence, window).await {
                Ok(()) => created.push((shard, window)),
                Err(e) => failed.push(format!(
                    "[{}, {}) on {}: {e}",
                    window.start, window.end, labels[shard]
                )),
            }
        }
        let mut run = plan.into_run(created);
        run.failed = failed;
        Ok(run)
    }

    /// The replies of a phase, if every shard accepted it; otherwise the
    /// error that names each shard that did not.
    fn all_or_stop<T>(&self, phase: &str, replies: Vec<Result<Phase<T>>>) -> Result<Vec<T>> {
        let labels = self.shards.labels();
        let mut accepted = Vec::with_capacity(replies.len());
        let mut newer = Vec::new();
        let mut silent = Vec::new();
        for (label, reply) in labels.iter().zip(replies) {
            match reply {
                Ok(Phase::Accepted(t)) => accepted.push(t),
                Ok(Phase::Refused(fence)) => newer.push(format!("{label} (fence {fence:?})")),
                Err(e) if e.is_fatal() => return Err(e),
                Err(e) => silent.push(e.to_string()),
            }
        }
        let name = self.keys.name();
        if !newer.is_empty() {
            return Err(Error::Exhausted(format!(
                "the hilo agent of {name} stopped at its {phase}: another agent's run fenced \
                 {} after this one (or the shard restarted empty); that run stocks the shards",
                newer.join(", ")
            )));
        }
        if !silent.is_empty() {
            return Err(Error::Unavailable(format!(
                "the hilo agent of {name} stopped at its {phase}, which every shard must \
                 accept, and created no window: {}",
                silent.join("; ")
            )));
        }
        Ok(accepted)
    }
}

/// A phase's answer from one shard: accepted, or refused because the
/// shard's fence is not this run's (what it holds instead).
enum Phase<T> {
    Accepted(T),
    Refused(String),
}

/// What a shard said to the fence.
struct Fenced {
    hwm: Option<u64>,
    open: u64,
}

async fn fence_one(node: &mut Node, keys: &HiloKeys, fence: &str) -> Result<Phase<Fenced>> {
    let answer = node.ask(&Fence { keys, fence }.invocation()).await?;
    match answer.code()? {
        1 => Ok(Phase::Accepted(Fenced {
            hwm: parse_id(&answer, 1)?,
            open: answer.counter(2)?,
        })),
        2 => Ok(Phase::Refused(answer.text(1)?)),
        _ => Err(answer.unknown()),
    }
}

async fn raise_one(node: &mut Node, raise: Raise<'_>) -> Result<Phase<()>> {
    let answer = node.ask(&raise.invocation()).await?;
    match answer.code()? {
        1 => Ok(Phase::Accepted(())),
        2 => Ok(Phase::Refused(answer.text(1)?)),
        _ => Err(answer.unknown()),
    }
}

async fn create_one(node: &mut Node, keys: &HiloKeys, fence: &str, window: Window) -> Result<()> {
    let create = Create {
        keys,
        fence,
        start: window.start,
        end: window.end,
    };
    let answer = node.ask(&create.invocation()).await?;
    match answer.code()? {
        1 => Ok(()),
        2 => Err(Error::Exhausted(format!(
            "refused: the shard's fence is now {:?} (a newer agent run, or it restarted)",
            answer.text(1)?
        ))),
        3 => Err(Error::State(format!(
            "refused: the shard's high-water mark is {:?}, below the window (it restarted)",
            answer.text(1)?
        ))),
        _ => Err(answer.unknown()),
    }
}

/// The windows a run creates, from what the fence replies said.
struct Plan {
    new_sequence: bool,
    /// The high-water mark after the run: every window below it.
    hwm: u64,
    windows: Vec<(usize, Window)>,
    /// Windows open on each shard when fenced.
    open: Vec<u64>,
}

impl Plan {
    fn new(options: &AgentOptions, fenced: &[Fenced], seen: &[ShardStatus]) -> Result<Plan> {
        let known = fenced.iter().filter_map(|f| f.hwm).max();
        let new_sequence = known.is_none() && seen.iter().all(|s| !s.known);
        let mut next = known.unwrap_or(options.start).max(options.start);
        let mut windows = Vec::new();
        for (shard, f) in fenced.iter().enumerate() {
            for _ in f.open..u64::from(options.min_open) {
                let end = next.checked_add(options.window_size).ok_or_else(|| {
                    Error::State(format!(
                        "the id space is used up: a window of {} ids from {next} passes 2^64-1",
                        options.window_size
                    ))
                })?;
                windows.push((
                    shard,
                    Window {
                        start: next,
                        end,
                        next,
                    },
                ));
                next = end;
            }
        }
        Ok(Plan {
            new_sequence,
            hwm: next,
            windows,
            open: fenced.iter().map(|f| f.open).collect(),
        })
    }

    fn into_run(self, created: Vec<(usize, Window)>) -> AgentRun {
        let mut open = self.open;
        for &(shard, _) in &created {
            open[shard] += 1;
        }
        AgentRun {
            open,
            new_sequence: self.new_sequence,
            hwm: self.hwm,
            created,
            failed: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> AgentOptions {
        AgentOptions {
            window_size: 100,
            min_open: 2,
            start: 1,
            lock_wait: Duration::ZERO,
        }
    }

    #[test]
    fn windows_follow_the_highest_mark_and_fill_each_shard_to_min_open() {
        let fenced = [
            Fenced {
                hwm: Some(500),
                open: 1,
            },
            Fenced { hwm: None, open: 0 },
            Fenced {
                hwm: Some(700),
                open: 2,
            },
        ];
        let plan = Plan::new(&options(), &fenced, &[ShardStatus::default()]).unwrap();
        let got: Vec<(usize, u64, u64)> = plan
            .windows
            .iter()
            .map(|(s, w)| (*s, w.start, w.end))
            .collect();
        assert_eq!(got, [(0, 700, 800), (1, 800, 900), (1, 900, 1000)]);
        assert_eq!(plan.hwm, 1000);
        assert!(!plan.new_sequence);
    }

    #[test]
    fn a_new_sequence_starts_at_start_and_the_top_of_the_space_is_refused() {
        let fenced = [Fenced { hwm: None, open: 0 }];
        let plan = Plan::new(&options(), &fenced, &[ShardStatus::default()]).unwrap();
        assert!(plan.new_sequence);
        assert_eq!(plan.windows[0].1.start, 1);
        let high = [Fenced {
            hwm: Some(u64::MAX - 150),
            open: 0,
        }];
        assert!(matches!(
            Plan::new(&options(), &high, &[]),
            Err(Error::State(_))
        ));
    }
}
