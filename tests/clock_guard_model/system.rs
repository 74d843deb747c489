//! The model as the explorer sees it: its initial state, the events of a
//! state, what each does, the symmetry, and the property.

use super::*;
use explorer::say;
use std::fmt::Write as _;

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
            server_off: 0,
            owner: None,
            expiry: -SERVER_OFFSET,
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
                Event::Step(p, -2),
                Event::Step(p, 2),
            ]);
        }
        out.extend([Event::ServerStep(-1), Event::ServerStep(1), Event::LosePool]);
    }

    fn apply(&self, s: &State, e: Event, log: Option<&mut String>) -> Option<State> {
        let describe = log.is_some();
        let mut n = *s;
        let possible = match e {
            Event::Tick => Self::tick(&mut n),
            Event::Acquire(p, off) => self.acquire(&mut n, p as usize, off),
            Event::Start(p) => Self::start(&mut n, p as usize),
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
                    made: h.made,
                    ..IDLE_DONE
                };
            }
        }
        if let Some(log) = log {
            log.push_str(&say!(describe, "{}", self.describe(s, &n, e)));
        }
        Some(n)
    }

    /// Holders in order; the lease's owner follows its holder.
    fn canon(&self, s: State) -> State {
        let mut order: [usize; HOLDERS] = std::array::from_fn(|i| i);
        order.sort_by_key(|&i| s.holders[i]);
        let mut c = s;
        for (to, &from) in order.iter().enumerate() {
            c.holders[to] = s.holders[from];
            if s.owner == Some(from as u8) {
                c.owner = Some(to as u8);
            }
        }
        c
    }

    fn violation(&self, s: &State) -> Option<Violation> {
        let hs = &s.holders;
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
        s.holders.iter().filter(|h| h.made).count() as u32
    }

    fn counted_name(&self) -> &'static str {
        "holders that made ids"
    }

    fn limit(&self) -> usize {
        30_000_000
    }

    fn start(&self) -> String {
        "every clock on real time, no record (instants relative to now)".to_string()
    }

    fn show(&self, s: &State) -> String {
        let mut out = format!(
            "[server {:+} owner {:?} expiry {:+} record {:?}",
            s.server_off, s.owner, s.expiry, s.record
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

/// The instants of a `used` mask, relative to now.
fn instants(used: u8) -> Vec<i8> {
    (0..8)
        .filter(|b| used & (1 << b) != 0)
        .map(|b| b as i8 - HOST_OFFSET)
        .collect()
}
