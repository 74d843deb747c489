//! What one replica does, as the model's steps call it: whether it may
//! start a child ([`Model::can_start`]: the protocol's conditions (a), (b)
//! and (c)), sending a tick, the store executing it, giving up on it, acting
//! on its reply; and `State::tidy`, which wipes what no later step can
//! observe.
//!
//! # Extending a child
//!
//! A settled reply to tick m (the pair under the child unchanged) extends
//! the child's deadline to send(m) + V. `Model::extension` says when: as
//! specified (always), never for a child being stopped, or only when tick
//! m - 1 vouched for it (`Extension::Contiguous`, the rule built: see `mod.rs`).

use super::*;
use crate::index_model::explorer::say;

impl Model {
    /// Whether r may start a child now, and under which pair and deadline.
    pub fn can_start(&self, s: &State, r: usize) -> Option<(Pair, u8, Basis)> {
        let rep = &s.reps[r];
        if rep.child.is_some() {
            return None;
        }
        let b = rep.basis?;
        let pair = b.pair?;
        if self.rules != Rules::LatestAnswered && b.n != rep.tick.n {
            return None;
        }
        let (v, d) = (self.v(), self.drift);
        if s.now + self.kill_after >= b.send + v {
            return None;
        }
        let base = b.prev_recv.unwrap_or(b.recv);
        let timed = s.now >= base + v + d;
        let fallback = s.now >= b.recv + v + d;
        let full = s.store.barrier(b.n);
        let ok = match self.rules {
            Rules::NoBarrier => true,
            Rules::ConfirmOnly => full,
            Rules::NoFallback => full && timed,
            _ => (full && timed) || fallback,
        };
        ok.then_some((pair, b.send + v, b))
    }

    /// r sends its tick for n, if it may now.
    pub(super) fn send(&self, t: &mut State, r: usize, n: u8) -> Option<()> {
        let now = t.now;
        let rep = &mut t.reps[r];
        let retry = n == rep.tick.n && rep.tick.phase == Phase::Lost;
        let idle = matches!(rep.tick.phase, Phase::Done | Phase::Lost);
        if !idle || self.due(r, n) > now || !(retry || n >= rep.floor) {
            return None;
        }
        rep.tick = Tick {
            n,
            send: now,
            holding: rep.child.map(|c| c.pair),
            phase: Phase::InFlight,
        };
        Some(())
    }

    /// The store executes r's tick in flight.
    pub(super) fn execute(&self, t: &mut State, r: usize) -> Reply {
        let tick = t.reps[r].tick;
        let seal = self.rules != Rules::NoSeal;
        let reply = t.store.tick(r, tick.n, tick.holding, seal);
        t.reps[r].tick.phase = Phase::Executed(reply);
        reply
    }

    /// r is done waiting for its tick: the loop reads the clock for the
    /// next one.
    pub(super) fn done_waiting(&self, t: &mut State, r: usize, phase: Phase) {
        let now = t.now;
        let rep = &mut t.reps[r];
        rep.tick.phase = phase;
        let n = rep.tick.n;
        rep.floor = if rep.stale {
            n + 1
        } else {
            (n + 1).max(self.current(r, now))
        };
    }

    /// r gives up on its tick (a fault): in flight, it strays.
    pub(super) fn give_up(&self, t: &mut State, r: usize) -> Option<()> {
        if t.faults >= self.faults {
            return None;
        }
        t.faults += 1;
        let tick = t.reps[r].tick;
        if tick.phase == Phase::InFlight {
            stray(&mut t.reps[r], tick)?;
        }
        self.done_waiting(t, r, Phase::Lost);
        Some(())
    }

