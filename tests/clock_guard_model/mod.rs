//! An exhaustive explorer of the worker id's clock guard (`run`,
//! `src/lease/clock_guard.rs`): successive holders of one id, each on a
//! host whose wall clock is off real time, and the snowflake instants
//! (wall-clock millisecond, worker id) their commands use.
//!
//! # What is modelled
//!
//! A tick stands for a millisecond of the generator. Each host's boot
//! clock is real time: its rate error is what the 1% drift margin of the
//! deadline covers, and it does not enter the hand-over, which compares
//! wall clocks only. A host's wall clock is real time plus its offset,
//! bounded (`HOST_OFFSET`); the offset may *slew* by one tick once (the
//! slew over any span the model reaches is within the projection's one
//! tick of slack: 500 ppm over a renewal interval of a second), and *step*
//! back (or forward, where a case allows it) within the bound. The
//! server's clock (`TIME`, which times the lease) has its own offset and
//! steps.
//!
//! The steps are the scripts' as `run` drives them: the lease
//! (`acquire.lua`) at the server's time, expiring `EXPIRE` server ticks
//! later, raising the record to the horizon the holder sends (its highest
//! wall-minus-boot offset seen, plus the deadline `VALIDITY` ticks of boot
//! clock away, plus one tick of slack: `WallWatch::wall_at`); the new
//! holder starting its command once `DELAY` ticks have passed and its own
//! wall clock has reached the record it found plus `MARGIN`
//! (`handover_floor`; with no record and `--max-clock-offset D`,
//! `fallback_floor`); renewals (`renew.lua`) sampling the wall clock and
//! raising the record the same way; the command using its wall-clock
//! instant at every tick it runs; a clean release (`release.lua`,
//! `ended`) once the command has ended, sampling the wall clock once more
//! and writing it (the highest offset seen, plus one tick) but never below
//! what the lease found; a freeze (no renewal, no release, while the
//! watchdog kills the command at the deadline); expiry, after which
//! another holder leases the id and the old record stands; a renewal that
//! finds the id taken kills the command within `KILL_AFTER`. The lost
//! record: the pool restarts empty (no lease, no record); its holder, not
//! frozen (the grace delay's assumption), learns at its next renewal
//! (within `INTERVAL`) and its command is dead `KILL_AFTER` later, and
//! every host stays within `D` of the server (what `--max-clock-offset D`
//! enforces at each lease and renewal). A forward step is assumed seen (by
//! a renewal or the release) before the command dies or the clock steps
//! back: what docs/safety.md leaves assumed.
//!
//! # The abstraction that keeps it small
//!
//! Nothing in the rules reads absolute time, so the state holds none:
//! every instant is kept *relative to now* (a wall instant as its distance
//! from real time now, the lease's expiry from the server's time now's
//! real tick, a deadline as ticks left), and a tick shifts them all. Every
//! instant a command can still use is within `HOST_OFFSET` of now, so a
//! holder keeps only the instants it used in that window (`used`, five
//! bits): one that fell below it can never be used again, and a sharing
//! of it was already seen, since each state is checked as it is found.
//! Values below what any comparison can still tell apart are clamped (a
//! record no clock can be behind any more, an expired lease). The state
//! space is then finite without a bound on time, so each case explores
//! every run of any length. Holders are interchangeable (each leases once,
//! with any offset): states that differ only in their order are merged
//! ([`System::canon`]).
//!
//! # What is checked
//!
//! No wall-clock instant used by two holders' commands
//! (`Violation::SharedInstant`). The rules are [`Rules`]: the shipped one
//! passes; a horizon written from the server's clock, a hand-over without
//! the margin, a release that lowers the record below what its lease found,
//! and a release that does not read the wall clock again each fail with a
//! shortest run.

mod system;
mod tests;

use crate::explorer;

use explorer::System;

