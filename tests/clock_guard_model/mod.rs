//! An exhaustive explorer of the worker id's clock guard (`run`,
//! `src/lease/clock_guard.rs`): successive holders of one id, each on a
//! host whose wall clock is off real time, and the snowflake instants
//! (wall-clock millisecond, worker id) their commands use.
//!
//! # What is modelled
//!
//! Time is in ticks (a tick stands for a millisecond of the generator),
//! absolute and bounded (`Bounds::end`). Each host's boot clock is real
//! time: its rate error is what the 1% drift margin of the deadline
//! covers, and it does not enter the hand-over, which compares wall
//! clocks only. A host's wall clock is real time plus its offset, bounded;
//! the offset may *slew* by one tick once (the slew over any span the
//! model reaches is within the projection's one tick of slack: the shipped
//! rate, 500 ppm, over a renewal interval of a second), and *step* back
//! (or forward, where a case allows it) within the bound. The server's
//! clock (`TIME`, which times the lease) has its own offset and steps.
//!
//! The steps are the scripts' as `run` drives them: the lease
//! (`acquire.lua`) at the server's time, expiring `EXPIRE` server ticks
//! later, raising the record to the horizon the holder sends (its
//! highest wall-minus-boot offset seen, plus the deadline `VALIDITY` ticks
//! of boot clock away, plus one tick of slack: `WallWatch::wall_at`); the
//! new holder starting its command once `DELAY` ticks have passed and its
//! own wall clock has reached the record it found plus `MARGIN`
//! (`handover_floor`; with no record and `--max-clock-offset D`,
//! `fallback_floor`); renewals (`renew.lua`) sampling the wall clock and
//! raising the record the same way; the command using its wall-clock
//! instant at every tick it runs; a clean release (`release.lua`,
//! `ended`) once the command has ended, writing the wall clock then (the
//! highest offset seen, plus one tick) but never below what the lease
//! found; a freeze (yaraus stopped: no renewal, no release, while the
//! watchdog kills the command at the deadline); expiry, after which
//! another holder leases the id and the old record stands; a renewal that
//! finds the id taken kills the command within `KILL_AFTER`. The lost
//! record: the pool restarts empty (no lease, no record); its holder, not
//! frozen (the grace delay's assumption), learns at its next renewal
//! (within `INTERVAL`) and its command is dead `KILL_AFTER` later, and
//! every host stays within `D` of the server (the condition
//! `--max-clock-offset D` enforces at each lease and renewal).
//!
//! # What is checked
//!
//! No wall-clock instant used by two holders' commands
//! (`Violation::SharedInstant`). The rules are [`Rules`]: the shipped one
//! passes; a horizon written from the server's clock, a hand-over without
//! the margin, and a release that lowers the record below what its lease
//! found each fail with a shortest run.

mod tests;

use crate::explorer;

use explorer::{System, say};
use std::fmt::Write as _;

/// Ticks of server time a lease lasts (`--expire`).
const EXPIRE: i8 = 4;
/// Ticks of the holder's boot clock from sending a lease or renewal to
/// the deadline at which the watchdog kills the command: the lease less
/// the drift margin.
const VALIDITY: u8 = 3;
/// The renewal interval and the kill-after: a holder whose pool was lost
/// has its command dead `INTERVAL + KILL_AFTER` ticks later.
const INTERVAL: u8 = 1;
const KILL_AFTER: u8 = 0;
/// The grace delay, `2 × interval + kill-after`.
const DELAY: u8 = 2 * INTERVAL + KILL_AFTER;
/// `HANDOVER_MARGIN`, in ticks.
const MARGIN: i8 = 1;
/// `projection_slack`: the slew over the span, and the rounding tick.
const SLACK: i8 = 1;
/// A host's wall clock is at most this far from real time.
const HOST_OFFSET: i8 = 2;
/// The server's clock likewise.
const SERVER_OFFSET: i8 = 1;
const HOLDERS: usize = 3;

/// How the horizon is written and read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// The shipped rule: the horizon is the deadline on the holder's own
    /// wall clock, the next holder waits for it plus the margin, and a
    /// release never writes below what its lease found.
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
}

