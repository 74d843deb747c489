//! The events of the model and what each does: time passing, a replica
//! ticking (in three steps, or in one), a stray tick or a confirm executing,
//! a child dying, a child starting, a crash.
//!
//! # Choices, and why
//!
//! * Time passes one unit at a time, and only when no alive child's
//!   deadline would be reached: the watchdog's kill is a step the search
//!   must take first. A child is thus alive exactly while `now < deadline`.
//! * A replica sends interval n at any moment from its due time on (late,
//!   or frozen between reading the clock and sending), for any n from its
//!   `floor` on (it may skip intervals), or n again after giving up on n (a
//!   retry). The floor is the interval current when it stopped waiting for
//!   its last tick, or when it restarted: its loop reads the clock after
//!   each tick, and a restarted process reads it anew. One tick awaited at
//!   a time.
//! * Giving up on a tick (a timeout) is the one fault: a tick in flight
//!   becomes a stray that may execute at any later moment or never (a lost
//!   request); an executed tick's reply is lost. A crash kills the child at
//!   once and restarts the replica with an empty memory; its tick in
//!   flight strays. Confirms may be lost freely (that only delays others).
//! * The barrier's read of |transition[m]| and count[m-1] is folded into
//!   `Start`: the set only grows and count[m-1] is final once m is ticked
//!   (the seal), so a read that saw the barrier passed is a read at the
//!   moment of the start. A lost read is a start not taken.
//! * A confirm is put in flight when the child dies (a tick whose pair
//!   changed stopped it); it executes at any later moment, or never.
//! * A child may exit on its own at any moment (`child_exits`): a job may
//!   end or fail; the replica may then start another.
//!
//! # Atomic ticks: a reduction, and why it loses nothing
//!
//! In the exact model a tick is three steps: `Send`, `Execute`, `Receive`
//! (and `GiveUp`). With `Model::atomic` it is one, `Tick(r, n, fate)`: sent,
//! executed and answered at once, or its request lost (it strays), or its
//! reply lost. This divides the states by ten to forty, and keeps every
//! violation: any run of the exact model is matched, moment by moment, by
//! an atomic run in which every replica holds a child with the same pair,
//! and the store is the same but for transition sets that may be larger:
//!
//! * send the tick when it executes, not before: the send time only sets
//!   the deadline and the claim's validity (later: longer, so the matching
//!   child lives at least as long; it exits when the exact one dies, which
//!   `child_exits` allows), and the holding the script reads (the child
//!   may have died since: "none" settles whenever a stale pair would);
//! * receive the reply when it executes, not after: the receive time only
//!   sets the earliest start (earlier: more starts allowed), and a reply
//!   received later may find the child killed at its old deadline, which
//!   the matching child does by exiting; a confirm the earlier stop adds
//!   may simply never execute.
//!
//! Atomic runs are exact runs (nothing happens between the three steps), so
//! the two models reach the same (time, store, children) and each exact
//! transition set lies inside an atomic one with the rest equal:
//! `checks::atomic_ticks_lose_no_run_of_the_exact_model` checks exactly
//! that on small bounds, `deeper.rs` on larger ones. Starts under an older
//! tick while a later one is in flight (`Rules::LatestAnswered`) are the one
//! behaviour atomic ticks lose; that departure is shown unsafe through a
//! lost reply instead.

use super::replica::stray;
use super::*;
use crate::index_model::explorer::say;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Advance,
    /// Replica r sends its tick for interval n (exact mode).
    Send(u8, u8),
    /// The store executes r's awaited tick (exact mode).
    Execute(u8),
    /// r receives its awaited tick's reply (exact mode).
    Receive(u8),
    /// r gives up on its awaited tick (exact mode; a fault).
    GiveUp(u8),
    /// r's tick for interval n is sent, and what becomes of it, in one step
    /// (atomic mode).
    Tick(u8, u8, Fate),
    /// The store executes r's stray tick in slot i.
    Stray(u8, u8),
    /// The store executes r's confirm for tick m.
    Confirm(u8, u8),
    /// r's child dies (stopped, killed at its deadline, or exits).
    Die(u8),
    /// r starts a child under its basis.
    Start(u8),
    /// r crashes and restarts (a SIGKILL: its child dies at once); with
    /// n > 0 (atomic mode), just after sending its tick for n, which strays.
    Crash(u8, u8),
}