/// Ticks of server time a lease lasts (`--expire`).
const EXPIRE: i8 = 4;
/// Ticks of the holder's boot clock from sending a lease or renewal to
/// the deadline at which the watchdog kills the command: the lease less
/// the drift margin.
const VALIDITY: i8 = 3;
/// The renewal interval and the kill-after: a holder whose pool was lost
/// has its command dead `INTERVAL + KILL_AFTER` ticks later.
const INTERVAL: i8 = 1;
const KILL_AFTER: i8 = 0;
/// The grace delay, `2 × interval + kill-after`.
const DELAY: i8 = 2 * INTERVAL + KILL_AFTER;
/// `HANDOVER_MARGIN`, in ticks.
const MARGIN: i8 = 1;
/// `projection_slack`: the slew over the span, and the rounding tick.
const SLACK: i8 = 1;
/// A host's wall clock is at most this far from real time.
const HOST_OFFSET: i8 = 2;
/// The server's clock likewise.
const SERVER_OFFSET: i8 = 1;
/// The largest case's holders.
const HOLDERS: usize = 3;
/// A wall instant (relative to now) at or below which every comparison
/// gives what it gives for any lower one: no clock shows less than
/// `-HOST_OFFSET`, and a record is compared after adding the margin.
const LOW: i8 = -HOST_OFFSET - MARGIN;

/// How the horizon is written and read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// The shipped rule: the horizon is the deadline on the holder's own
    /// wall clock, the next holder waits for it plus the margin, and a
    /// release reads the wall clock again and never writes below what its
    /// lease found.
    OwnClockWithMargin,
    /// Broken: the lease and renewals write the server's expiry (on the
    /// server's clock) as the horizon.
    ServerClockHorizon,
    /// Broken: the next holder starts as soon as its clock reaches the
    /// horizon.
    NoMargin,
    /// Broken: a release writes its wall clock then, even below the
    /// horizon its lease found.
    ReleaseBelowFound,
    /// Broken: a release writes the highest offset the renewals saw,
    /// without reading the wall clock again.
    ReleaseWithoutReading,
}

