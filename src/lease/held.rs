//! A leased worker id, as the [`Claim`] that `yaraus run` keeps alive:
//! its renewal and release (each one pool script, then the replicas'
//! confirmation), and what its holder does about its wall clock while it
//! holds the id (the clock guard, `clock_guard.rs`: when the command may
//! start, and when a clock that stepped back or drifted stops it).

use super::clock_guard::{
    ClockPolicy, ClockRecord, Handover, Offset, WallWatch, fallback_floor, handover_floor, wall_ms,
};
use super::keys::PoolKeys;
use super::script::{self, pool_error};
use super::worker_id::WorkerId;
use crate::base::BootInstant;
use crate::base::setting::Setting;
use crate::claim::{Claim, RenewError};
use crate::error::{Error, Result};
use crate::store::Store;
use crate::timing::drift::validity;
use std::time::Duration;

/// A leased worker id: the [`Claim`] that `yaraus run` keeps alive.
pub struct Lease {
    pub(super) store: Store,
    pub(super) keys: PoolKeys,
    pub(super) client_id: String,
    pub(super) id: WorkerId,
    pub(super) expire: Duration,
    pub(super) deadline: BootInstant,
    pub(super) clock: ClockPolicy,
    pub(super) watch: WallWatch,
    /// The id's clock record when we leased it (parsed, and as it was).
    pub(super) found: Option<(ClockRecord, String)>,
    /// Our last measured offset from the server.
    pub(super) offset: Offset,
    /// Whether the offset warning was given (until the offset is back).
    pub(super) offset_warned: bool,
    /// Our wall clock (Unix ms) when the lease was sent.
    pub(super) leased_wall: i64,
    /// Whether the command ran, once known: `Some(true)` its whole tree is
    /// gone (the release sets the horizon to the wall clock then),
    /// `Some(false)` it never ran (the release puts the record back as the
    /// lease found it); `None` leaves the projected deadline.
    pub(super) ran: Option<bool>,
    /// Writes the replicas confirmed short of their majority (each also
    /// counted in the pool's `wait_shortfall`), for the metrics.
    pub(super) shortfalls: u64,
}

impl Lease {
    /// Waits for the replicas to confirm the write just made ([`Store::confirm`]).
    /// `Ok(Err(why))` below `--min-replicas`: the write does not count. A
    /// shortfall against the majority of the connected replicas is logged
    /// and counted in the pool's `wait_shortfall`.
    pub(super) async fn confirm(&mut self, done: &str) -> Result<Result<(), String>> {
        let r = self.store.confirm(&self.keys.ids).await?;
        if !r.ok() {
            return Ok(Err(format!(
                "{} ({} {})",
                r.describe(),
                Setting::MinReplicas,
                r.min
            )));
        }
        if r.shortfall() {
            self.shortfalls += 1;
            log::warn!(
                "{done} id {}, but {} in time; counted as wait_shortfall ({} makes this a \
                 failure)",
                self.id,
                r.describe(),
                Setting::MinReplicas
            );
            let _ = self
                .store
                .query::<i64>(
                    redis::cmd("HINCRBY")
                        .arg(&self.keys.stats)
                        .arg("wait_shortfall")
                        .arg(1),
                )
                .await;
        }
        Ok(Ok(()))
    }

    pub fn id(&self) -> WorkerId {
        self.id
    }

    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// When the lease stops being ours unless renewed (boot clock).
    pub fn deadline(&self) -> BootInstant {
        self.deadline
    }

    /// Writes confirmed by fewer replicas than wanted (`WAIT` short of its
    /// majority, the write still counting) since the lease was taken.
    pub fn wait_shortfalls(&self) -> u64 {
        self.shortfalls
    }

    /// This host's wall-clock offset from the server's in seconds, as the
    /// last renewal (or the lease) measured it.
    pub fn clock_offset(&self) -> Option<f64> {
        (self.offset != Offset::UNKNOWN).then(|| self.offset.ms as f64 / 1000.0)
    }
}

