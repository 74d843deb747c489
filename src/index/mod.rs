//! Distributed peer indexing (`yaraus index`): every replica of a fleet
//! learns `(index, replicas)` once per interval, and its command runs only
//! under a pair that agrees with every other replica's.
//!
//! The seed's algorithm: at the start of interval `n` (plus the replica's
//! constant skew) each replica INCRs `NS:index:{NAME}:<n>`; its pair for
//! `n` is its rank in `n-1` and the count of `n-1`, so the pairs of one
//! interval are a partition. `tick.lua` adds what the seed leaves out: a
//! tick of `n` is refused once a later interval was ticked (*sealing*: the
//! count read is final, and clocks decide liveness, never safety), and a
//! retried tick gets its rank back (ranks kept per client).
//!
//! A transition is safe because a command lives only while contiguous
//! ticks vouch for it: its deadline (on the boot clock, enforced by the
//! watchdog) is [`Timing::validity`] after the send of the last tick that
//! found its pair unchanged, and a tick that fails or finds it changed
//! vouches for nothing more. A new command starts under its pair for `m`
//! only once every replica of `m-1` is *settled* for `m` (runs nothing but
//! its pair for `m`: kept, stopped with its whole tree gone, or none), a
//! validity plus drift has passed since this replica's tick of `m-1`
//! (whatever a silent replica ran has reached its deadline), and its own
//! deadline is still ahead. The argument, case by case, is in
//! docs/index.md, "The argument"; `tests/index_model/` checks it
//! exhaustively on a small model.
//!
//! * [`Timing`] (in [`crate::timing::index`], with the other timing rules):
//!   interval numbers, tick instants, validity;
//! * [`Index`]: the scripts (`tick.lua`, `confirm.lua`) and the keys;
//! * [`Replica`]: the ticks and the barrier, waiting for a pair to start
//!   under; [`Slot`]: a running command's pair, kept by
//!   [`crate::claim::Keeper`] like any other claim;
//! * [`status`]: what `--status` reports.

mod replica;
mod script;
mod slot;
pub mod status;

pub use replica::{History, Replica};
pub use slot::Slot;

use crate::base::BootInstant;
use crate::base::setting::Setting;
use crate::error::{Error, Result};
use crate::store::{Store, script_error};
use crate::timing::index::{KEEP, Timing};

/// The keys of one index, `NS:index:{NAME}…`: the braces keep them in one
/// Cluster slot, and a NAME cannot contain them, so no two names' keys meet.
#[derive(Clone, Debug)]
pub struct IndexKeys {
    prefix: String,
    name: String,
}

impl IndexKeys {
    /// The keys of `name` in namespace `ns`; the name is checked first.
    pub fn new(ns: &str, name: &str) -> Result<IndexKeys> {
        crate::base::keys::check_tagged_name("index", name)?;
        Ok(IndexKeys {
            prefix: format!("{ns}:index:{{{name}}}"),
            name: name.to_string(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Hash: `interval` (ms) and `last` (the latest interval ticked).
    pub fn config(&self) -> String {
        self.prefix.clone()
    }

    /// The seed's counter of interval `n`.
    pub fn count(&self, n: u64) -> String {
        format!("{}:{n}", self.prefix)
    }

    /// Hash: client id → its rank in `n`.
    pub fn who(&self, n: u64) -> String {
        format!("{}:{n}:who", self.prefix)
    }

    /// Set: the replicas of `n-1` settled for `n`.
    pub fn transition(&self, n: u64) -> String {
        format!("{}:transition:{n}", self.prefix)
    }
}

/// A replica's place in an interval's partition: `task % replicas == index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    /// 0-based; the 1-based rank is `index + 1`.
    pub index: u64,
    pub replicas: u64,
}

impl std::fmt::Display for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "index {} of {}", self.index, self.replicas)
    }
}

/// One tick that counted.
#[derive(Clone, Copy, Debug)]
pub struct Tick {
    pub number: u64,
    /// Before the request went out, and when its reply came (boot clock).
    pub sent: BootInstant,
    pub received: BootInstant,
    /// 1-based rank in `number`.
    pub rank: u64,
    /// The pair for `number` (from `number - 1`), if this replica took part
    /// in `number - 1`.
    pub pair: Option<Pair>,
    /// The transition set of `number` holds this replica.
    pub settled: bool,
    /// The size of that set when the tick ran.
    pub confirmations: u64,
}

/// What a tick came to, short of an error.
#[derive(Clone, Copy, Debug)]
pub enum TickOutcome {
    Counted(Tick),
    /// Interval `last` had begun: this tick's interval is sealed.
    Late {
        number: u64,
        last: u64,
    },
}

/// The scripts of one index, as one client (one replica) runs them.
#[derive(Clone)]
pub struct Index {
    store: Store,
    keys: IndexKeys,
    client: String,
    timing: Timing,
}

impl Index {
    pub fn new(store: Store, keys: IndexKeys, client: String, timing: Timing) -> Index {
        Index {
            store,
            keys,
            client,
            timing,
        }
    }

    pub fn keys(&self) -> &IndexKeys {
        &self.keys
    }

    pub fn client(&self) -> &str {
        &self.client
    }

    pub fn timing(&self) -> &Timing {
        &self.timing
    }

