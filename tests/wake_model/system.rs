//! The model as the explorer sees it: the events possible in a state, what
//! each does (with its narration), the checks, and what is counted.

use crate::wake_model::explorer::{System, say};
use crate::wake_model::model::*;
use std::fmt::Write as _;

impl System for Model {
    type State = State;
    type Event = Event;
    type Violation = Violation;

    fn rules(&self) -> String {
        let mut out = format!(
            "{} waiters, {} place(s), wake {:?}",
            self.n, self.cap, self.wake
        );
        if self.order != Order::SubscribeFirst {
            let _ = write!(out, ", BROKEN: {:?}", self.order);
        }
        for (on, what) in [
            (self.vanish, "the queue vanishes"),
            (self.woken_may_die, "woken waiters die"),
            (self.stops, "waiters stop"),
            (self.expiry, "leases expire"),
            (self.polls, "polls"),
            (self.drops, "subscriptions close"),
            (self.unwoken, "checks unwoken"),
        ] {
            if on {
                let _ = write!(out, ", {what}");
            }
        }
        out
    }

    fn initial(&self) -> State {
        let mut waiters = [Waiter {
            phase: Phase::Gone,
            pending: 0,
        }; MAX];
        for w in &mut waiters[..self.n] {
            w.phase = Phase::Fresh;
        }
        State {
            waiters,
            queue: 0,
            crowd: false,
        }
    }

    fn candidates(&self, _s: &State, out: &mut Vec<Event>) {
        out.clear();
        for w in 0..self.n as u8 {
            out.extend([Event::Step(w), Event::Die(w)]);
            if self.stops {
                out.push(Event::Stop(w));
            }
            if self.expiry {
                out.push(Event::Expire(w));
            }
            if self.polls {
                out.push(Event::Poll(w));
            }
            if self.drops {
                out.push(Event::Drop(w));
            }
        }
        if self.vanish {
            out.push(Event::Vanish);
        }
    }