    /// r receives its tick's reply and acts on it; returns what it did, in
    /// words.
    pub(super) fn receive(&self, t: &mut State, r: usize, reply: Reply, describe: bool) -> String {
        self.done_waiting(t, r, Phase::Done);
        let Reply::Ok { pair, settled } = reply else {
            return say!(describe, ": refused (late)");
        };
        let v = self.v();
        let now = t.now;
        let rep = &mut t.reps[r];
        let tick = rep.tick;
        let prev_recv = rep.basis.filter(|b| b.n + 1 == tick.n).map(|b| b.recv);
        rep.basis = Some(Basis {
            n: tick.n,
            send: tick.send,
            recv: now,
            pair,
            prev_recv,
        });
        let Some(c) = &mut rep.child else {
            return say!(describe, ": pair {}", pair_name(pair));
        };
        if Some(c.pair) == pair {
            let extends = settled
                && match self.extension {
                    Extension::AsSpecified => true,
                    Extension::UnlessStopping => !c.stopping,
                    Extension::Contiguous => c.vouched + 1 == tick.n,
                };
            if extends {
                c.deadline = c.deadline.max(tick.send + v);
                if self.extension == Extension::Contiguous {
                    c.vouched = tick.n;
                }
                return say!(
                    describe,
                    ": pair {} unchanged, deadline {}",
                    pair_name(pair),
                    c.deadline
                );
            }
            return say!(
                describe,
                ": pair {} unchanged, not extended (deadline {})",
                pair_name(pair),
                c.deadline
            );
        }
        c.stopping = true;
        c.changed |= 1 << tick.n;
        t.stopped |= self.goal == Goal::AllAliveAfterStop;
        if self.rules == Rules::ExtendOnChange {
            c.deadline = c.deadline.max(tick.send + v);
        }
        say!(
            describe,
            ": pair {} changed, stops its child {} (deadline {})",
            pair_name(pair),
            pair_name(Some(c.pair)),
            c.deadline
        )
    }
}

/// Puts `tick` among r's strays; None when there is no room.
pub(super) fn stray(rep: &mut Replica, tick: Tick) -> Option<()> {
    let slot = rep.strays.iter_mut().find(|s| s.is_none())?;
    *slot = Some(Stray {
        n: tick.n,
        holding: tick.holding,
    });
    Some(())
}

impl State {
    /// Wipes what no later step can observe (see `mod.rs`).
    pub(super) fn tidy(&mut self, m: &Model) {
        let (v, d) = (m.v(), m.drift);
        let seal = m.rules != Rules::NoSeal;
        let now = self.now;
        for r in 0..m.replicas {
            let store = &self.store;
            let rep = &mut self.reps[r];
            let tick = &mut rep.tick;
            match tick.phase {
                Phase::Done | Phase::Lost => {
                    tick.send = 0;
                    tick.holding = None;
                }
                Phase::Executed(_) => tick.holding = None,
                Phase::InFlight => {}
            }
            if let Some(b) = &mut rep.basis {
                if b.pair.is_some()
                    && (now + m.kill_after >= b.send + v
                        || (m.rules != Rules::LatestAnswered && b.n != tick.n))
                {
                    b.pair = None;
                }
                if b.pair.is_none() {
                    b.send = 0;
                    b.prev_recv = None;
                }
                let next_needs_recv =
                    b.n == tick.n || (b.n + 1 == tick.n && tick.phase != Phase::Done);
                if now >= b.recv + v + d {
                    b.recv = 0;
                }
                if let Some(p) = &mut b.prev_recv
                    && now >= *p + v + d
                {
                    *p = 0;
                }
                if b.pair.is_none() && !next_needs_recv {
                    rep.basis = None;
                }
            }
            for st in &mut rep.strays {
                if seal && st.is_some_and(|st| st.n < store.last) {
                    *st = None;
                }
            }
            rep.strays.sort_by_key(|s| (s.is_none(), *s));
            for mm in 1..=m.ticks {
                let bit = 1u8 << mm;
                let useless = store.transition[mm as usize] & 1 << r != 0
                    || (seal && store.who[mm as usize - 1][r] == 0);
                if rep.confirms & bit != 0 && useless {
                    rep.confirms &= !bit;
                }
            }
        }
    }
}