/// What becomes of a tick in atomic mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Executed and answered at once.
    Answered,
    /// Executed; the reply is lost (a fault).
    ReplyLost,
    /// Not executed; the replica gives up on it and it strays (a fault).
    RequestLost,
}

impl Model {
    pub(super) fn events(&self, s: &State, out: &mut Vec<Event>) {
        out.clear();
        out.push(Event::Advance);
        for r in 0..self.replicas {
            let rep = &s.reps[r];
            let w = r as u8;
            let first = rep.tick.n.max(1).min(rep.floor);
            let last = self.current(r, s.now).min(self.ticks);
            match rep.tick.phase {
                Phase::InFlight => out.extend([Event::Execute(w), Event::GiveUp(w)]),
                Phase::Executed(_) => out.extend([Event::Receive(w), Event::GiveUp(w)]),
                Phase::Done | Phase::Lost => {
                    for n in first..=last {
                        if self.atomic {
                            out.extend(
                                [Fate::Answered, Fate::ReplyLost, Fate::RequestLost]
                                    .map(|f| Event::Tick(w, n, f)),
                            );
                            out.push(Event::Crash(w, n));
                        } else {
                            out.push(Event::Send(w, n));
                        }
                    }
                }
            }
            for (i, st) in rep.strays.iter().enumerate() {
                if st.is_some() {
                    out.push(Event::Stray(w, i as u8));
                }
            }
            for m in 1..=self.ticks {
                if rep.confirms & 1 << m != 0 {
                    out.push(Event::Confirm(w, m));
                }
            }
            if rep.child.is_some() {
                out.push(Event::Die(w));
            } else {
                out.push(Event::Start(w));
            }
            out.push(Event::Crash(w, 0));
        }
    }

