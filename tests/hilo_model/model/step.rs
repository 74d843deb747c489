//! The events of the model and what each does: a run starting, a shard
//! executing a request (its reply received, or lost), a run planning its
//! windows, a shard restarting empty, a reserver taking an id.
//!
//! # Choices, and why
//!
//! * A request in flight executes at any later moment, or never: that is
//!   every delay the network can add, and a request lost. A run that gave
//!   up keeps its requests in flight; they may still execute, and their
//!   replies go nowhere.
//! * A lost reply (`Reply::Lost`, when `Model::losses`) makes the run give
//!   up at once, the script having executed. A run that times out while a
//!   request is in flight is the same as a run that never receives it: the
//!   model simply never takes its next step, which a breadth-first search
//!   of every state covers (a safety property holds in a run's every
//!   prefix).
//! * A reply arrives when its request executes: a reply delayed only
//!   delays what the run sends next, and a request sent late is one
//!   delayed in the network, which the model has.
//! * A restart empties the shard: fence, hwm and windows gone. Restarting
//!   an empty shard changes nothing and is left out.

use super::*;
use crate::hilo_model::explorer::say;

/// What becomes of a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The run receives it.
    Received,
    /// It is lost: the run gives up.
    Lost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Run r starts: fences sent to every shard.
    Start(u8),
    /// The shard executes run r's request in flight.
    Execute { run: u8, shard: u8, reply: Reply },
    /// Run r, fenced everywhere, plans k windows, window i on shard to[i].
    Plan {
        run: u8,
        k: u8,
        to: [u8; MAX_SHARDS],
    },
    /// The shard restarts empty.
    Restart(u8),
    /// The shard's reserver takes an id (`Watch::Ids`).
    Reserve(u8),
}

impl Model {
    pub(super) fn events(&self, s: &State, out: &mut Vec<Event>) {
        out.clear();
        for r in 0..self.runs {
            let run = &s.runs[r];
            let w = r as u8;
            if run.phase == Phase::Waiting {
                out.push(Event::Start(w));
            }
            if run.fenced_everywhere(self.shards) {
                out.extend(self.plans().map(|(k, to)| Event::Plan { run: w, k, to }));
            }
            for sh in 0..self.shards {
                if let Req::Sent(_) = run.reqs[sh] {
                    let shard = sh as u8;
                    out.push(Event::Execute {
                        run: w,
                        shard,
                        reply: Reply::Received,
                    });
                    if self.losses && run.phase != Phase::Over {
                        out.push(Event::Execute {
                            run: w,
                            shard,
                            reply: Reply::Lost,
                        });
                    }
                }
            }
        }
        for sh in 0..self.shards {
            if self.may_restart(s, sh) {
                out.push(Event::Restart(sh as u8));
            }
            if self.watch == Watch::Ids && s.shards[sh].open != 0 {
                out.push(Event::Reserve(sh as u8));
            }
        }
    }