    /// Refuses, before anything is written, a name whose hash is of another
    /// type or that is in use with another interval (the tick script would,
    /// but only at the first tick).
    pub async fn check(&mut self) -> Result<()> {
        check_type(&mut self.store, &self.keys).await?;
        let theirs: Option<u64> = self
            .store
            .query(redis::cmd("HGET").arg(self.keys.config()).arg("interval"))
            .await?;
        match theirs {
            Some(ms) if ms != self.timing.interval_ms() => Err(in_use(&self.keys, ms)),
            _ => Ok(()),
        }
    }

    /// Ticks interval `number`; `holding`: the pair the command runs with.
    /// Bounded by [`Timing::overdue`]: a tick later than that is no use.
    pub async fn tick(&mut self, number: u64, holding: Option<Pair>) -> Result<TickOutcome> {
        let sent = BootInstant::now();
        let invocation = script::Tick {
            keys: &self.keys,
            number,
            interval_ms: self.timing.interval_ms(),
            client: &self.client,
            holding,
            keep_ms: self.timing.keep_ms(),
        }
        .invocation();
        let limit = self.timing.overdue();
        let reply: Vec<u64> =
            match tokio::time::timeout(limit, self.store.script(&invocation)).await {
                Err(_) => {
                    return Err(Error::Unavailable(format!(
                        "Redis at {} did not answer the tick of interval {number} within {}",
                        self.store.target().display(),
                        crate::base::duration::shown(limit)
                    )));
                }
                Ok(Err(e)) => return Err(e),
                Ok(Ok(Err(e))) => return Err(self.script_failure(&e)),
                Ok(Ok(Ok(v))) => v,
            };
        let received = BootInstant::now();
        match reply.as_slice() {
            [1, rank, previous, count, confirmations, settled] => {
                let pair = (*previous > 0 && *count >= *previous).then(|| Pair {
                    index: previous - 1,
                    replicas: *count,
                });
                Ok(TickOutcome::Counted(Tick {
                    number,
                    sent,
                    received,
                    rank: *rank,
                    pair,
                    settled: *settled == 1,
                    confirmations: *confirmations,
                }))
            }
            [2, last] => Ok(TickOutcome::Late {
                number,
                last: *last,
            }),
            [3, interval, _] => Err(in_use(&self.keys, *interval)),
            _ => Err(Error::Redis(format!(
                "Redis at {} answered the tick with {reply:?}, which this yaraus does not know",
                self.store.target().display()
            ))),
        }
    }

    /// Confirms the transition of `number` once this replica's command is
    /// gone. Returns the confirmations, or `None` if this replica did not
    /// take part in `number - 1` (it has nothing to confirm).
    pub async fn confirm(&mut self, number: u64) -> Result<Option<u64>> {
        let invocation = script::Confirm {
            keys: &self.keys,
            number,
            client: &self.client,
            keep_ms: self.timing.keep_ms(),
        }
        .invocation();
        match self.store.script::<i64>(&invocation).await? {
            Ok(n) => Ok(u64::try_from(n).ok()),
            Err(e) => Err(self.script_failure(&e)),
        }
    }

    /// How many replicas of `number - 1` are settled for `number`.
    pub async fn confirmations(&mut self, number: u64) -> Result<u64> {
        let key = self.keys.transition(number);
        self.store.query(redis::cmd("SCARD").arg(key)).await
    }

    fn script_failure(&self, e: &redis::RedisError) -> Error {
        match script_error(e) {
            Some((_, message)) => Error::State(format!(
                "Redis at {}: {message}",
                self.store.target().display()
            )),
            None => crate::store::classify(self.store.target(), e.clone()),
        }
    }
}

/// Refuses a name whose hash is of another type.
pub async fn check_type(store: &mut Store, keys: &IndexKeys) -> Result<()> {
    let kind: String = store.query(redis::cmd("TYPE").arg(keys.config())).await?;
    if kind != "hash" && kind != "none" {
        return Err(Error::State(format!(
            "Redis at {}: {} holds a {kind}, not the hash of a yaraus index",
            store.target().display(),
            keys.config()
        )));
    }
    Ok(())
}

/// The name is in use with an interval of `ms` milliseconds, not ours.
fn in_use(keys: &IndexKeys, ms: u64) -> Error {
    Error::Usage(format!(
        "the index {} is in use with {interval} {}; give the same {interval} (or wait until \
         it has been idle for {} intervals)",
        keys.name(),
        crate::base::duration::shown(std::time::Duration::from_millis(ms)),
        KEEP,
        interval = Setting::Interval
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_word_without_braces() {
        assert!(IndexKeys::new("ns", "mail-sender").is_ok());
        assert!(IndexKeys::new("ns", "a:b/c.d").is_ok());
        for bad in ["", "two words", "tab\there", "{x}", "a}b", "nl\n"] {
            let e = IndexKeys::new("ns", bad).unwrap_err();
            assert!(matches!(e, Error::Usage(_)), "{bad:?}: {e}");
        }
    }

    #[test]
    fn keys_share_one_hash_tag() {
        let k = IndexKeys::new("ns", "mail").unwrap();
        assert_eq!(k.config(), "ns:index:{mail}");
        assert_eq!(k.count(7), "ns:index:{mail}:7");
        assert_eq!(k.who(7), "ns:index:{mail}:7:who");
        assert_eq!(k.transition(7), "ns:index:{mail}:transition:7");
    }
}
