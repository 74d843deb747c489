//! One replica's side of the scripts of an index: the tick of an
//! interval (its rank, the pair it brings, whether the interval was
//! sealed), the confirmation of a transition, and the checks that refuse a
//! name in use otherwise before anything is written.

use super::keys::IndexKeys;
use super::pair::Pair;
use super::script;
use crate::base::BootInstant;
use crate::base::setting::Setting;
use crate::error::{Error, Result};
use crate::store::{Store, script_error};
use crate::timing::index::{KEEP, Timing};

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
                let pair = Pair::from_reply(*previous, *count);
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