    fn apply(&self, s: &State, e: Event, log: Option<&mut String>) -> Option<State> {
        let mut n = *s;
        let describe = log.is_some();
        let words = match e {
            Event::Step(w) => {
                let i = w as usize;
                let v = s.waiters[i];
                match v.phase {
                    Phase::Fresh => {
                        // Without a place: the queue is left as it is.
                        n.waiters[i].pending = 0;
                        if self.free(s) > 0 {
                            n.waiters[i].phase = Phase::Holding;
                            say!(describe, "w{w}'s first attempt takes a place")
                        } else {
                            n.waiters[i].phase = Phase::Refused;
                            say!(describe, "w{w}'s first attempt is refused (not queued)")
                        }
                    }
                    Phase::Refused => match self.order {
                        Order::SubscribeFirst => {
                            n.waiters[i].phase = Phase::Armed;
                            say!(describe, "w{w} subscribes")
                        }
                        Order::AttemptFirst => {
                            let r = self.attempt(&mut n, i, Phase::Joined, describe);
                            say!(describe, "w{w}'s second attempt, not subscribed yet, {r}")
                        }
                        Order::NoSecondAttempt => {
                            n.waiters[i].phase = Phase::Waiting;
                            say!(describe, "w{w} subscribes and waits (no second attempt)")
                        }
                    },
                    Phase::Armed => {
                        let r = self.attempt(&mut n, i, Phase::Waiting, describe);
                        say!(describe, "w{w}'s second attempt {r}")
                    }
                    Phase::Joined => {
                        n.waiters[i].phase = Phase::Waiting;
                        say!(describe, "w{w} subscribes")
                    }
                    Phase::Waiting if v.pending > 0 => {
                        n.waiters[i].pending -= 1;
                        let r = self.attempt(&mut n, i, Phase::Waiting, describe);
                        say!(describe, "w{w} reads a message; its attempt {r}")
                    }
                    Phase::Holding => {
                        n.waiters[i].phase = Phase::Gone;
                        let r = self.wake(&mut n, i, describe);
                        say!(describe, "w{w} releases{r}")
                    }
                    Phase::Waiting | Phase::Stopped | Phase::Gone => return None,
                }
            }
            Event::Die(w) => {
                let v = &mut n.waiters[w as usize];
                let alive = matches!(
                    v.phase,
                    Phase::Fresh | Phase::Refused | Phase::Armed | Phase::Joined | Phase::Waiting
                );
                if !alive || (v.pending > 0 && !self.woken_may_die) {
                    return None;
                }
                let unread = v.pending;
                *v = Waiter {
                    phase: Phase::Gone,
                    pending: 0,
                };
                say!(describe, "w{w} dies ({unread} message(s) unread)")
            }
            Event::Stop(w) => {
                let v = &mut n.waiters[w as usize];
                if !self.stops || !matches!(v.phase, Phase::Armed | Phase::Waiting) {
                    return None;
                }
                v.phase = Phase::Stopped;
                say!(describe, "w{w} is stopped (SIGSTOP), still subscribed")
            }
            Event::Expire(w) => {
                let v = &mut n.waiters[w as usize];
                if !self.expiry || v.phase != Phase::Holding {
                    return None;
                }
                v.phase = Phase::Gone;
                say!(
                    describe,
                    "w{w}'s lease expires: its place frees, nobody is told"
                )
            }
            Event::Poll(w) => {
                let i = w as usize;
                if !self.polls || s.waiters[i].phase != Phase::Waiting {
                    return None;
                }
                let r = self.attempt(&mut n, i, Phase::Waiting, describe);
                if n == *s {
                    // Refused and queued already: nothing changes.
                    return None;
                }
                say!(describe, "w{w} polls: its attempt {r}")
            }
            Event::Drop(w) => {
                let v = &mut n.waiters[w as usize];
                if !self.drops || !matches!(v.phase, Phase::Armed | Phase::Waiting) {
                    return None;
                }
                let lost = v.pending;
                *v = Waiter {
                    phase: Phase::Fresh,
                    pending: lost.min(1),
                };
                say!(
                    describe,
                    "w{w}'s subscription closes ({lost} message(s) lost); it will try again"
                )
            }
            Event::Vanish => {
                if !self.vanish || s.queue == 0 {
                    return None;
                }
                n.queue = 0;
                say!(describe, "the queue key vanishes")
            }
        };
        if let Some(log) = log {
            log.push_str(&words);
        }
        Some(n)
    }

    fn violation(&self, s: &State) -> Option<Violation> {
        let waiting = self.waiting(s);
        if s.crowd {
            Some(Violation::Crowd)
        } else if self.unwoken && self.woken(s) < self.free(s).min(waiting) {
            Some(Violation::Unwoken)
        } else if self.quiescent(s) && waiting > 0 {
            Some(Violation::Stranded)
        } else {
            None
        }
    }

    fn counted(&self, s: &State) -> u32 {
        s.waiters.iter().map(|w| u32::from(w.pending)).sum()
    }

    fn counted_name(&self) -> &'static str {
        "messages unread at once"
    }

    fn limit(&self) -> usize {
        30_000_000
    }

    fn start(&self) -> String {
        format!(
            "{} waiters, all fresh; {} free place(s), the queue empty",
            self.n, self.cap
        )
    }

    fn show(&self, s: &State) -> String {
        let queued: Vec<String> = (0..MAX)
            .filter(|w| s.queue & (1 << w) != 0)
            .map(|w| format!("w{w}"))
            .collect();
        let mut out = format!("free {}, queue [{}]", self.free(s), queued.join(" "));
        for (w, v) in s.waiters[..self.n].iter().enumerate() {
            let _ = write!(out, " w{w}:{:?}", v.phase);
            if v.pending > 0 {
                let _ = write!(out, "+{}", v.pending);
            }
        }
        out
    }
}
