//! The model as the explorer sees it: its initial state, the safety
//! property checked in every state, the goal, the symmetry reduction, and
//! how a state is shown after each step of a narrated run.
//!
//! The property is a state invariant: any two alive children agree on the
//! replicas count and have different indexes. Checking it in every state
//! also checks it at every start (a start is a step, and the state after
//! it has the new child beside every other alive one).

use super::step::bits;
use super::*;
use crate::index_model::explorer::{System, Violation};

impl System for Model {
    type State = State;
    type Event = Event;
    type Violation = Violation;

    fn rules(&self) -> String {
        let skews = self.skews[..self.replicas]
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(",");
        format!(
            "{:?}/{:?}, {} replicas (skews {skews}), I={} V={} kill_after={} D={}, \
             ticks 1..={}, horizon {}, {} fault(s), {} crash(es){}{}",
            self.extension,
            self.rules,
            self.replicas,
            self.interval,
            self.v(),
            self.kill_after,
            self.drift,
            self.ticks,
            self.horizon,
            self.faults,
            self.crashes,
            if self.child_exits {
                ", children may exit"
            } else {
                ""
            },
            if self.atomic { ", atomic ticks" } else { "" }
        )
    }

    fn initial(&self) -> State {
        assert!(self.replicas <= MAX_R && (self.ticks as usize) <= MAX_N);
        assert!(
            !self.symmetry || self.skews[..self.replicas].is_sorted(),
            "symmetry needs ascending skews"
        );
        assert!(
            !self.atomic || self.child_exits,
            "atomic ticks are sound only when children may exit"
        );
        State {
            now: 0,
            store: Store {
                last: 0,
                count: [0; MAX_N + 1],
                who: [[0; MAX_R]; MAX_N + 1],
                transition: [0; MAX_N + 1],
            },
            reps: [Replica::FRESH; MAX_R],
            faults: 0,
            crashes: 0,
            stopped: false,
        }
    }

    fn candidates(&self, s: &State, out: &mut Vec<Event>) {
        self.events(s, out);
    }

    fn apply(&self, s: &State, e: Event, log: Option<&mut String>) -> Option<State> {
        self.step(s, e, log)
    }

    /// Replicas of equal skew sorted by everything that is theirs: their
    /// record, their column of `who`, their bit of `transition`. Two
    /// replicas with equal keys are interchangeable, so this is exact.
    fn canon(&self, s: State) -> State {
        if !self.symmetry || self.replicas < 2 {
            return s;
        }
        let who = |r: usize| (0..=MAX_N).map(move |n| s.store.who[n][r]);
        let tr = |r: usize| (0..=MAX_N).map(move |n| s.store.transition[n] >> r & 1);
        let cmp = |a: usize, b: usize| {
            self.skews[a]
                .cmp(&self.skews[b])
                .then_with(|| s.reps[a].cmp(&s.reps[b]))
                .then_with(|| who(a).cmp(who(b)))
                .then_with(|| tr(a).cmp(tr(b)))
        };
        // Insertion sort: at most three replicas.
        let mut order = [0, 1, 2];
        let order = &mut order[..self.replicas];
        for i in 1..order.len() {
            let mut j = i;
            while j > 0 && cmp(order[j - 1], order[j]).is_gt() {
                order.swap(j - 1, j);
                j -= 1;
            }
        }
        if order.iter().enumerate().all(|(i, &r)| i == r) {
            return s;
        }
        let mut t = s;
        for (to, &from) in order.iter().enumerate() {
            t.reps[to] = s.reps[from];
            for n in 0..=MAX_N {
                t.store.who[n][to] = s.store.who[n][from];
                let bit = s.store.transition[n] >> from & 1;
                t.store.transition[n] = t.store.transition[n] & !(1 << to) | bit << to;
            }
        }
        t
    }

    fn violation(&self, s: &State) -> Option<Violation> {
        let mut alive = [(
            0,
            Pair {
                index: 0,
                replicas: 0,
            },
        ); MAX_R];
        let mut len = 0;
        for (r, rep) in s.reps[..self.replicas].iter().enumerate() {
            if let Some(c) = rep.child {
                alive[len] = (r, c.pair);
                len += 1;
            }
        }
        let alive = &alive[..len];
        for (i, &(a, pa)) in alive.iter().enumerate() {
            for &(b, pb) in &alive[i + 1..] {
                let (a, b) = (a as u8, b as u8);
                if pa.replicas != pb.replicas {
                    return Some(Violation::Replicas {
                        a,
                        ra: pa.replicas,
                        b,
                        rb: pb.replicas,
                    });
                }
                if pa.index == pb.index {
                    return Some(Violation::Index {
                        a,
                        b,
                        index: pa.index,
                    });
                }
            }
        }
        None
    }

    fn counted_name(&self) -> &'static str {
        "children alive at once"
    }

    fn counted(&self, s: &State) -> u32 {
        s.reps[..self.replicas]
            .iter()
            .filter(|r| r.child.is_some())
            .count() as u32
    }

    fn goal(&self, s: &State) -> bool {
        let all = self.counted(s) as usize == self.replicas;
        match self.goal {
            Goal::None => false,
            Goal::AllAliveAfterStop => {
                all && s.stopped
                    && s.reps[..self.replicas]
                        .iter()
                        .all(|r| r.child.is_some_and(|c| !c.stopping))
            }
        }
    }

    fn limit(&self) -> usize {
        self.limit
    }

    fn start(&self) -> String {
        let due = (0..self.replicas)
            .map(|r| format!("{} ticks n at {}", replica_name(r), self.due(r, 1)))
            .collect::<Vec<_>>()
            .join(" + (n-1)*I, ");
        format!(
            " 0. time 0, nothing ticked; {due} + (n-1)*I; V = {}",
            self.v()
        )
    }

    fn show(&self, s: &State) -> String {
        let st = &s.store;
        let mut parts = vec![format!("t={} last={}", s.now, st.last)];
        for n in 1..=self.ticks as usize {
            if st.count[n] == 0 {
                continue;
            }
            let who = (0..self.replicas)
                .filter(|&r| st.who[n][r] != 0)
                .map(|r| format!("{}:{}", replica_name(r), st.who[n][r]))
                .collect::<Vec<_>>()
                .join(" ");
            let tr = (0..self.replicas)
                .filter(|&r| st.transition[n] & 1 << r != 0)
                .map(replica_name)
                .collect::<Vec<_>>()
                .join(" ");
            parts.push(format!("who{n}={{{who}}} tr{n}={{{tr}}}"));
        }
        for r in 0..self.replicas {
            let rep = &s.reps[r];
            let mut words = vec![replica_name(r)];
            if let Some(c) = rep.child {
                let stop = if c.stopping { " stopping" } else { "" };
                words.push(format!(
                    "child {}<{}{stop}",
                    pair_name(Some(c.pair)),
                    c.deadline
                ));
            }
            match rep.tick.phase {
                Phase::InFlight => words.push(format!("tick {} sent", rep.tick.n)),
                Phase::Executed(_) => words.push(format!("tick {} executed", rep.tick.n)),
                Phase::Lost => words.push(format!("tick {} given up", rep.tick.n)),
                Phase::Done => {}
            }
            for st in rep.strays.iter().flatten() {
                words.push(format!("stray {}", st.n));
            }
            if rep.confirms != 0 {
                words.push(format!("confirm {} in flight", bits(rep.confirms)));
            }
            parts.push(words.join(" "));
        }
        format!("[{}]", parts.join(" | "))
    }
}
