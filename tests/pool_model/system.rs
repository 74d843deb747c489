//! The model as the explorer sees it: its initial state, the events of a
//! state, their narration, and the properties.

use super::steps::{out_of_range, shared};
use super::*;
use explorer::say;
use std::fmt::Write as _;

/// The releases a holder may make.
const RELEASES: [How; 5] = [
    How::Ended(1),
    How::Ended(2),
    How::Unused,
    How::Untouched,
    How::Leftover,
];

impl System for Model {
    type State = State;
    type Event = Event;
    type Violation = Violation;

    fn rules(&self) -> String {
        let b = self.bounds;
        let mut out = format!(
            "{} clients, ids 1..={} (up to {IDS}), {} steps",
            b.clients, b.ids, b.steps
        );
        if let Some(flaw) = self.flaw {
            let _ = write!(out, ", BROKEN: {flaw:?}");
        }
        out
    }

    fn initial(&self) -> State {
        let absent = Slot {
            present: false,
            score: Score::Never,
            owner: None,
            record: None,
        };
        let mut ids = [absent; IDS];
        for slot in &mut ids[..self.bounds.ids as usize] {
            slot.present = true;
        }
        State {
            ids,
            clients: [Client {
                named: false,
                phase: Phase::Idle,
                last_horizon: 0,
            }; CLIENTS],
            counters: Counters::default(),
            range: self.bounds.ids,
            pending: None,
            left: self.bounds.steps,
            broken: None,
        }
    }

    fn candidates(&self, s: &State, out: &mut Vec<Event>) {
        out.clear();
        for c in 0..self.bounds.clients as u8 {
            let renews = match s.clients[c as usize].phase {
                Phase::Idle => {
                    for lasts in [true, false] {
                        for horizon in HORIZONS {
                            out.push(Event::Acquire { c, lasts, horizon });
                        }
                    }
                    continue;
                }
                Phase::Holding { lost, .. } => !lost,
            };
            if renews {
                for lasts in [true, false] {
                    for horizon in HORIZONS {
                        out.push(Event::Renew { c, lasts, horizon });
                    }
                }
            }
            out.extend(RELEASES.map(|how| Event::Release { c, how }));
        }
        for to in 1..=IDS as u8 {
            for force in [false, true] {
                out.push(Event::Init { to, force });
                out.push(Event::Decide { to, force });
            }
        }
        out.push(Event::Shrink);
    }

    fn apply(&self, s: &State, e: Event, log: Option<&mut String>) -> Option<State> {
        let (n, reply) = self.step(s, e)?;
        if let Some(log) = log {
            log.push_str(&say!(true, "{}", describe(s, e, &reply)));
        }
        Some(n)
    }

    fn violation(&self, s: &State) -> Option<Violation> {
        s.broken
            .or_else(|| (1..=IDS as u8).find_map(|id| shared(s, id)))
            .or_else(|| out_of_range(s))
    }

    fn counted(&self, s: &State) -> u32 {
        s.clients
            .iter()
            .filter(|c| matches!(c.phase, Phase::Holding { in_force: true, .. }))
            .count() as u32
    }

    fn counted_name(&self) -> &'static str {
        "leases in force at once"
    }

    fn limit(&self) -> usize {
        20_000_000
    }

    fn start(&self) -> String {
        format!(
            "the pool 1..={}, no lease, no record, {} idle clients",
            self.bounds.ids, self.bounds.clients
        )
    }

    fn show(&self, s: &State) -> String {
        let mut out = format!("[range 1..={}", s.range);
        for id in 1..=IDS as u8 {
            let slot = s.slot(id);
            if !slot.present && slot.record.is_none() {
                continue;
            }
            let _ = write!(out, " {id}:");
            if slot.present {
                let _ = write!(out, "{:?}", slot.score);
            } else {
                out.push_str("absent");
            }
            if let Some(owner) = slot.owner {
                let _ = write!(out, " c{owner}");
            }
            if let Some(r) = slot.record {
                let _ = write!(out, " h{}/c{}", r.horizon, r.writer);
            }
        }
        for (c, client) in s.clients.iter().enumerate() {
            if let Phase::Holding {
                id, in_force, lost, ..
            } = client.phase
            {
                let how = if lost {
                    "lost"
                } else if in_force {
                    "in force"
                } else {
                    "lapsed"
                };
                let _ = write!(out, " c{c}→{id} {how}");
            }
        }
        if let Some((lo, hi)) = s.pending {
            let _ = write!(out, " shrink {lo}..={hi} pending");
        }
        out.push(']');
        out
    }
}

/// A step in words.
fn describe(s: &State, e: Event, reply: &Reply) -> String {
    let lapse = |lasts: bool| if lasts { "" } else { ", and pauses past it" };
    match (e, reply) {
        (Event::Acquire { c, lasts, horizon }, Reply::Leased { id, found, .. }) => format!(
            "c{c} leases id {id} (horizon {horizon}, finds {found:?}){}",
            lapse(lasts)
        ),
        (Event::Acquire { c, .. }, _) => format!("c{c} finds every id leased"),
        (Event::Renew { c, lasts, horizon }, Reply::Extended { .. }) => {
            format!("c{c} renews (horizon {horizon}){}", lapse(lasts))
        }
        (Event::Renew { c, .. }, Reply::Refused { owner }) => {
            format!("c{c}'s renewal is refused (owner {owner:?})")
        }
        (Event::Release { c, how }, Reply::Released(done)) => {
            let what = if *done {
                "releases"
            } else {
                "tries to release"
            };
            let id = match s.clients[c as usize].phase {
                Phase::Holding { id, .. } => id,
                Phase::Idle => 0,
            };
            format!("c{c} {what} id {id} ({how:?})")
        }
        (Event::Init { to, force }, Reply::Init(r)) => {
            format!(
                "init 1..={to}{}: {r:?}",
                if force { " --force" } else { "" }
            )
        }
        (Event::Decide { to, force }, r) => format!(
            "an init to 1..={to}{} decides: {r:?}",
            if force { " --force" } else { "" }
        ),
        (Event::Shrink, r) => format!("that init removes its ids: {r:?}"),
        (e, r) => format!("{e:?}: {r:?}"),
    }
}