    /// The state after `e`, or None when `e` is not possible in `s`.
    pub(super) fn step(&self, s: &State, e: Event, log: Option<&mut String>) -> Option<State> {
        let describe = log.is_some();
        let mut t = *s;
        let text = match e {
            Event::Start(w) => {
                let run = &mut t.runs[w as usize];
                if run.phase != Phase::Waiting {
                    return None;
                }
                run.start(self.shards);
                say!(
                    describe,
                    "{} starts (token {}): fences sent to {}",
                    run_name(w as usize),
                    w + 1,
                    self.shard_list(|_| true)
                )
            }
            Event::Execute { run, shard, reply } => {
                self.execute(&mut t, run as usize, shard as usize, reply, describe)?
            }
            Event::Plan { run: w, k, to } => {
                let run = &mut t.runs[w as usize];
                if !run.fenced_everywhere(self.shards) {
                    return None;
                }
                let g = run.global;
                run.plan(self, k, to);
                let windows = (0..k as usize)
                    .filter(|_| describe)
                    .map(|i| {
                        let a = run.window[to[i] as usize];
                        format!("[{a},{}) on {}", a + self.size, shard_name(to[i] as usize))
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                let sent = if self.rules == Rules::NoRaise {
                    say!(describe, "creates sent")
                } else {
                    say!(
                        describe,
                        "new hwm {}; raises sent to {}",
                        run.new,
                        self.shard_list(|_| true)
                    )
                };
                say!(
                    describe,
                    "{} plans from the global hwm {}: {windows}; {sent}",
                    run_name(w as usize),
                    g
                )
            }
            Event::Restart(sh) => {
                if !self.may_restart(s, sh as usize) {
                    return None;
                }
                t.shards[sh as usize] = Shard::EMPTY;
                if self.restarts != UNLIMITED {
                    t.restarts += 1;
                }
                if self.gate == Gate::SinceLastRaise {
                    t.ghost.restarted |= 1 << sh;
                }
                say!(describe, "{} restarts empty", shard_name(sh as usize))
            }
            Event::Reserve(sh) => {
                let id = t.shards[sh as usize].reserve()?;
                t.ghost.handed(id);
                say!(
                    describe,
                    "{}'s reserver hands out id {id}",
                    shard_name(sh as usize)
                )
            }
        };
        for run in &mut t.runs {
            run.tidy();
        }
        if let Some(log) = log {
            *log = text;
        }
        Some(t)
    }

    /// Shard `sh` executes run r's request in flight; the run receives the
    /// reply or (`Reply::Lost`) gives up.
    fn execute(
        &self,
        t: &mut State,
        r: usize,
        sh: usize,
        reply: Reply,
        describe: bool,
    ) -> Option<String> {
        let Req::Sent(script) = t.runs[r].reqs[sh] else {
            return None;
        };
        let stray = t.runs[r].phase == Phase::Over;
        if reply == Reply::Lost && (stray || !self.losses) {
            return None;
        }
        let token = r as u8 + 1;
        let before = t.shards[sh];
        let run = &mut t.runs[r];
        run.reqs[sh] = Req::Idle;
        let shard = &mut t.shards[sh];
        let (ok, hwm) = match script {
            Script::Fence => match shard.fence(token, self.rules != Rules::FenceUnordered) {
                Some(hwm) => (true, hwm),
                None => (false, 0),
            },
            Script::Raise => (
                shard.raise(token, run.new, self.rules != Rules::RaiseUnfenced),
                0,
            ),
            Script::Create => {
                let a = run.window[sh];
                let ok = shard.create(self.rules, token, a, self.size, self.watch == Watch::Ids);
                if ok {
                    t.ghost.created(a, a + self.size);
                }
                (ok, 0)
            }
        };
        let what = if describe {
            self.script_words(script, run, sh, ok, &before, &t.shards[sh])
        } else {
            String::new()
        };
        let next = if stray {
            String::new()
        } else if reply == Reply::Lost {
            run.phase = Phase::Over;
            say!(describe, "; the reply is lost: {} gives up", run_name(r))
        } else if !ok {
            run.phase = Phase::Over;
            say!(describe, "; {} gives up", run_name(r))
        } else {
            let phase = run.phase;
            run.acked(self, sh, script, hwm);
            if run.phase == Phase::Creating && phase == Phase::Raising {
                match self.gate {
                    Gate::Budget => {}
                    Gate::KeepHighest => t.ghost.highest = t.ghost.highest.max(run.new),
                    Gate::SinceLastRaise => t.ghost.restarted = 0,
                }
            }
            let creates = || self.shard_list(|s| run.reqs[s] == Req::Sent(Script::Create));
            let sent = if run.phase != phase {
                say!(
                    describe,
                    ": every shard raised, creates sent to {}",
                    creates()
                )
            } else if script == Script::Raise && run.reqs[sh] == Req::Sent(Script::Create) {
                say!(describe, ": create sent to {}", shard_name(sh))
            } else {
                String::new()
            };
            say!(describe, "; {} receives it{sent}", run_name(r))
        };
        Some(say!(
            describe,
            "{} executes {}'s {}{what}{next}",
            shard_name(sh),
            run_name(r),
            if stray { "stray " } else { "" }
        ))
    }

    /// Shard `sh` may restart empty: it holds something, and the budget
    /// and the gate allow it.
    fn may_restart(&self, s: &State, sh: usize) -> bool {
        let mut others = (0..self.shards).filter(|&o| o != sh);
        let allowed = match self.gate {
            Gate::Budget => true,
            Gate::KeepHighest => {
                let h = s.ghost.highest;
                h == 0 || others.any(|o| s.shards[o].hwm >= h)
            }
            Gate::SinceLastRaise => others.any(|o| s.ghost.restarted & 1 << o == 0),
        };
        allowed
            && !s.shards[sh].is_empty()
            && (self.restarts == UNLIMITED || s.restarts < self.restarts)
    }
}