/// What one case lets happen.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub holders: usize,
    /// A host's wall clock may step forward (it may always step back).
    pub forward_steps: bool,
    /// The pool may restart empty once, every host within `D` of the
    /// server, and `--max-clock-offset D` set.
    pub lost_record: Option<i8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Phase {
    Idle,
    /// Leased; starts once `delay` more ticks have passed and its wall
    /// clock has reached `floor` (relative to now).
    Waiting {
        delay: i8,
        floor: i8,
    },
    Running,
    /// Ended, killed, or gave up: acts no more.
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Holder {
    phase: Phase,
    /// Ticks left to the watchdog's deadline.
    deadline: i8,
    /// Wall clock minus real time.
    off: i8,
    /// The highest offset sampled since the lease (`WallWatch`).
    highest: i8,
    slewed: bool,
    frozen: bool,
    /// A forward step no sample has seen yet.
    unseen_step: bool,
    /// The horizon the lease found (relative to now; `LOW` for none).
    found: i8,
    /// The instants its command used, bit `i` for now `+ i - HOST_OFFSET`.
    used: u8,
    /// Whether its command ever used an instant.
    made: bool,
}

/// A holder that acts no more: only what it used matters.
const IDLE_DONE: Holder = Holder {
    phase: Phase::Done,
    deadline: 0,
    off: 0,
    highest: 0,
    slewed: false,
    frozen: false,
    unseen_step: false,
    found: LOW,
    used: 0,
    made: false,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct State {
    server_off: i8,
    /// The lease: its holder and its expiry (server time, relative to the
    /// real tick now).
    owner: Option<u8>,
    expiry: i8,
    /// The id's clock record: its horizon (relative to now).
    record: Option<i8>,
    lost: bool,
    holders: [Holder; HOLDERS],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    Tick,
    /// A holder on a host whose wall clock is this far off leases.
    Acquire(u8, i8),
    Start(u8),
    Renew(u8),
    Freeze(u8),
    Release(u8),
    Slew(u8, i8),
    Step(u8, i8),
    ServerStep(i8),
    LosePool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Violation {
    /// Two holders' commands used one wall-clock instant (relative to the
    /// real tick of the state where it is found).
    SharedInstant { instant: i8 },
}

pub struct Model {
    pub rules: Rules,
    pub bounds: Bounds,
}

impl Model {
    /// The horizon a lease or renewal sends: the deadline projected onto
    /// the holder's wall clock, or, broken, the server's expiry.
    fn horizon(&self, s: &State, h: &Holder) -> i8 {
        match self.rules {
            Rules::ServerClockHorizon => s.server_off + EXPIRE,
            _ => h.highest + VALIDITY + SLACK,
        }
    }

    fn margin(&self) -> i8 {
        if self.rules == Rules::NoMargin {
            0
        } else {
            MARGIN
        }
    }

    /// Where the new holder's command may start (its wall clock).
    fn floor(&self, s: &State, found: Option<i8>) -> i8 {
        let floor = match (found, self.bounds.lost_record) {
            (Some(horizon), _) => horizon + self.margin(),
            // `fallback_floor`, the offset measured exactly: the server's
            // time at the end of the delay, plus D and the margin.
            (None, Some(d)) => s.server_off + DELAY + d + self.margin(),
            (None, None) => LOW,
        };
        floor.max(-HOST_OFFSET)
    }

    /// Every host within its bound, and within D of the server when the
    /// case says so.
    fn clocks_allowed(&self, s: &State) -> bool {
        s.server_off.abs() <= SERVER_OFFSET
            && s.holders.iter().all(|h| {
                h.off.abs() <= HOST_OFFSET
                    && self
                        .bounds
                        .lost_record
                        .is_none_or(|d| (h.off - s.server_off).abs() <= d)
            })
    }

    /// The generator waits out a clock that stepped back (katsubushi,
    /// sonyflake do): it uses an instant only past every one it used.
    fn uses_instant(h: &mut Holder) {
        let bit = (h.off + HOST_OFFSET) as u32;
        if h.used >> bit == 0 {
            h.used |= 1 << bit;
            h.made = true;
        }
    }

    fn holding(h: &Holder) -> bool {
        matches!(h.phase, Phase::Waiting { .. } | Phase::Running)
    }

    /// The wall clock sampled (a renewal, the release).
    fn sample(h: &mut Holder) {
        h.highest = h.highest.max(h.off);
        h.unseen_step = false;
    }

    /// Time passes: every instant kept moves one tick into the past, the
    /// watchdog kills what reached its deadline, and each running command
    /// uses its instant.
    fn tick(n: &mut State) -> bool {
        n.expiry = (n.expiry - 1).max(-SERVER_OFFSET);
        n.record = n.record.map(|r| (r - 1).max(LOW));
        for h in &mut n.holders {
            h.used >>= 1;
            h.found = (h.found - 1).max(LOW);
            if !Self::holding(h) {
                continue;
            }
            h.deadline -= 1;
            if h.deadline <= 0 {
                if h.unseen_step {
                    // Assumed away: a forward step is seen before the end.
                    return false;
                }
                h.phase = Phase::Done;
                continue;
            }
            match &mut h.phase {
                Phase::Waiting { delay, floor } => {
                    *delay = (*delay - 1).max(0);
                    *floor = (*floor - 1).max(-HOST_OFFSET);
                }
                _ => Self::uses_instant(h),
            }
        }
        true
    }

    fn acquire(&self, n: &mut State, p: usize, off: i8) -> bool {
        if n.holders[p].phase != Phase::Idle || (n.owner.is_some() && n.server_off < n.expiry) {
            return false;
        }
        let found = n.record;
        let floor = self.floor(n, found);
        let h = &mut n.holders[p];
        h.off = off;
        h.highest = off;
        h.deadline = VALIDITY;
        h.found = found.unwrap_or(LOW).max(LOW);
        h.phase = Phase::Waiting {
            delay: DELAY,
            floor,
        };
        let horizon = self.horizon(n, &n.holders[p]);
        n.record = Some(found.map_or(horizon, |r| r.max(horizon)));
        n.owner = Some(p as u8);
        n.expiry = n.server_off + EXPIRE;
        self.clocks_allowed(n)
    }

    fn start(n: &mut State, p: usize) -> bool {
        let h = &mut n.holders[p];
        let ready = match h.phase {
            Phase::Waiting { delay, floor } => !h.frozen && delay == 0 && h.off >= floor,
            _ => false,
        };
        if ready {
            h.phase = Phase::Running;
            Self::uses_instant(h);
        }
        ready
    }

    fn renew(&self, n: &mut State, p: usize) -> bool {
        let h = n.holders[p];
        if !Self::holding(&h) || h.frozen {
            return false;
        }
        if n.owner != Some(p as u8) {
            // Taken or gone: the command is killed within kill-after.
            n.holders[p].deadline = h.deadline.min(KILL_AFTER);
            return true;
        }
        let h = &mut n.holders[p];
        Self::sample(h);
        h.deadline = VALIDITY;
        let horizon = self.horizon(n, &n.holders[p]);
        n.record = Some(n.record.map_or(horizon, |r| r.max(horizon)));
        n.expiry = n.server_off + EXPIRE;
        true
    }

    fn release(&self, n: &mut State, p: usize) -> bool {
        let h = &mut n.holders[p];
        if h.phase != Phase::Running || h.frozen {
            return false;
        }
        if self.rules != Rules::ReleaseWithoutReading {
            Self::sample(h);
        }
        let h = *h;
        n.holders[p].phase = Phase::Done;
        if n.owner == Some(p as u8) {
            n.expiry = n.server_off;
            let now = h.highest + SLACK;
            let horizon = match self.rules {
                Rules::ReleaseBelowFound => now,
                _ => h.found.max(now),
            };
            // `release.lua` rewrites a record it finds, and writes none.
            if n.record.is_some() {
                n.record = Some(horizon);
            }
        }
        true
    }

    /// The pool restarts empty; its holder learns at its next renewal.
    fn lose_pool(&self, n: &mut State) -> bool {
        if n.lost || self.bounds.lost_record.is_none() {
            return false;
        }
        if let Some(p) = n.owner {
            let h = &mut n.holders[p as usize];
            if Self::holding(h) {
                if h.frozen {
                    return false;
                }
                h.deadline = h.deadline.min(INTERVAL + KILL_AFTER);
            }
        }
        n.lost = true;
        n.owner = None;
        n.record = None;
        true
    }

    fn clock(&self, n: &mut State, e: Event) -> bool {
        match e {
            Event::Slew(p, d) => {
                let h = &mut n.holders[p as usize];
                if h.slewed {
                    return false;
                }
                h.slewed = true;
                h.off += d;
            }
            Event::Step(p, d) => {
                let h = &mut n.holders[p as usize];
                if (d > 0 && !self.bounds.forward_steps) || (d < 0 && h.unseen_step) {
                    return false;
                }
                h.off += d;
                h.unseen_step |= d > 0;
            }
            Event::ServerStep(d) => {
                n.server_off += d;
                // The lease's own assumption (the drift margin): the
                // server lets the id go no earlier than its holder's
                // deadline.
                let owner = n.owner.map(|p| n.holders[p as usize]);
                if owner.is_some_and(|h| Self::holding(&h) && n.expiry - n.server_off < h.deadline)
                {
                    return false;
                }
            }
            _ => unreachable!(),
        }
        self.clocks_allowed(n)
    }

    fn describe(&self, s: &State, n: &State, e: Event) -> String {
        let wall = |p: u8| s.holders[p as usize].off;
        match e {
            Event::Tick => "a tick passes".to_string(),
            Event::Acquire(p, off) => format!(
                "h{p} (wall clock {off:+}) leases the id at server time now{:+}, finds horizon {:?}, waits for wall now{:+}",
                s.server_off,
                s.record,
                match n.holders[p as usize].phase {
                    Phase::Waiting { floor, .. } => floor,
                    _ => LOW,
                }
            ),
            Event::Start(p) => format!("h{p}'s command starts at wall now{:+}", wall(p)),
            Event::Renew(p) if n.owner == Some(p) => format!("h{p} renews"),
            Event::Renew(p) => format!("h{p}'s renewal finds the id gone"),
            Event::Freeze(p) => format!("h{p}'s yaraus freezes"),
            Event::Release(p) => format!(
                "h{p}'s command ends at wall now{:+}; h{p} releases",
                wall(p)
            ),
            Event::Slew(p, d) => format!("h{p}'s wall clock slews by {d}"),
            Event::Step(p, d) => format!("h{p}'s wall clock steps by {d}"),
            Event::ServerStep(d) => format!("the server's clock steps by {d}"),
            Event::LosePool => "the pool restarts empty (no lease, no record)".to_string(),
        }
    }
}
