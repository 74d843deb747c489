//! What an agent run does: start (fences sent to every shard), plan its
//! windows once every shard acknowledged its fence (raises sent to every
//! shard), send its creates once every shard acknowledged its raise, give
//! up at the first refusal or lost reply; and what it forgets when it can
//! no longer use it (`Run::tidy`), so that equal futures are equal states.
//!
//! The departures that change the run rather than a script: `NoRaise`
//! (the plan sends the creates at once) and `CreateAfterOwnRaise` (a
//! shard's create is sent when that shard acknowledges its raise).

use super::*;
use crate::hilo_model::explorer::PERMUTATIONS_OF_3;

impl Run {
    /// Started: a fence in flight to every shard.
    pub fn start(&mut self, shards: usize) {
        self.phase = Phase::Fencing;
        self.reqs[..shards].fill(Req::Sent(Script::Fence));
    }

    /// Every shard holds `req`.
    pub fn every(&self, shards: usize, req: Req) -> bool {
        self.reqs[..shards].iter().all(|&q| q == req)
    }

    /// Some request is in flight.
    pub fn in_flight(&self) -> bool {
        self.reqs.iter().any(|q| matches!(q, Req::Sent(_)))
    }

    /// Can plan: fencing, every shard acknowledged.
    pub fn fenced_everywhere(&self, shards: usize) -> bool {
        self.phase == Phase::Fencing && self.every(shards, Req::Acked(Script::Fence))
    }

    /// Plans `k` windows from its global hwm g: window i is
    /// [g + i*W, g + (i+1)*W) on shard `to[i]`; the new hwm is g + k*W.
    /// Sends the raises (or, under `NoRaise`, the creates).
    pub fn plan(&mut self, m: &Model, k: u8, to: [u8; MAX_SHARDS]) {
        let g = self.global;
        self.new = g + k * m.size;
        assert!(
            self.new <= ID_LIMIT,
            "ids beyond {ID_LIMIT}: tighten the bounds"
        );
        for i in 0..k {
            self.window[to[i as usize] as usize] = g + i * m.size;
        }
        self.global = 0;
        if m.rules == Rules::NoRaise {
            self.phase = Phase::Creating;
            self.send_creates(m.shards);
        } else {
            self.phase = Phase::Raising;
            self.reqs[..m.shards].fill(Req::Sent(Script::Raise));
        }
    }

    /// A create in flight to every shard with a window; nothing to the
    /// others.
    fn send_creates(&mut self, shards: usize) {
        for s in 0..shards {
            self.reqs[s] = if self.window[s] == NO_WINDOW {
                Req::Idle
            } else {
                Req::Sent(Script::Create)
            };
        }
    }

    /// Shard `s` accepted its `script` (`hwm`: the fence's reply), and the
    /// run received the OK.
    pub fn acked(&mut self, m: &Model, s: usize, script: Script, hwm: u8) {
        match script {
            Script::Fence => {
                self.reqs[s] = Req::Acked(Script::Fence);
                self.global = self.global.max(hwm);
            }
            Script::Raise if m.rules == Rules::CreateAfterOwnRaise => {
                self.reqs[s] = if self.window[s] == NO_WINDOW {
                    Req::Idle
                } else {
                    Req::Sent(Script::Create)
                };
            }
            Script::Raise => {
                self.reqs[s] = Req::Acked(Script::Raise);
                if self.every(m.shards, Req::Acked(Script::Raise)) {
                    self.phase = Phase::Creating;
                    self.send_creates(m.shards);
                }
            }
            Script::Create => self.reqs[s] = Req::Idle,
        }
    }

    /// Forgets what no later step can use: a run past its fences with
    /// nothing in flight is over; an over run keeps only its requests in
    /// flight and what they carry (the new hwm of a raise, the window of
    /// a create).
    pub fn tidy(&mut self) {
        if matches!(self.phase, Phase::Raising | Phase::Creating) && !self.in_flight() {
            self.phase = Phase::Over;
        }
        if self.phase != Phase::Over {
            return;
        }
        self.global = 0;
        for q in &mut self.reqs {
            if let Req::Acked(_) = q {
                *q = Req::Idle;
            }
        }
        if !self.reqs.contains(&Req::Sent(Script::Raise)) {
            self.new = 0;
        }
        for (w, q) in self.window.iter_mut().zip(self.reqs) {
            if q != Req::Sent(Script::Create) {
                *w = NO_WINDOW;
            }
        }
    }
}

/// Orders of the shards, for one window per shard: window i on shard
/// `perm[i]`.
const PERMUTATIONS: [[u8; MAX_SHARDS]; 6] = PERMUTATIONS_OF_3;

impl Model {
    /// The plans a run may choose: (k, shard of window i).
    pub fn plans(&self) -> impl Iterator<Item = (u8, [u8; MAX_SHARDS])> + '_ {
        let n = self.shards;
        let one = matches!(self.spread, Spread::One | Spread::Either) || n == 1;
        let per_shard = matches!(self.spread, Spread::PerShard | Spread::Either) && n > 1;
        let singles = (0..n as u8)
            .filter(move |_| one)
            .map(|s| (1, [s, NO_WINDOW, NO_WINDOW]));
        let spread = PERMUTATIONS
            .into_iter()
            .filter(move |p| {
                per_shard && (0..MAX_SHARDS).all(|i| (p[i] as usize) < n || p[i] as usize == i)
            })
            .map(move |p| (n as u8, p));
        singles.chain(spread)
    }
}