impl Claim for Lease {
    async fn renew(&mut self) -> Result<Duration, RenewError> {
        let stepped = self.watch_wall_clock();
        let sent = BootInstant::now();
        let sent_wall = wall_ms();
        let horizon = self.watch.wall_at(sent + validity(self.expire));
        let invocation = script::Renew {
            keys: &self.keys,
            client: &self.client_id,
            id: self.id,
            ttl_ms: self.expire.as_millis() as u64,
            horizon,
            offset: self.offset,
            stepped_back: stepped.is_some(),
        }
        .invocation();
        let reply: redis::Value = match self.store.script(&invocation).await {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => return Err(RenewError::Failed(pool_error(&self.store, &e))),
            Err(e) => return Err(RenewError::Failed(e)),
        };
        let answer = self.store.answer(reply).map_err(RenewError::Failed)?;
        let ok = answer.code().map_err(RenewError::Failed)?;
        let now_ms: i64 = answer.get(2).map_err(RenewError::Failed)?;
        if ok == 0 {
            let owner: String = answer.get(1).unwrap_or_default();
            return Err(RenewError::Lost(if owner.is_empty() {
                format!("id {} is gone from the pool {}", self.id, self.keys.ids)
            } else {
                format!("id {} now belongs to {owner}", self.id)
            }));
        }
        self.offset = Offset::measure(sent_wall, sent.elapsed(), now_ms);
        match self.confirm("renewed").await {
            Ok(Ok(())) => {}
            Ok(Err(why)) => {
                return Err(RenewError::Failed(Error::Unavailable(format!(
                    "renewed, but {why}"
                ))));
            }
            Err(e) => return Err(RenewError::Failed(e)),
        }
        self.check_clock(stepped).map_err(RenewError::Lost)?;
        Ok(validity(self.expire))
    }

    async fn release(&mut self) -> Result<()> {
        let horizon;
        let clock = match self.ran {
            Some(true) => {
                horizon = self.release_horizon().to_string();
                ("ended", horizon.as_str())
            }
            Some(false) => (
                "unused",
                self.found.as_ref().map_or("", |(_, text)| text.as_str()),
            ),
            None => ("", ""),
        };
        let release = script::Release {
            keys: &self.keys,
            client: &self.client_id,
            id: self.id,
            live_only: false,
            clock,
            waker: "",
        };
        // Refused by a user's ACL without the queue: the same release
        // without it (claim/wake.rs).
        let (invocation, unqueued) = self.keys.wake.with_queue(true, |q| release.invocation(q));
        match self
            .store
            .script_or::<i64>(&invocation, || unqueued.take())
            .await?
        {
            Ok(_) => Ok(()),
            Err(e) => Err(pool_error(&self.store, &e)),
        }
    }

    fn describe(&self) -> String {
        format!("id {}", self.id)
    }

    fn command_gone(&mut self, ran: bool) {
        self.ran = Some(ran);
    }
}

// What the holder does about its wall clock: the clock guard, whose
// design and parts are clock_guard.rs.
impl Lease {
    /// When the command may start so that its ids come after every id this
    /// worker id's previous holders made, given the grace `delay`: after
    /// the id's horizon, or, for an id without a record, after what an
    /// unknown holder within `max_offset` of the server could have made.
    /// `None`: no wait beyond the delay is needed, or none can be derived
    /// (no record and no `max_offset`: docs/safety.md).
    pub fn handover(&self, delay: Duration) -> Option<Handover> {
        let (floor, horizon) = match (&self.found, self.clock.max_offset) {
            (Some((record, _)), _) => (handover_floor(record.horizon), Some(record.horizon)),
            (None, Some(bound)) => (
                fallback_floor(self.leased_wall, self.offset, delay, bound),
                None,
            ),
            (None, None) => return None,
        };
        let start = self.leased_wall + delay.as_millis() as i64;
        Some(Handover {
            floor,
            horizon,
            beyond_delay: Duration::from_millis((floor - start).max(0) as u64),
        })
    }

    /// Says that the command never ran under this lease: its release puts
    /// the id's clock record back as the lease found it.
    pub fn never_ran(&mut self) {
        self.ran = Some(false);
    }

