//! Distributed locks over one or N independent Redis masters, with fencing
//! tokens: what `yaraus lock` holds while its command runs.
//!
//! # The key, and who else uses it
//!
//! The lock is the key `NAME` (after an optional prefix) holding a random
//! token, set with `SET NX PX ttl`, extended and deleted only by the holder of
//! that token (compare-and-pexpire, compare-and-delete). That is the
//! convention of redis-py's `Lock`, redsync and node-redlock, so a yaraus lock
//! and theirs on the same name exclude each other, and yaraus never deletes a
//! key whose value is not its own token.
//!
//! # One master, several masters
//!
//! With one master every step is one Lua script. With N masters it is Redlock
//! (antirez, redis.io/topics/distlock): the acquire script goes to every
//! master at once, each request bounded by a timeout much smaller than the
//! ttl; the lock is ours only with a majority and with validity left, where
//! validity = ttl − elapsed − drift (drift = 1% of the ttl + 2 ms, as in
//! redsync), elapsed being measured on the monotonic clock from *before* the
//! first request. A failed attempt releases every node (even those that did
//! not answer) and is retried after a random pause. One code path serves
//! both: a single master is a quorum of one.
//!
//! Two rules go beyond the Redlock text, each for a bug seen in the wild:
//!
//! * an acquisition counts only if at least half the ttl is left once the
//!   lock *and its fencing token* are in hand (node-redlock #296 handed out
//!   locks whose validity had already run out; half the ttl leaves room for
//!   the first extension, due at a third);
//! * an extension that finds our key *missing* on a node (the node restarted
//!   empty) sets our token there again, so that the majority heals instead of
//!   wearing away one restart at a time (redsync #147/#149). Such a node does
//!   not count towards that round's majority; a token gone from a majority
//!   means the lock is lost.
//!
//! # Fencing tokens
//!
//! Every acquisition yields a number greater than every number handed out
//! before for that name, for the child to pass to the resource it protects
//! (Kleppmann, "How to do distributed locking"). The counter lives at
//! `NAMESPACE:fencing:KEY` and never expires.
//!
//! * One master: `INCR` in the same script as the `SET`.
//! * N masters: the majority sequence of [`crate::seq`]. Its vote
//!   (set-if-less-than) rides in the acquire script, proposing one more than
//!   the highest counter this process has seen but at least the wall clock in
//!   microseconds (so that a fresh process usually wins at once: tokens with
//!   several masters are clock-like numbers, not 1, 2, 3), and is applied
//!   only on nodes where the `SET` succeeded. If a majority of those accepted, that number
//!   is the token and the lock cost one round trip; otherwise a plain round of
//!   the sequence follows, once the lock is held.
//!
//!   Why a vote tied to the `SET` is safe: let H0 hold the lock before H. Their
//!   accepting majorities share a node x, where both took the lock. H's key
//!   at x lived from H's `SET` until after H's validity ended, so H0, which
//!   held and voted before H, got x (and wrote its token T0 there) before H
//!   did; H's proposal was accepted at x only if it was above T0.
//!
//! A token is handed out only if the lock is still valid after the token was
//! obtained; the nodes must then keep their counters across a crash, which is
//! why N masters require `appendfsync always` (see [`crate::seq`]).
//!
//! # Semaphores
//!
//! `limit > 1` admits up to that many holders: a sorted set of tokens scored
//! by their expiry (server time), on one master only. Quorums do not compose
//! for counts: with 3 masters and a limit of 2, holders on nodes {1,2}, {2,3}
//! and {1,3} each have a majority while no node counts more than two.

mod info;
mod token;

pub use info::{LockInfo, NodeInfo, SemaphoreHolder};
pub use token::{Holder, Token, describe_holder, fill_random};

use crate::error::{Error, Result};
use crate::seq::{
    COUNTER_LUA, MajoritySequence, Quorum, Replies, gather, is_permanent, parse_counter,
};
use crate::store::Target;
use crate::supervise::{BootInstant, Claim, RenewError};
use std::future::Future;
use std::sync::LazyLock;
use std::time::Duration;
use tokio::time::Instant;

static ACQUIRE_CODE: LazyLock<String> =
    LazyLock::new(|| [COUNTER_LUA, include_str!("acquire.lua")].concat());
const EXTEND_CODE: &str = include_str!("extend.lua");
const RELEASE_CODE: &str = include_str!("release.lua");
const WITHDRAW_CODE: &str = include_str!("withdraw.lua");
static ACQUIRE: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(&ACQUIRE_CODE));
static EXTEND: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(EXTEND_CODE));
static RELEASE: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(RELEASE_CODE));
static WITHDRAW: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(WITHDRAW_CODE));
static SEMAPHORE_ACQUIRE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(&[COUNTER_LUA, include_str!("semaphore_acquire.lua")].concat())
});
static SEMAPHORE_EXTEND: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("semaphore_extend.lua")));
static SEMAPHORE_RELEASE: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("semaphore_release.lua")));