    /// The state after `e`, or None when `e` is not possible in `s`.
    pub(super) fn step(&self, s: &State, e: Event, log: Option<&mut String>) -> Option<State> {
        let describe = log.is_some();
        let mut t = *s;
        let seal = self.rules != Rules::NoSeal;
        let text = match e {
            Event::Advance => {
                let next = t.now + 1;
                let blocked = t.reps[..self.replicas]
                    .iter()
                    .any(|r| r.child.is_some_and(|c| c.deadline <= next));
                if t.now >= self.horizon || blocked {
                    return None;
                }
                t.now = next;
                say!(describe, "time {next}")
            }
            Event::Send(w, n) => {
                let r = w as usize;
                self.send(&mut t, r, n)?;
                say!(describe, "{}", sent_words(&t, r))
            }
            Event::Execute(w) => {
                let r = w as usize;
                let reply = self.execute(&mut t, r);
                say!(describe, "{}", executed_words(&t, r, reply))
            }
            Event::Receive(w) => {
                let r = w as usize;
                let Phase::Executed(reply) = t.reps[r].tick.phase else {
                    return None;
                };
                let what = self.receive(&mut t, r, reply, describe);
                say!(
                    describe,
                    "{} receives tick {}'s reply{what}",
                    replica_name(r),
                    t.reps[r].tick.n
                )
            }
            Event::GiveUp(w) => {
                let r = w as usize;
                let stray = t.reps[r].tick.phase == Phase::InFlight;
                self.give_up(&mut t, r)?;
                let what = if stray {
                    "still in flight"
                } else {
                    "executed, reply lost"
                };
                say!(
                    describe,
                    "{} gives up on tick {} ({what})",
                    replica_name(r),
                    t.reps[r].tick.n
                )
            }
            Event::Tick(w, n, fate) => {
                let r = w as usize;
                self.send(&mut t, r, n)?;
                let sent = say!(describe, "{}", sent_words(&t, r));
                if fate == Fate::RequestLost {
                    self.give_up(&mut t, r)?;
                    say!(describe, "{sent}; it is lost (it strays)")
                } else {
                    let reply = self.execute(&mut t, r);
                    let executed = say!(describe, "; {}", executed_words(&t, r, reply));
                    if fate == Fate::ReplyLost {
                        self.give_up(&mut t, r)?;
                        say!(describe, "{sent}{executed}; the reply is lost")
                    } else {
                        let what = self.receive(&mut t, r, reply, describe);
                        say!(
                            describe,
                            "{sent}{executed}; {} receives it{what}",
                            replica_name(r)
                        )
                    }
                }
            }
            Event::Stray(w, i) => {
                let r = w as usize;
                let st = t.reps[r].strays[i as usize]?;
                t.reps[r].strays[i as usize] = None;
                let reply = t.store.tick(r, st.n, st.holding, seal);
                say!(
                    describe,
                    "the store executes {}'s stray tick {} (holding {}): {}",
                    replica_name(r),
                    st.n,
                    pair_name(st.holding),
                    reply_words(reply)
                )
            }
            Event::Confirm(w, m) => {
                let r = w as usize;
                t.reps[r].confirms &= !(1 << m);
                t.store.confirm(r, m);
                say!(
                    describe,
                    "the store executes {}'s confirm {m}",
                    replica_name(r)
                )
            }
            Event::Die(w) => {
                let r = w as usize;
                let c = t.reps[r].child?;
                let why = if c.stopping {
                    "stopped"
                } else if s.now + 1 >= c.deadline {
                    "killed at its deadline"
                } else if self.child_exits {
                    "exits"
                } else {
                    return None;
                };
                t.reps[r].child = None;
                t.reps[r].confirms |= c.changed;
                let confirms = if c.changed != 0 {
                    say!(describe, "; confirms {}", bits(c.changed))
                } else {
                    String::new()
                };
                say!(
                    describe,
                    "{}'s child {} dies ({why}){confirms}",
                    replica_name(r),
                    pair_name(Some(c.pair))
                )
            }
            Event::Start(w) => {
                let r = w as usize;
                let (pair, deadline, b) = self.can_start(s, r)?;
                t.reps[r].child = Some(Child {
                    pair,
                    deadline,
                    stopping: false,
                    changed: 0,
                    vouched: if self.extension == Extension::Contiguous {
                        b.n
                    } else {
                        0
                    },
                });
                say!(
                    describe,
                    "{} starts a child {} under tick {} (sent {}, recv {}, recv of {} {}), deadline {deadline}",
                    replica_name(r),
                    pair_name(Some(pair)),
                    b.n,
                    b.send,
                    b.recv,
                    b.n - 1,
                    b.prev_recv.map_or("unknown".to_string(), |p| p.to_string())
                )
            }
            Event::Crash(w, n) => {
                let r = w as usize;
                if t.crashes >= self.crashes {
                    return None;
                }
                t.crashes += 1;
                let sent = if n > 0 {
                    self.send(&mut t, r, n)?;
                    say!(describe, "{}, then ", sent_words(&t, r))
                } else {
                    String::new()
                };
                let tick = t.reps[r].tick;
                let rep = &mut t.reps[r];
                if tick.phase == Phase::InFlight {
                    stray(rep, tick)?;
                }
                rep.child = None;
                rep.tick = Replica::FRESH.tick;
                rep.basis = None;
                rep.stale = !self.restart_floor;
                rep.floor = if rep.stale {
                    1
                } else {
                    self.current(r, s.now).max(1)
                };
                say!(describe, "{sent}{} crashes and restarts", replica_name(r))
            }
        };
        t.tidy(self);
        if let Some(log) = log {
            *log = text;
        }
        Some(t)
    }
}

fn sent_words(t: &State, r: usize) -> String {
    let tick = t.reps[r].tick;
    format!(
        "{} sends tick {}, holding {}",
        replica_name(r),
        tick.n,
        pair_name(tick.holding)
    )
}

fn executed_words(t: &State, r: usize, reply: Reply) -> String {
    format!(
        "the store executes {}'s tick {}: {}",
        replica_name(r),
        t.reps[r].tick.n,
        reply_words(reply)
    )
}

fn reply_words(reply: Reply) -> String {
    match reply {
        Reply::Refused => "refused (late)".to_string(),
        Reply::Ok { pair, settled } => format!(
            "pair {}{}",
            pair_name(pair),
            if settled { ", settled" } else { "" }
        ),
    }
}

/// "1, 3" for bits 1 and 3.
pub fn bits(mask: u8) -> String {
    (0..8)
        .filter(|b| mask & 1 << b != 0)
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
