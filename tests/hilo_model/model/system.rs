//! The model as the explorer sees it: its initial state, the invariant
//! checked in every state, what it counts, the goals, the symmetry
//! reduction, and how a state is shown after each step of a narrated run.
//!
//! The invariant is a state property over the ghost history: since the
//! ghost keeps every window ever created, "no two windows ever created
//! overlap" holds in a state exactly when it held at every create so far.

use super::words::id_list;
use super::*;
use crate::hilo_model::explorer::{System, Violation};

impl System for Model {
    type State = State;
    type Event = Event;
    type Violation = Violation;

    fn rules(&self) -> String {
        format!(
            "{:?}, {} shard(s), {} run(s), {}, W={}, {:?} window(s) per run{}{}",
            self.rules,
            self.shards,
            self.runs,
            self.outages(),
            self.size,
            self.spread,
            if self.losses {
                ", replies may be lost"
            } else {
                ""
            },
            if self.watch == Watch::Ids {
                ", reservers"
            } else {
                ""
            }
        )
    }

    fn initial(&self) -> State {
        assert!((1..=MAX_SHARDS).contains(&self.shards) && (1..=MAX_RUNS).contains(&self.runs));
        assert!(self.size >= 1);
        State {
            shards: [Shard::EMPTY; MAX_SHARDS],
            runs: [Run::WAITING; MAX_RUNS],
            ghost: Ghost {
                created: 0,
                twice: 0,
                windows: 0,
                highest: 0,
                restarted: 0,
                handed: 0,
                handed_twice: 0,
            },
            restarts: 0,
        }
    }

    fn candidates(&self, s: &State, out: &mut Vec<Event>) {
        self.events(s, out);
    }

    fn apply(&self, s: &State, e: Event, log: Option<&mut String>) -> Option<State> {
        self.step(s, e, log)
    }

    /// Shards sorted by everything that is theirs: their keys, each run's
    /// request and window there, their bit of `Ghost::restarted`. The shards start alike and every
    /// event treats them alike (a plan may use any shard, in any order; any
    /// shard may restart), so this is exact.
    fn canon(&self, s: State) -> State {
        if !self.symmetry || self.shards < 2 {
            return s;
        }
        let column = |sh: usize| s.runs.map(|r| (r.reqs[sh], r.window[sh]));
        let restarted = |sh: usize| s.ghost.restarted >> sh & 1;
        let key = |sh: usize| (s.shards[sh], column(sh), restarted(sh));
        let mut order = [0, 1, 2];
        let order = &mut order[..self.shards];
        order.sort_by_key(|&sh| key(sh));
        if order.iter().enumerate().all(|(i, &sh)| i == sh) {
            return s;
        }
        let mut t = s;
        t.ghost.restarted = 0;
        for (to, &from) in order.iter().enumerate() {
            t.shards[to] = s.shards[from];
            t.ghost.restarted |= restarted(from) << to;
            for (tr, sr) in t.runs.iter_mut().zip(&s.runs) {
                tr.reqs[to] = sr.reqs[from];
                tr.window[to] = sr.window[from];
            }
        }
        t
    }

    fn violation(&self, s: &State) -> Option<Violation> {
        let lowest = |mask: u32| (mask != 0).then(|| mask.trailing_zeros() as u8);
        match self.watch {
            Watch::Windows => lowest(s.ghost.twice).map(|id| Violation::Overlap { id }),
            Watch::Ids => lowest(s.ghost.handed_twice).map(|id| Violation::IdTwice { id }),
        }
    }

    fn counted_name(&self) -> &'static str {
        "windows created"
    }

    fn counted(&self, s: &State) -> u32 {
        u32::from(s.ghost.windows)
    }

    fn goal(&self, s: &State) -> bool {
        match self.goal {
            Goal::None => false,
            Goal::Created => s.ghost.windows > 0,
            Goal::EveryRunFailed => {
                s.ghost.windows == 0
                    && s.runs[..self.runs]
                        .iter()
                        .all(|r| r.phase == Phase::Over && !r.in_flight())
            }
        }
    }

    fn limit(&self) -> usize {
        self.limit
    }

    fn start(&self) -> String {
        format!(
            " 0. shards {} empty; runs {} waiting (Rn's token is n); W = {}",
            self.shard_list(|_| true),
            (0..self.runs).map(run_name).collect::<Vec<_>>().join(", "),
            self.size
        )
    }

    fn show(&self, s: &State) -> String {
        let mut parts = Vec::new();
        for (sh, shard) in s.shards[..self.shards].iter().enumerate() {
            let mut words = format!(
                "{} fence {} hwm {}",
                shard_name(sh),
                value_name(shard.fence),
                value_name(shard.hwm)
            );
            if shard.open != 0 {
                words += &format!(" open {}", id_list(shard.open));
            }
            parts.push(words);
        }
        for (r, run) in s.runs[..self.runs].iter().enumerate() {
            if run.phase == Phase::Waiting || (run.phase == Phase::Over && !run.in_flight()) {
                continue;
            }
            let phase = match run.phase {
                Phase::Fencing => format!("fencing (hwm {} so far)", run.global),
                Phase::Raising => format!("raising to {}", run.new),
                Phase::Creating => "creating".to_string(),
                _ => "gave up or done".to_string(),
            };
            let reqs: Vec<String> = (0..self.shards)
                .filter_map(|sh| {
                    let what = match run.reqs[sh] {
                        Req::Idle => return None,
                        Req::Sent(Script::Fence) => "fence sent".to_string(),
                        Req::Sent(Script::Raise) => format!("raise to {} sent", run.new),
                        Req::Sent(Script::Create) => {
                            let a = run.window[sh];
                            format!("create [{a},{}) sent", a + self.size)
                        }
                        Req::Acked(Script::Fence) => "fenced".to_string(),
                        Req::Acked(Script::Raise) => "raised".to_string(),
                        Req::Acked(Script::Create) => "created".to_string(),
                    };
                    Some(format!("{} {what}", shard_name(sh)))
                })
                .collect();
            parts.push(format!("{} {phase}: {}", run_name(r), reqs.join(", ")));
        }
        let g = &s.ghost;
        let mut ghost = format!("windows ever created: {}", self.window_list(g.created));
        if g.twice != 0 {
            ghost += &format!(", ids {} twice", id_list(g.twice));
        }
        if g.handed != 0 {
            ghost += &format!("; ids handed out {}", id_list(g.handed));
        }
        if g.handed_twice != 0 {
            ghost += &format!(", {} twice", id_list(g.handed_twice));
        }
        match self.gate {
            Gate::Budget => {}
            Gate::KeepHighest => ghost += &format!("; highest hwm raised everywhere {}", g.highest),
            Gate::SinceLastRaise => {
                let since = self.shard_list(|sh| g.restarted & 1 << sh != 0);
                ghost += &format!("; restarted since the last raise phase: {{{since}}}");
            }
        }
        parts.push(ghost);
        format!("[{}]", parts.join(" | "))
    }
}