/// The shortest ttl accepted: the lock must outlive the round trips that take
/// and extend it.
pub const MIN_TTL: Duration = Duration::from_millis(100);
/// The longest ttl accepted (Redis's PX takes anything, people rarely mean it).
pub const MAX_TTL: Duration = Duration::from_secs(365 * 24 * 3600);
/// Shortest and longest pause between two attempts (redsync's defaults).
const RETRY_PAUSE: (Duration, Duration) = (Duration::from_millis(50), Duration::from_millis(250));
/// While waiting, repeat the "still waiting" line this often.
const WAIT_REPORT_EVERY: Duration = Duration::from_secs(30);

/// The clock-drift margin taken off every validity: 1% of the ttl + 2 ms.
pub fn drift(ttl: Duration) -> Duration {
    ttl / 100 + Duration::from_millis(2)
}

/// How a [`Locker`] takes its lock.
#[derive(Clone, Debug)]
pub struct LockOptions {
    /// Lock length written at each acquire and extension.
    pub ttl: Duration,
    /// Put in front of the name to make the key (default: nothing).
    pub prefix: String,
    /// Namespace of yaraus's own keys (the fencing counter).
    pub namespace: String,
    /// Holders admitted at once: 1 for a lock, more for a semaphore (one master only).
    pub limit: u32,
    /// Bound on one request to one master; much smaller than the ttl.
    pub request_timeout: Duration,
    /// With several masters, refuse nodes that do not fsync every write
    /// (the fencing sequence needs it). Ignored with one master.
    pub require_fsync: bool,
}