/// What one case lets happen.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub holders: usize,
    /// The last tick.
    pub end: u8,
    /// A host's wall clock may step forward (it may always step back).
    pub forward_steps: bool,
    /// The pool may restart empty once, every host within `D` of the
    /// server, and `--max-clock-offset D` set.
    pub lost_record: Option<i8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    /// Leased at `since`; starts once the delay has passed and its wall
    /// clock has reached `floor`.
    Waiting {
        since: u8,
        floor: Option<i8>,
    },
    Running,
    /// Ended, killed, or gave up: acts no more.
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Holder {
    phase: Phase,
    /// The watchdog's deadline (real tick).
    deadline: u8,
    /// Wall clock minus real time.
    off: i8,
    /// The highest offset sampled since the lease (`WallWatch`).
    highest: i8,
    slewed: bool,
    frozen: bool,
    /// The horizon the lease found.
    found: Option<i8>,
    /// The wall-clock instants its command used (bit `w + HOST_OFFSET`).
    used: u32,
}

/// A holder that acts no more: only what it used matters.
const IDLE_DONE: Holder = Holder {
    phase: Phase::Done,
    deadline: 0,
    off: 0,
    highest: 0,
    slewed: false,
    frozen: false,
    found: None,
    used: 0,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct State {
    t: u8,
    server_off: i8,
    /// The lease: its holder and its expiry (server time).
    owner: Option<u8>,
    expiry: i8,
    /// The id's clock record: its horizon.
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
    /// Two holders' commands used one wall-clock instant.
    SharedInstant { instant: i8 },
}

pub struct Model {
    pub rules: Rules,
    pub bounds: Bounds,
}

impl Model {
    fn server_now(s: &State) -> i8 {
        s.t as i8 + s.server_off
    }

    /// The horizon a lease or renewal sends: the deadline projected onto
    /// the holder's wall clock, or, broken, the server's expiry.
    fn horizon(&self, s: &State, h: &Holder) -> i8 {
        match self.rules {
            Rules::ServerClockHorizon => Self::server_now(s) + EXPIRE,
            _ => h.highest + s.t as i8 + VALIDITY as i8 + SLACK,
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
    fn floor(&self, s: &State, h: &Holder) -> Option<i8> {
        match (h.found, self.bounds.lost_record) {
            (Some(horizon), _) => Some(horizon + self.margin()),
            // `fallback_floor`, the offset measured exactly: the server's
            // time at the end of the delay, plus D and the margin.
            (None, Some(d)) => Some(Self::server_now(s) + DELAY as i8 + d + self.margin()),
            (None, None) => None,
        }
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

    fn wall(s: &State, h: &Holder) -> i8 {
        s.t as i8 + h.off
    }

    /// The generator waits out a clock that stepped back (katsubushi,
    /// sonyflake do): it uses an instant only past every one it used.
    fn uses_instant(s: &State, h: &mut Holder) {
        let bit = (Self::wall(s, h) + HOST_OFFSET) as u32;
        if h.used >> bit == 0 {
            h.used |= 1 << bit;
        }
    }

    fn holding(h: &Holder) -> bool {
        matches!(h.phase, Phase::Waiting { .. } | Phase::Running)
    }

    /// Time passes: the watchdog kills what reached its deadline, and
    /// each running command uses its instant.
    fn tick(&self, s: &State, n: &mut State) -> bool {
        if s.t >= self.bounds.end {
            return false;
        }
        n.t += 1;
        let at = *n;
        for h in &mut n.holders {
            if Self::holding(h) && n.t >= h.deadline {
                h.phase = Phase::Done;
            } else if h.phase == Phase::Running {
                Self::uses_instant(&at, h);
            }
        }
        true
    }

    fn acquire(&self, n: &mut State, p: usize, off: i8) -> bool {
        let now = Self::server_now(n);
        if n.holders[p].phase != Phase::Idle || (n.owner.is_some() && now < n.expiry) {
            return false;
        }
        let t = n.t;
        let h = &mut n.holders[p];
        h.off = off;
        h.highest = h.off;
        h.deadline = t + VALIDITY;
        h.found = n.record;
        let horizon = self.horizon(n, &n.holders[p]);
        n.record = Some(n.record.map_or(horizon, |r| r.max(horizon)));
        n.owner = Some(p as u8);
        n.expiry = now + EXPIRE;
        let floor = self.floor(n, &n.holders[p]);
        n.holders[p].phase = Phase::Waiting { since: t, floor };
        self.clocks_allowed(n)
    }

    fn renew(&self, n: &mut State, p: usize) -> bool {
        let h = n.holders[p];
        if !Self::holding(&h) || h.frozen {
            return false;
        }
        if n.owner != Some(p as u8) {
            // Taken or gone: the command is killed within kill-after.
            n.holders[p].deadline = h.deadline.min(n.t + KILL_AFTER);
            return true;
        }
        let t = n.t;
        let h = &mut n.holders[p];
        h.highest = h.highest.max(h.off);
        h.deadline = t + VALIDITY;
        let horizon = self.horizon(n, &n.holders[p]);
        n.record = Some(n.record.map_or(horizon, |r| r.max(horizon)));
        n.expiry = Self::server_now(n) + EXPIRE;
        true
    }

    fn release(&self, n: &mut State, p: usize) -> bool {
        let h = n.holders[p];
        if h.phase != Phase::Running || h.frozen {
            return false;
        }
        n.holders[p].phase = Phase::Done;
        if n.owner == Some(p as u8) {
            n.expiry = Self::server_now(n);
            let now = h.highest + n.t as i8 + SLACK;
            let horizon = match (self.rules, h.found) {
                (Rules::ReleaseBelowFound, _) | (_, None) => now,
                (_, Some(found)) => found.max(now),
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
                h.deadline = h.deadline.min(n.t + INTERVAL + KILL_AFTER);
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
                if d > 0 && !self.bounds.forward_steps {
                    return false;
                }
                n.holders[p as usize].off += d;
            }
            Event::ServerStep(d) => n.server_off += d,
            _ => unreachable!(),
        }
        self.clocks_allowed(n)
    }
}

impl System for Model {
    type State = State;
    type Event = Event;
    type Violation = Violation;

    fn rules(&self) -> String {
        format!("{:?}, {:?}", self.rules, self.bounds)
    }

    fn initial(&self) -> State {
        let idle = Holder {
            phase: Phase::Idle,
            ..IDLE_DONE
        };
        let mut holders = [idle; HOLDERS];
        for h in holders.iter_mut().skip(self.bounds.holders) {
            h.phase = Phase::Done;
        }
        State {
            t: 0,
            server_off: 0,
            owner: None,
            expiry: 0,
            record: None,
            lost: false,
            holders,
        }
    }

    fn candidates(&self, s: &State, out: &mut Vec<Event>) {
        out.clear();
        out.push(Event::Tick);
        for p in 0..self.bounds.holders as u8 {
            match s.holders[p as usize].phase {
                Phase::Done => continue,
                Phase::Idle => {
                    out.extend((-HOST_OFFSET..=HOST_OFFSET).map(|off| Event::Acquire(p, off)));
                    continue;
                }
                _ => {}
            }
            out.extend([
                Event::Start(p),
                Event::Renew(p),
                Event::Freeze(p),
                Event::Release(p),
                Event::Slew(p, 1),
                Event::Slew(p, -1),
            ]);
            out.extend([Event::Step(p, -2), Event::Step(p, 2)]);
        }
        out.extend([Event::ServerStep(-1), Event::ServerStep(1), Event::LosePool]);
    }

    fn apply(&self, s: &State, e: Event, log: Option<&mut String>) -> Option<State> {
        let describe = log.is_some();
        let mut n = *s;
        let possible = match e {
            Event::Tick => self.tick(s, &mut n),
            Event::Acquire(p, off) => self.acquire(&mut n, p as usize, off),
            Event::Start(p) => {
                let h = &mut n.holders[p as usize];
                let ready = match h.phase {
                    Phase::Waiting { since, floor } => {
                        !h.frozen
                            && s.t >= since + DELAY
                            && floor.is_none_or(|f| Self::wall(s, h) >= f)
                    }
                    _ => false,
                };
                if ready {
                    h.phase = Phase::Running;
                    Self::uses_instant(s, h);
                }
                ready
            }
            Event::Renew(p) => self.renew(&mut n, p as usize),
            Event::Freeze(p) => {
                let h = &mut n.holders[p as usize];
                let possible = Self::holding(h) && !h.frozen;
                h.frozen = true;
                possible
            }
            Event::Release(p) => self.release(&mut n, p as usize),
            Event::Slew(..) | Event::Step(..) | Event::ServerStep(_) => self.clock(&mut n, e),
            Event::LosePool => self.lose_pool(&mut n),
        };
        if !possible {
            return None;
        }
        for h in &mut n.holders {
            if h.phase == Phase::Done {
                *h = Holder {
                    used: h.used,
                    ..IDLE_DONE
                };
            }
        }
        if let Some(log) = log {
            let what = match e {
                Event::Tick => format!("tick {}", n.t),
                Event::Acquire(p, off) => format!(
                    "h{p} (wall clock {off:+}) leases the id at server time {}, finds horizon {:?}, waits for wall {:?}",
                    Self::server_now(s),
                    s.record,
                    match n.holders[p as usize].phase {
                        Phase::Waiting { floor, .. } => floor,
                        _ => None,
                    }
                ),
                Event::Start(p) => format!(
                    "h{p}'s command starts at wall {}",
                    Self::wall(s, &s.holders[p as usize])
                ),
                Event::Renew(p) if n.owner == Some(p) => format!("h{p} renews"),
                Event::Renew(p) => format!("h{p}'s renewal finds the id gone"),
                Event::Freeze(p) => format!("h{p}'s yaraus freezes"),
                Event::Release(p) => format!(
                    "h{p}'s command ends at wall {}; h{p} releases",
                    Self::wall(s, &s.holders[p as usize])
                ),
                Event::Slew(p, d) => format!("h{p}'s wall clock slews by {d}"),
                Event::Step(p, d) => format!("h{p}'s wall clock steps by {d}"),
                Event::ServerStep(d) => format!("the server's clock steps by {d}"),
                Event::LosePool => "the pool restarts empty (no lease, no record)".to_string(),
            };
            log.push_str(&say!(describe, "{what}"));
        }
        Some(n)
    }

    fn violation(&self, s: &State) -> Option<Violation> {
        let hs = &s.holders[..self.bounds.holders];
        for (i, a) in hs.iter().enumerate() {
            for b in &hs[i + 1..] {
                let shared = a.used & b.used;
                if shared != 0 {
                    let instant = shared.trailing_zeros() as i8 - HOST_OFFSET;
                    return Some(Violation::SharedInstant { instant });
                }
            }
        }
        None
    }

    fn counted(&self, s: &State) -> u32 {
        s.holders.iter().filter(|h| h.used != 0).count() as u32
    }

    fn counted_name(&self) -> &'static str {
        "holders that made ids"
    }

    fn limit(&self) -> usize {
        30_000_000
    }

    fn start(&self) -> String {
        "every clock on real time, no record".to_string()
    }

    fn show(&self, s: &State) -> String {
        let mut out = format!(
            "[t {} server {:+} owner {:?} expiry {} record {:?}",
            s.t, s.server_off, s.owner, s.expiry, s.record
        );
        for (p, h) in s.holders[..self.bounds.holders].iter().enumerate() {
            let _ = write!(
                out,
                " h{p}:{:?} off {:+} deadline {} used {:?}",
                h.phase,
                h.off,
                h.deadline,
                instants(h.used)
            );
        }
        out.push(']');
        out
    }
}

/// The instants of a `used` mask.
fn instants(used: u32) -> Vec<i8> {
    (0..32)
        .filter(|b| used & (1 << b) != 0)
        .map(|b| b as i8 - HOST_OFFSET)
        .collect()
}