    /// Gives the lease back and refuses it when this host's offset, as the
    /// lease measured it, is beyond `--max-clock-offset`.
    pub(super) async fn refuse_beyond_max_offset(&mut self) -> crate::error::Result<()> {
        use crate::claim::Claim;
        let Some(bound) = self.clock.max_offset else {
            return Ok(());
        };
        if !self.offset.surely_exceeds(bound) {
            return Ok(());
        }
        self.never_ran();
        let _ = self.release().await;
        Err(crate::error::Error::Exhausted(format!(
            "this host's clock is {}, more than {} {}: a snowflake id it makes could repeat \
             one made elsewhere; fix its time sync (leased id {} and gave it back)",
            self.offset.describe(),
            Setting::MaxClockOffset,
            crate::base::duration::shown(bound),
            self.id
        )))
    }

    /// The id's clock record as the lease found it ('' for none).
    pub(super) fn found_record(&self) -> String {
        self.found
            .as_ref()
            .map_or_else(String::new, |(_, text)| text.clone())
    }

    /// This host's offset from the server's clock, as last measured.
    pub fn offset(&self) -> Offset {
        self.offset
    }

    /// Samples the wall clock against the boot clock; says so when it
    /// stepped back.
    pub(super) fn watch_wall_clock(&mut self) -> Option<Duration> {
        let step = self.watch.sample()?;
        log::warn!(
            "this host's wall clock stepped back by {} while id {} was held (an NTP step, a \
             restored snapshot); the id's record keeps the highest time it showed; counted as \
             clock_step_back",
            crate::base::duration::shown(step),
            self.id
        );
        Some(step)
    }

    /// After a renewal: `Err(why)` when the clock policy stops the command.
    pub(super) fn check_clock(&mut self, stepped: Option<Duration>) -> Result<(), String> {
        if let (Some(step), true) = (stepped, self.clock.stop_on_step) {
            return Err(format!(
                "the wall clock stepped back by {} ({} stops the command)",
                crate::base::duration::shown(step),
                Setting::StopOnClockStep
            ));
        }
        if let Some(bound) = self.clock.max_offset {
            if self.offset.surely_exceeds(bound) {
                return Err(format!(
                    "this host's clock is {}, more than {} {}",
                    self.offset.describe(),
                    Setting::MaxClockOffset,
                    crate::base::duration::shown(bound)
                ));
            }
        }
        let drifting = self.offset.surely_exceeds(self.clock.warn_over);
        if drifting && !self.offset_warned {
            log::warn!(
                "this host's clock is {}: the grace delay assumes clocks that agree; {}",
                self.offset.describe(),
                self.what_guards_the_ids()
            );
        }
        self.offset_warned = drifting;
        Ok(())
    }

    /// For the offset warning: what kept this holder's command from making
    /// ids an earlier holder of the id made, which depends on what the
    /// lease found.
    fn what_guards_the_ids(&self) -> String {
        match (&self.found, self.clock.max_offset) {
            (Some(_), _) => "ids are still guarded by the id's clock record (the command \
                             started after the previous holder's last instant), but fix the \
                             time sync"
                .to_string(),
            (None, Some(bound)) => format!(
                "id {} had no clock record, so its ids are guarded only by {} {} (the command \
                 started after the server's time plus that offset): fix the time sync",
                self.id,
                Setting::MaxClockOffset,
                crate::base::duration::shown(bound)
            ),
            (None, None) => format!(
                "id {} had no clock record when leased (a new pool, or its record lost or \
                 deleted), so nothing but the grace delay kept its ids from repeating an \
                 earlier holder's: fix the time sync, and set {} on every host to guard ids \
                 without a record",
                self.id,
                Setting::MaxClockOffset
            ),
        }
    }

    /// The horizon a release records: the wall clock now (the command's
    /// tree is gone), never below what the lease found. Read again here: a
    /// clock stepped forward since the last renewal showed the command
    /// times above every horizon recorded so far.
    pub(super) fn release_horizon(&mut self) -> i64 {
        self.watch_wall_clock();
        let now = self.watch.wall_now();
        self.found.as_ref().map_or(now, |(r, _)| r.horizon.max(now))
    }
}