impl LockOptions {
    /// Defaults for `ttl`: no prefix, namespace `yaraus`, a plain lock, a
    /// request timeout of a tenth of the ttl (at most 2 s), fsync required.
    pub fn new(ttl: Duration) -> LockOptions {
        LockOptions {
            ttl,
            prefix: String::new(),
            namespace: "yaraus".into(),
            limit: 1,
            request_timeout: (ttl / 10).min(Duration::from_secs(2)),
            require_fsync: true,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Lock,
    Semaphore { limit: u32 },
}

/// How the acquire script counts the fencing token.
#[derive(Clone, Copy, Debug)]
enum FenceMode {
    /// One master: INCR.
    Increment,
    /// Several masters: vote for this value.
    Propose(u64),
}

/// The fencing token to vote for with several masters: one more than the
/// highest counter this process has seen, and at least the wall clock in
/// microseconds since the epoch. The clock is what lets a process that has
/// seen nothing yet (every `yaraus lock` is one) settle its token in the
/// acquire round: the previous holder voted for its own clock, which, give or
/// take clock skew, is behind ours. It is only a guess: safety rests on the
/// set-if-less-than vote, and a guess that loses (a clock behind, or a
/// counter raised some other way) costs one more round, as it did before.
fn proposal(seen: Option<u64>) -> u64 {
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
    seen.unwrap_or(1).max(clock)
}

/// The client of one named lock on its masters. Cheap to clone: clones share
/// the connections.
#[derive(Clone)]
pub struct Locker {
    quorum: Quorum,
    name: String,
    key: String,
    kind: Kind,
    ttl: Duration,
    fencing: MajoritySequence,
}

/// The outcome of one attempt that did not fail outright.
pub enum Attempt {
    Acquired(Box<HeldLock>),
    Refused(Refusal),
}

/// Why an attempt did not get the lock (everything it took is released).
#[derive(Clone, Debug)]
pub struct Refusal {
    pub kind: RefusalKind,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusalKind {
    /// Someone else holds it (or contenders split the votes).
    Busy,
    /// Too few masters answered.
    Unreachable,
    /// A majority said yes, but too late for the lock to be worth having.
    TooSlow,
}

impl Refusal {
    /// The error to report when no more attempts will be made. `waited`:
    /// how long the caller was willing to wait.
    pub fn into_error(self, waited: Option<Duration>) -> Error {
        let suffix = match waited {
            Some(w) if w.is_zero() => String::from("; not waiting"),
            Some(w) => format!(
                "; gave up after waiting {}",
                humantime::format_duration(rounded(w))
            ),
            None => String::new(),
        };
        match self.kind {
            RefusalKind::Busy => Error::Exhausted(format!("{}{suffix}", self.message)),
            _ => Error::Unavailable(format!("{}{suffix}", self.message)),
        }
    }
}

/// One node's reply to the acquire script.
#[derive(Debug)]
enum NodeAcquire {
    Taken {
        voted: bool,
        counter: u64,
        /// For an accepted proposal: the counter it replaced.
        before: Option<u64>,
    },
    Held {
        holder: Vec<u8>,
        ttl_ms: i64,
        counter: u64,
        holders: Option<i64>,
    },
    WrongType(String),
}

/// One node's reply to the extend script.
#[derive(Debug)]
enum NodeExtend {
    Extended,
    SetAgain,
    Missing,
    Taken(Vec<u8>),
    WrongType(String),
}

/// What a release did.
#[derive(Clone, Debug)]
pub struct Released {
    /// Nodes where our token was live and is now deleted.
    pub freed: usize,
    /// Nodes that answered.
    pub answered: usize,
    pub masters: usize,
    /// Why the others did not answer.
    pub problems: Vec<String>,
}

/// What a release means for the lock, by the quorum arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseVerdict {
    /// Freed on a majority: the lock is free.
    Freed,
    /// Freed on fewer than a majority, but the masters that did not answer
    /// could make one up: nobody can tell whether it is still held.
    Unknown { silent: usize },
    /// Freed on fewer than a majority even counting the silent masters: the
    /// token did not hold the lock (any more).
    NotHeld,
}

impl Released {
    /// The verdict for a lock whose majority is `majority`.
    pub fn verdict(&self, majority: usize) -> ReleaseVerdict {
        let silent = self.masters - self.answered;
        if self.freed >= majority {
            ReleaseVerdict::Freed
        } else if self.freed + silent >= majority {
            ReleaseVerdict::Unknown { silent }
        } else {
            ReleaseVerdict::NotHeld
        }
    }
}

impl Locker {
    /// The lock `name` on `targets` (one master, or N independent masters).
    pub fn new(targets: &[Target], name: &str, options: LockOptions) -> Result<Locker> {
        if name.is_empty() {
            return Err(Error::Usage("the lock name must not be empty".into()));
        }
        let ttl = options.ttl;
        if ttl < MIN_TTL {
            return Err(Error::Usage(format!(
                "--ttl {} is too short: a lock must live at least {} to outlast the round trips \
                 that take and extend it",
                humantime::format_duration(ttl),
                humantime::format_duration(MIN_TTL)
            )));
        }
        if ttl > MAX_TTL {
            return Err(Error::Usage(format!(
                "--ttl {} is too long: at most {}; a lock held longer is extended while its \
                 command runs",
                humantime::format_duration(ttl),
                humantime::format_duration(MAX_TTL)
            )));
        }
        if options.request_timeout.is_zero() {
            return Err(Error::Usage(
                "the request timeout must be more than zero".into(),
            ));
        }
        if options.limit == 0 {
            return Err(Error::Usage(
                "--limit 0 would admit nobody; use 1 for a lock".into(),
            ));
        }
        if options.limit > 1 && targets.len() > 1 {
            return Err(Error::Usage(format!(
                "--limit {} needs exactly one Redis master (with its replicas), not {}: counts do \
                 not add up over a quorum (with 3 masters and --limit 2, holders on nodes {{1,2}}, \
                 {{2,3}} and {{1,3}} each have a majority while no node counts more than 2)",
                options.limit,
                targets.len()
            )));
        }
        if options.namespace.is_empty() {
            return Err(Error::Usage("the namespace must not be empty".into()));
        }
        let mut quorum = Quorum::new(
            targets,
            options.request_timeout,
            options.require_fsync && targets.len() > 1,
        )?;
        if targets.len() > 1 {
            // One master waits for its only node: nothing straggles there,
            // and its first script costs no extra round trip.
            quorum.preload(&[
                ACQUIRE_CODE.as_str(),
                EXTEND_CODE,
                RELEASE_CODE,
                WITHDRAW_CODE,
            ]);
        }
        let key = format!("{}{name}", options.prefix);
        let fencing = MajoritySequence::new(format!("{}:fencing:{key}", options.namespace));
        Ok(Locker {
            quorum,
            name: name.to_string(),
            kind: if options.limit > 1 {
                Kind::Semaphore {
                    limit: options.limit,
                }
            } else {
                Kind::Lock
            },
            key,
            ttl,
            fencing,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Redis key: prefix + name.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The key of the fencing counter.
    pub fn fencing_key(&self) -> &str {
        self.fencing.key()
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    pub fn masters(&self) -> usize {
        self.quorum.len()
    }

    pub fn majority(&self) -> usize {
        self.quorum.majority()
    }

    /// The bound on one node's part of a round (for release timeouts).
    pub fn round_timeout(&self) -> Duration {
        self.quorum.round_timeout()
    }

    /// What to call the thing in messages.
    fn what(&self) -> String {
        match self.kind {
            Kind::Lock => format!("lock {}", self.name),
            Kind::Semaphore { limit } => format!("semaphore {} (limit {limit})", self.name),
        }
    }

    /// Tries to take the lock until it is ours, `wait` runs out (`None`:
    /// forever; zero: one attempt), or `cancel` resolves. On cancel, whatever
    /// an attempt in flight may have taken is released and `cancel`'s error
    /// is returned.
    ///
    /// Each attempt has a token of its own: the release that follows a
    /// failed attempt may reach a slow master late, and must never delete
    /// what a later attempt wrote there.
    pub async fn acquire(
        &mut self,
        wait: Option<Duration>,
        cancel: impl Future<Output = Error>,
    ) -> Result<HeldLock> {
        let give_up = wait.map(|w| Instant::now() + w);
        let mut cancel = std::pin::pin!(cancel);
        let mut report = WaitReport::default();
        loop {
            let token = Token::generate()?;
            let attempt = tokio::select! {
                biased;
                e = &mut cancel => Err(e),
                a = self.try_acquire(&token) => Ok(a),
            };
            let refusal = match attempt {
                Ok(Ok(Attempt::Acquired(held))) => return Ok(*held),
                Ok(Ok(Attempt::Refused(refusal))) => refusal,
                Ok(Err(fatal)) => return Err(fatal),
                Err(interrupted) => {
                    let _ =
                        tokio::time::timeout(self.round_timeout() * 2, self.release_round(&token))
                            .await;
                    return Err(interrupted);
                }
            };
            let now = Instant::now();
            let mut pause = random_between(RETRY_PAUSE.0, RETRY_PAUSE.1);
            if let Some(limit) = give_up {
                if now >= limit {
                    return Err(refusal.into_error(wait));
                }
                pause = pause.min(limit - now);
            }
            report.note(&self.what(), &refusal, wait);
            let interrupted = tokio::select! {
                biased;
                e = &mut cancel => Some(e),
                _ = tokio::time::sleep(pause) => None,
            };
            if let Some(e) = interrupted {
                return Err(e);
            }
        }
    }

    /// One attempt, with `token`: the Redlock round (and, with several
    /// masters, a fencing round if the vote in it did not settle). Anything
    /// taken is released again unless the attempt succeeds. `Err` only for
    /// faults that retrying cannot cure (a key of another type on a majority,
    /// a node that does not fsync, a broken fencing counter, a refused
    /// password).
    pub async fn try_acquire(&mut self, token: &Token) -> Result<Attempt> {
        let n = self.quorum.len();
        let m = self.quorum.majority();
        let mode = match (self.kind, n) {
            (Kind::Semaphore { .. }, _) | (_, 1) => FenceMode::Increment,
            _ => FenceMode::Propose(proposal(self.fencing.guess())),
        };
        let start = Instant::now();
        let boot_start = BootInstant::now();
        let replies = self.acquire_round(token, mode).await;
        let validity = self.ttl.saturating_sub(drift(self.ttl));
        let validity_end = start + validity;
        let labels = self.quorum.labels();

        let mut taken = 0;
        let mut voted = 0;
        let mut fence_from_increment = None;
        let mut busy: Vec<(String, Vec<u8>, i64, Option<i64>)> = Vec::new();
        let mut wrong: Vec<String> = Vec::new();
        let mut failed: Vec<String> = Vec::new();
        let mut fatal = None;
        // Where our proposal stood, the counter it replaced: a failed attempt
        // puts it back (see withdraw.lua).
        let mut replaced: Vec<Option<u64>> = vec![None; n];
        for (i, (label, reply)) in labels.iter().zip(replies).enumerate() {
            match reply {
                // Not waited for: the round was settled without it.
                None => {}
                Some(Ok(NodeAcquire::Taken {
                    voted: v,
                    counter,
                    before,
                })) => {
                    taken += 1;
                    if matches!(mode, FenceMode::Propose(_)) && v {
                        replaced[i] = before;
                    }
                    voted += usize::from(v);
                    self.fencing.observe(counter);
                    if matches!(mode, FenceMode::Increment) {
                        fence_from_increment = Some(counter);
                    }
                }
                Some(Ok(NodeAcquire::Held {
                    holder,
                    ttl_ms,
                    counter,
                    holders,
                })) => {
                    self.fencing.observe(counter);
                    busy.push((label.clone(), holder, ttl_ms, holders));
                }
                Some(Ok(NodeAcquire::WrongType(kind))) => {
                    wrong.push(format!("{label} holds a {kind} at {}", self.key))
                }
                Some(Err(e @ Error::State(_))) => fatal = Some(e),
                Some(Err(e)) if is_permanent(&e) => fatal = Some(e),
                Some(Err(e)) => failed.push(e.to_string()),
            }
        }
        if let Some(e) = fatal {
            self.give_back(token, mode, &replaced).await;
            return Err(e);
        }
        if wrong.len() > n - m {
            self.give_back(token, mode, &replaced).await;
            let expected = match self.kind {
                Kind::Lock => "a string (a lock's token)",
                Kind::Semaphore { .. } => "a sorted set (a semaphore)",
            };
            return Err(Error::State(format!(
                "cannot take the {}: {}, where {expected} was expected; another program uses \
                 that key (pick another name, or --prefix), or the holders disagree on --limit",
                self.what(),
                wrong.join(", ")
            )));
        }
        if taken < m {
            self.give_back(token, mode, &replaced).await;
            return Ok(Attempt::Refused(self.refusal(n, m, &busy, &failed, &wrong)));
        }
        for w in &wrong {
            crate::warn!("{}: {w}; the other masters make a majority", self.what());
        }

        // The lock is ours; now its fencing token.
        let fence = match mode {
            FenceMode::Increment => fence_from_increment,
            FenceMode::Propose(guess) if voted >= m => Some(guess),
            _ => None,
        };
        let fencing_token = match fence {
            Some(f) => f,
            None => {
                let fence_deadline = validity_end.checked_sub(self.ttl / 2).unwrap_or(start);
                match self
                    .fencing
                    .next(&mut self.quorum, fence_deadline.max(Instant::now()))
                    .await
                {
                    Ok(f) => f,
                    Err(e @ Error::State(_)) => {
                        self.give_back(token, mode, &replaced).await;
                        return Err(e);
                    }
                    Err(e) => {
                        self.give_back(token, mode, &replaced).await;
                        return Ok(Attempt::Refused(Refusal {
                            kind: RefusalKind::Unreachable,
                            message: format!(
                                "took the {} but could not get its fencing token in time: {e}",
                                self.what()
                            ),
                        }));
                    }
                }
            }
        };
        let now = Instant::now();
        if validity_end.saturating_duration_since(now) < self.ttl / 2 {
            self.give_back(token, mode, &replaced).await;
            return Ok(Attempt::Refused(Refusal {
                kind: RefusalKind::TooSlow,
                message: format!(
                    "took the {} on {taken} of {n} masters, but that took {} of its {} ttl, \
                     leaving too little to be safe",
                    self.what(),
                    humantime::format_duration(millis(now - start)),
                    humantime::format_duration(self.ttl)
                ),
            }));
        }
        Ok(Attempt::Acquired(Box::new(HeldLock {
            locker: self.clone(),
            token: token.clone(),
            fencing_token,
            deadline: boot_start + validity,
            taken_on: taken,
        })))
    }

    /// Sorts a failed attempt into busy / unreachable, with a message that
    /// says who holds the lock or which masters could not be reached.
    fn refusal(
        &self,
        n: usize,
        m: usize,
        busy: &[(String, Vec<u8>, i64, Option<i64>)],
        failed: &[String],
        wrong: &[String],
    ) -> Refusal {
        let expiry = |ttl_ms: i64| match ttl_ms {
            -1 => " and has no expiry: it will never be freed by itself (delete the key if its \
                   holder is gone)"
                .to_string(),
            ms if ms >= 0 => format!(
                ", expires in {}",
                humantime::format_duration(rounded(Duration::from_millis(ms as u64)))
            ),
            _ => String::new(),
        };
        let held_by = busy
            .first()
            .map(|(_, holder, ttl_ms, holders)| match self.kind {
                Kind::Semaphore { limit } => format!(
                    "every place of the {} is taken ({} holders; the first frees in {})",
                    self.what(),
                    holders.unwrap_or(limit as i64),
                    humantime::format_duration(rounded(Duration::from_millis(
                        (*ttl_ms).max(0) as u64
                    )))
                ),
                Kind::Lock => format!(
                    "{} is busy: held by {}{}",
                    self.what(),
                    describe_holder(holder),
                    expiry(*ttl_ms)
                ),
            });
        if busy.len() > n - m || (!busy.is_empty() && failed.len() <= n - m) {
            let mut message = held_by.unwrap_or_default();
            if n > 1 {
                message = format!(
                    "{message}; busy on {} of {n} masters{}{}",
                    busy.len(),
                    if failed.is_empty() {
                        String::new()
                    } else {
                        format!(", {} unreachable", failed.len())
                    },
                    if busy.len() <= n - m {
                        "; contenders split the votes"
                    } else {
                        ""
                    }
                );
            }
            return Refusal {
                kind: RefusalKind::Busy,
                message,
            };
        }
        let mut why: Vec<String> = failed.to_vec();
        why.extend(wrong.iter().cloned());
        if !busy.is_empty() {
            why.push(format!(
                "{} held it elsewhere",
                busy.iter()
                    .map(|(l, ..)| l.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Refusal {
            kind: RefusalKind::Unreachable,
            message: if n == 1 {
                why.join("; ")
            } else {
                format!(
                    "cannot take the {}: {} of the {n} masters failed, and a majority ({m}) is needed: {}",
                    self.what(),
                    failed.len(),
                    why.join("; ")
                )
            },
        }
    }

    async fn acquire_round(&mut self, token: &Token, mode: FenceMode) -> Replies<NodeAcquire> {
        let n = self.quorum.len();
        let m = self.quorum.majority();
        let labels = self.quorum.labels();
        let limit = self.quorum.round_timeout();
        let (key, fence_key, kind) = (self.key.as_str(), self.fencing.key(), self.kind);
        let ttl_ms = millis_arg(self.ttl);
        let futures: Vec<_> = self
            .quorum
            .nodes_mut()
            .iter_mut()
            .map(|node| async move {
                node.prepare().await?;
                let script: &redis::Script = match kind {
                    Kind::Lock => &ACQUIRE,
                    Kind::Semaphore { .. } => &SEMAPHORE_ACQUIRE,
                };
                let mut invocation = script.prepare_invoke();
                invocation
                    .key(key)
                    .key(fence_key)
                    .arg(token.as_str())
                    .arg(ttl_ms);
                match (kind, mode) {
                    (Kind::Semaphore { limit }, _) => invocation.arg(limit),
                    (Kind::Lock, FenceMode::Increment) => invocation.arg("incr").arg(""),
                    (Kind::Lock, FenceMode::Propose(v)) => {
                        invocation.arg("propose").arg(v.to_string())
                    }
                };
                let reply: redis::Value = node.script(&invocation).await?;
                parse_acquire(node.label(), reply)
            })
            .collect();
        gather(futures, &labels, limit, |replies| {
            let (mut good, mut taken, mut refused, mut unvoted) = (0, 0, 0, 0);
            for reply in replies.iter().flatten() {
                match reply {
                    Ok(NodeAcquire::Taken { voted, .. }) => {
                        taken += 1;
                        if *voted {
                            good += 1;
                        } else {
                            unvoted += 1;
                        }
                    }
                    _ => refused += 1,
                }
            }
            good >= m || refused > n - m || (taken >= m && refused + unvoted > n - m)
        })
        .await
    }

    /// Extends the lock held with `token` to a full ttl on every master,
    /// setting the token again where a node lost the key. Returns the
    /// validity (ttl − drift) counted from before the requests were sent.
    pub async fn extend(&mut self, token: &Token) -> Result<Duration, RenewError> {
        let n = self.quorum.len();
        let m = self.quorum.majority();
        let heal = n > 1 && self.kind == Kind::Lock;
        let labels = self.quorum.labels();
        let limit = self.quorum.round_timeout();
        let (key, kind) = (self.key.as_str(), self.kind);
        let ttl_ms = millis_arg(self.ttl);
        let futures: Vec<_> = self
            .quorum
            .nodes_mut()
            .iter_mut()
            .map(|node| async move {
                let script: &redis::Script = match kind {
                    Kind::Lock => &EXTEND,
                    Kind::Semaphore { .. } => &SEMAPHORE_EXTEND,
                };
                let mut invocation = script.prepare_invoke();
                invocation
                    .key(key)
                    .arg(token.as_str())
                    .arg(ttl_ms)
                    .arg(if heal { "1" } else { "0" });
                let reply: redis::Value = node.script(&invocation).await?;
                parse_extend(node.label(), reply)
            })
            .collect();
        let replies = gather(futures, &labels, limit, |replies| {
            let ours = replies
                .iter()
                .filter(|r| matches!(r, Some(Ok(NodeExtend::Extended))))
                .count();
            let gone = replies
                .iter()
                .filter(|r| matches!(r, Some(Ok(e)) if !matches!(e, NodeExtend::Extended)))
                .count();
            ours >= m || gone >= m
        })
        .await;

        let mut ours = 0;
        let mut gone = Vec::new();
        let mut set_again = Vec::new();
        let mut failed = Vec::new();
        for (label, reply) in labels.iter().zip(replies) {
            match reply {
                None => {}
                Some(Ok(NodeExtend::Extended)) => ours += 1,
                Some(Ok(NodeExtend::SetAgain)) => {
                    set_again.push(label.clone());
                    gone.push(format!("{label}: our token is gone (deleted, or expired)"));
                }
                Some(Ok(NodeExtend::Missing)) => {
                    gone.push(format!("{label}: our token is gone (deleted, or expired)"))
                }
                Some(Ok(NodeExtend::Taken(holder))) => {
                    gone.push(format!("{label}: now held by {}", describe_holder(&holder)))
                }
                Some(Ok(NodeExtend::WrongType(t))) => {
                    gone.push(format!("{label}: the key is now a {t}"))
                }
                Some(Err(e)) => failed.push(e.to_string()),
            }
        }
        if ours >= m {
            if !set_again.is_empty() {
                crate::info!(
                    "{}: set our token again on {}, which had lost it",
                    self.what(),
                    set_again.join(", ")
                );
            }
            return Ok(self.ttl.saturating_sub(drift(self.ttl)));
        }
        if gone.len() >= m {
            if !set_again.is_empty() {
                self.release_round(token).await;
            }
            let detail = gone
                .iter()
                .map(|g| g.split_once(": ").map_or(g.as_str(), |(_, why)| why))
                .collect::<Vec<_>>();
            return Err(RenewError::Lost(if n == 1 {
                format!(
                    "the key {} no longer holds our token: {}",
                    self.key,
                    detail.join("; ")
                )
            } else {
                format!(
                    "our token is gone from {} of {n} masters: {}",
                    gone.len(),
                    gone.join("; ")
                )
            }));
        }
        let mut why = gone;
        why.extend(failed);
        Err(RenewError::Failed(Error::Unavailable(format!(
            "extended on {ours} of {n} masters, {m} needed: {}",
            why.join("; ")
        ))))
    }

    /// Deletes the lock on every master where it holds `token` (never
    /// anyone else's key).
    pub async fn release(&mut self, token: &Token) -> Released {
        let replies = self.release_round(token).await;
        let labels = self.quorum.labels();
        let mut released = Released {
            freed: 0,
            answered: 0,
            masters: labels.len(),
            problems: Vec::new(),
        };
        for (label, reply) in labels.iter().zip(replies) {
            match reply {
                Some(Ok(freed)) => {
                    released.answered += 1;
                    released.freed += usize::from(freed);
                }
                Some(Err(e)) => released.problems.push(e.to_string()),
                None => released
                    .problems
                    .push(format!("Redis at {label} had not answered")),
            }
        }
        released
    }

    /// Gives back a failed attempt: the lock wherever it is ours, and our
    /// fencing vote wherever it stood and nothing has moved the counter
    /// since (`replaced`: per node, the counter the vote replaced).
    async fn give_back(&mut self, token: &Token, mode: FenceMode, replaced: &[Option<u64>]) {
        let votes = match mode {
            FenceMode::Propose(ours) => Some((ours, replaced)),
            FenceMode::Increment => None,
        };
        self.free_round(token, votes).await;
    }

    async fn release_round(&mut self, token: &Token) -> Replies<bool> {
        self.free_round(token, None).await
    }

    /// Frees the lock wherever `token` holds it; with `votes` (our proposal,
    /// and per node the counter it replaced), also withdraws the vote where
    /// it stood (withdraw.lua). Replies: per node, whether it freed the lock.
    async fn free_round(
        &mut self,
        token: &Token,
        votes: Option<(u64, &[Option<u64>])>,
    ) -> Replies<bool> {
        let labels = self.quorum.labels();
        let limit = self.quorum.round_timeout();
        let (key, fence_key, kind) = (self.key.as_str(), self.fencing.key(), self.kind);
        let futures: Vec<_> = self
            .quorum
            .nodes_mut()
            .iter_mut()
            .enumerate()
            .map(|(i, node)| async move {
                let withdraw = votes.and_then(|(ours, replaced)| {
                    replaced
                        .get(i)
                        .copied()
                        .flatten()
                        .map(|before| (ours, before))
                });
                let mut invocation = match (kind, withdraw) {
                    (Kind::Semaphore { .. }, _) => SEMAPHORE_RELEASE.prepare_invoke(),
                    (Kind::Lock, None) => RELEASE.prepare_invoke(),
                    (Kind::Lock, Some(_)) => WITHDRAW.prepare_invoke(),
                };
                invocation.key(key);
                if withdraw.is_some() {
                    invocation.key(fence_key);
                }
                invocation.arg(token.as_str());
                if let Some((ours, before)) = withdraw {
                    invocation.arg(ours.to_string()).arg(before.to_string());
                }
                let freed: i64 = node.script(&invocation).await?;
                Ok(freed == 1)
            })
            .collect();
        // Every node gets its full request timeout, where a round elsewhere
        // settles on a majority plus a grace period. A straggler dropped
        // then may never be sent its release at all (redis-rs skips a
        // request whose caller is gone), and the key would sit there until
        // its ttl; waiting costs only this process's exit, not the next
        // holder, who needs just the majority freed.
        gather(futures, &labels, limit, |_| false).await
    }

    /// What every master knows about the lock now.
    pub async fn inspect(&mut self) -> LockInfo {
        info::inspect(self).await
    }
}

/// A lock this process holds: the [`Claim`] that `yaraus lock` keeps alive
/// while its command runs.
pub struct HeldLock {
    locker: Locker,
    token: Token,
    fencing_token: u64,
    deadline: BootInstant,
    taken_on: usize,
}

impl HeldLock {
    pub fn token(&self) -> &Token {
        &self.token
    }

    /// The number for the resource the lock protects: greater than any
    /// handed out before for this name.
    pub fn fencing_token(&self) -> u64 {
        self.fencing_token
    }

    /// When the lock stops being ours unless extended (boot clock).
    pub fn deadline(&self) -> BootInstant {
        self.deadline
    }

    /// How much validity is left.
    pub fn remaining(&self) -> Duration {
        self.deadline.remaining()
    }

    /// On how many masters the acquisition succeeded.
    pub fn taken_on(&self) -> usize {
        self.taken_on
    }

    pub fn locker(&self) -> &Locker {
        &self.locker
    }

    /// True while at least half the ttl is left: the rule an acquisition is
    /// held to, checked again just before a command is started with it.
    pub fn fresh_enough(&self) -> bool {
        self.remaining() >= self.locker.ttl / 2
    }
}

impl Claim for HeldLock {
    async fn renew(&mut self) -> Result<Duration, RenewError> {
        self.locker.extend(&self.token).await
    }

    async fn release(&mut self) -> Result<()> {
        let released = self.locker.release(&self.token).await;
        if released.answered == 0 {
            return Err(Error::Unavailable(released.problems.join("; ")));
        }
        Ok(())
    }

    fn describe(&self) -> String {
        self.locker.what()
    }
}

/// The log lines of a wait: the first refusal, then every change of reason
/// and every [`WAIT_REPORT_EVERY`].
#[derive(Default)]
struct WaitReport {
    last: Option<(RefusalKind, Instant)>,
}

impl WaitReport {
    fn note(&mut self, what: &str, refusal: &Refusal, wait: Option<Duration>) {
        let now = Instant::now();
        let due = match self.last {
            None => true,
            Some((kind, at)) => kind != refusal.kind || now - at >= WAIT_REPORT_EVERY,
        };
        if !due {
            return;
        }
        let first = self.last.is_none();
        self.last = Some((refusal.kind, now));
        let until = match wait {
            None => "as long as it takes".to_string(),
            Some(w) => format!("up to {}", humantime::format_duration(rounded(w))),
        };
        match refusal.kind {
            RefusalKind::Busy if first => {
                crate::info!("{}; waiting for the {what} ({until})", refusal.message)
            }
            RefusalKind::Busy => crate::info!("still waiting: {}", refusal.message),
            _ => crate::warn!("{}; retrying ({until})", refusal.message),
        }
    }
}

fn parse_acquire(label: &str, reply: redis::Value) -> Result<NodeAcquire> {
    let items = reply_items(label, reply)?;
    let code: i64 = field(label, &items, 0)?;
    match code {
        1 => Ok(NodeAcquire::Taken {
            voted: field::<i64>(label, &items, 1)? == 1,
            counter: parse_counter(label, &field::<String>(label, &items, 2)?)?,
            before: if items.len() > 3 {
                Some(parse_counter(label, &field::<String>(label, &items, 3)?)?)
            } else {
                None
            },
        }),
        0 => Ok(NodeAcquire::Held {
            holder: field(label, &items, 1)?,
            ttl_ms: field(label, &items, 2)?,
            counter: parse_counter(label, &field::<String>(label, &items, 3)?)?,
            holders: if items.len() > 4 {
                Some(field(label, &items, 4)?)
            } else {
                None
            },
        }),
        2 => Ok(NodeAcquire::WrongType(field(label, &items, 1)?)),
        _ => Err(unexpected(label, code)),
    }
}

fn parse_extend(label: &str, reply: redis::Value) -> Result<NodeExtend> {
    let items = reply_items(label, reply)?;
    let code: i64 = field(label, &items, 0)?;
    match code {
        1 => Ok(NodeExtend::Extended),
        2 => Ok(NodeExtend::SetAgain),
        3 => Ok(NodeExtend::Missing),
        0 => Ok(NodeExtend::Taken(field(label, &items, 1)?)),
        4 => Ok(NodeExtend::WrongType(field(label, &items, 1)?)),
        _ => Err(unexpected(label, code)),
    }
}

pub(crate) fn reply_items(label: &str, reply: redis::Value) -> Result<Vec<redis::Value>> {
    match reply {
        redis::Value::Array(items) if !items.is_empty() => Ok(items),
        other => Err(Error::Redis(format!(
            "Redis at {label} gave an unexpected reply to a lock script: {other:?}"
        ))),
    }
}

pub(crate) fn field<T: redis::FromRedisValue>(
    label: &str,
    items: &[redis::Value],
    i: usize,
) -> Result<T> {
    let value = items.get(i).ok_or_else(|| {
        Error::Redis(format!(
            "Redis at {label} gave a short reply to a lock script ({} items)",
            items.len()
        ))
    })?;
    redis::from_redis_value_ref(value).map_err(|e| {
        Error::Redis(format!(
            "Redis at {label} gave an unexpected reply to a lock script: {e}"
        ))
    })
}

fn unexpected(label: &str, code: i64) -> Error {
    Error::Redis(format!(
        "Redis at {label} answered a lock script with code {code}, which this yaraus does not know"
    ))
}

/// A duration as whole milliseconds, for `PX` (at least 1).
fn millis_arg(d: Duration) -> u64 {
    (d.as_millis() as u64).max(1)
}

/// A duration rounded to milliseconds, for messages.
fn millis(d: Duration) -> Duration {
    Duration::from_millis(d.as_millis() as u64)
}

/// A duration as people want to read it: whole seconds from 10 s up,
/// milliseconds below.
pub(crate) fn rounded(d: Duration) -> Duration {
    if d >= Duration::from_secs(10) {
        Duration::from_secs(d.as_secs_f64().round() as u64)
    } else {
        millis(d)
    }
}

fn random_between(low: Duration, high: Duration) -> Duration {
    low + crate::seq::random_below(high.saturating_sub(low))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_verdicts_follow_the_quorum_arithmetic() {
        let r = |freed, answered| Released {
            freed,
            answered,
            masters: 3,
            problems: Vec::new(),
        };
        assert_eq!(r(2, 3).verdict(2), ReleaseVerdict::Freed);
        assert_eq!(r(1, 2).verdict(2), ReleaseVerdict::Unknown { silent: 1 });
        assert_eq!(r(0, 1).verdict(2), ReleaseVerdict::Unknown { silent: 2 });
        assert_eq!(r(1, 3).verdict(2), ReleaseVerdict::NotHeld);
        assert_eq!(r(0, 3).verdict(2), ReleaseVerdict::NotHeld);
    }

    fn target() -> Vec<Target> {
        vec![Target::parse("redis://127.0.0.1:1/0").unwrap()]
    }

    #[test]
    fn drift_is_one_percent_and_two_milliseconds() {
        assert_eq!(drift(Duration::from_secs(30)), Duration::from_millis(302));
        assert_eq!(drift(Duration::from_secs(1)), Duration::from_millis(12));
    }

    #[test]
    fn the_key_is_the_name_unless_prefixed() {
        let locker = Locker::new(
            &target(),
            "deploy",
            LockOptions::new(Duration::from_secs(30)),
        )
        .unwrap();
        assert_eq!(locker.key(), "deploy");
        assert_eq!(locker.fencing_key(), "yaraus:fencing:deploy");
        let mut options = LockOptions::new(Duration::from_secs(30));
        options.prefix = "locks:".into();
        let locker = Locker::new(&target(), "deploy", options).unwrap();
        assert_eq!(locker.key(), "locks:deploy");
    }

    #[test]
    fn nonsense_is_a_usage_error() {
        let usage = |name: &str, options: LockOptions, targets: &[Target]| {
            matches!(Locker::new(targets, name, options), Err(Error::Usage(_)))
        };
        let ok = LockOptions::new(Duration::from_secs(30));
        assert!(usage("", ok.clone(), &target()));
        assert!(usage(
            "x",
            LockOptions::new(Duration::from_millis(5)),
            &target()
        ));
        assert!(usage(
            "x",
            LockOptions::new(Duration::from_secs(400 * 24 * 3600)),
            &target()
        ));
        let three: Vec<Target> = (1..=3)
            .map(|p| Target::parse(&format!("redis://127.0.0.1:{p}/0")).unwrap())
            .collect();
        let mut semaphore = ok.clone();
        semaphore.limit = 2;
        assert!(usage("x", semaphore.clone(), &three));
        assert!(Locker::new(&target(), "x", semaphore).is_ok());
        let twice = vec![target()[0].clone(), target()[0].clone()];
        assert!(usage("x", ok, &twice));
    }
}
