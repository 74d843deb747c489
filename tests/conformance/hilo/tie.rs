//! The tie itself: which script each model event runs, with which
//! arguments, and what the model says it answers.

use super::keys::{
    Answer, Sent, ShardKeys, answer, fence_text, id, observe_shard, open_windows, project_shard,
    text_of, value,
};
use crate::conformance::{Nodes, Replay};
use std::collections::BTreeSet;
use yaraus::hilo::HiloKeys;
use yaraus::hilo::script::{Create, Fence, Raise, Reserve};
use yaraus_models::explorer::System;
use yaraus_models::hilo_model::model::{Event, Model, Req, Rules, Script, Shard, State, Watch};

type Invocation = redis::ScriptInvocation<'static>;

/// The model's hilo agent runs beside one `redis-server` per shard.
pub struct Hilo {
    model: Model,
    keys: HiloKeys,
    /// The kinds of answer the servers gave, and "restart" once a shard
    /// restarted: what the walk exercised.
    pub seen: BTreeSet<String>,
}

impl Hilo {
    pub fn new(model: Model) -> Hilo {
        let keys = HiloKeys::new("conformance", "orders").expect("a valid sequence name");
        Hilo {
            model,
            keys,
            seen: BTreeSet::new(),
        }
    }

    /// The fence run `r` sends (its token is r + 1), as the agent builds
    /// it: the lock's 20-digit fencing token, ':', the run's nonce.
    fn fence(&self, r: usize) -> String {
        fence_text(r as u8 + 1)
    }

    fn windows_watched(&self) -> bool {
        self.model.watch == Watch::Ids
    }
}

impl Replay for Hilo {
    type Model = Model;
    type Answer = Answer;
    type Projection = Vec<ShardKeys>;

    fn name(&self) -> String {
        format!("hilo ({})", self.model.rules())
    }

    fn model(&self) -> &Model {
        &self.model
    }

    fn nodes(&self) -> usize {
        self.model.shards
    }

    /// The model starts with every shard empty, as the servers are.
    fn setup(&mut self, _nodes: &mut Nodes, _initial: &State) {}

    fn expected(&self, before: &State, e: Event, after: &State) -> Option<Answer> {
        match e {
            Event::Execute { run, shard, .. } => {
                let sh = shard as usize;
                let (answer, written) = self.model_script(before, run as usize, sh);
                // The model's step is its script: the shard it left is the
                // one the script wrote.
                assert_eq!(written, after.shards[sh], "the model's step is its script");
                Some(answer)
            }
            Event::Reserve(sh) => {
                let mut shard = before.shards[sh as usize];
                let handed = shard.reserve()?;
                Some(Answer::Reserved {
                    first: id(handed),
                    next: id(handed + 1),
                })
            }
            Event::Start(_) | Event::Plan { .. } | Event::Restart(_) => None,
        }
    }

    fn perform(&mut self, nodes: &mut Nodes, before: &State, e: Event) -> Option<Answer> {
        let (sh, sent, invocation) = match e {
            Event::Execute { run, shard, .. } => {
                let (r, sh) = (run as usize, shard as usize);
                let (sent, invocation) = self.invocation(before, r, sh);
                (sh, sent, invocation)
            }
            Event::Reserve(sh) => {
                if open_windows(&before.shards[sh as usize], self.model.size) > 1 {
                    self.seen
                        .insert("Reserve Reserved, two windows open".to_string());
                }
                let keys = &self.keys;
                let reserve = Reserve { keys, batch: 1 };
                (sh as usize, Sent::Reserve, reserve.invocation())
            }
            Event::Restart(sh) => {
                // A shard restarting empty: everything it held is gone.
                let conn = nodes.conn(sh as usize);
                let _: () = redis::cmd("FLUSHALL").query(conn).expect("FLUSHALL");
                self.seen.insert("restart".to_string());
                return None;
            }
            Event::Start(_) | Event::Plan { .. } => return None,
        };
        let reply = invocation
            .invoke::<redis::Value>(nodes.conn(sh))
            .unwrap_or_else(|e| panic!("{sent:?} failed on shard {sh}: {e}"));
        let answer = answer(sent, &reply, self.windows_watched());
        self.seen.insert(format!("{sent:?} {}", answer.kind()));
        Some(answer)
    }

    fn project(&self, s: &State) -> Self::Projection {
        let watched = self.windows_watched();
        s.shards[..self.model.shards]
            .iter()
            .map(|shard| project_shard(shard, self.model.size, watched))
            .collect()
    }

    fn observe(&mut self, nodes: &mut Nodes) -> Self::Projection {
        let watched = self.windows_watched();
        (0..self.model.shards)
            .map(|sh| observe_shard(nodes.conn(sh), &self.keys, watched))
            .collect()
    }
}

impl Hilo {
    /// The request run `r` has in flight to shard `sh`.
    fn request(before: &State, r: usize, sh: usize) -> Script {
        match before.runs[r].reqs[sh] {
            Req::Sent(script) => script,
            other => panic!("the model executes a request that is not in flight: {other:?}"),
        }
    }

    /// The invocation the agent makes for run `r`'s request to shard `sh`:
    /// its fence, the hwm it planned, the window size, its window there.
    fn invocation(&self, before: &State, r: usize, sh: usize) -> (Sent, Invocation) {
        let run = &before.runs[r];
        let fence = &self.fence(r);
        let keys = &self.keys;
        match Self::request(before, r, sh) {
            Script::Fence => (Sent::Fence, Fence { keys, fence }.invocation()),
            Script::Raise => {
                let raise = Raise {
                    keys,
                    fence,
                    hwm: id(run.new),
                    window_size: u64::from(self.model.size),
                };
                (Sent::Raise, raise.invocation())
            }
            Script::Create => {
                let create = Create {
                    keys,
                    fence,
                    start: id(run.window[sh]),
                    end: id(run.window[sh] + self.model.size),
                };
                (Sent::Create, create.invocation())
            }
        }
    }

    /// The model's own script (`Shard::fence`, `raise`, `create`) for run
    /// `r`'s request to shard `sh`: its answer in the script's terms, and
    /// the shard it leaves.
    fn model_script(&self, before: &State, r: usize, sh: usize) -> (Answer, Shard) {
        let m = &self.model;
        let token = r as u8 + 1;
        let run = &before.runs[r];
        let held = before.shards[sh];
        let mut shard = held;
        let answer = match Self::request(before, r, sh) {
            Script::Fence => match shard.fence(token, m.rules != Rules::FenceUnordered) {
                Some(hwm) => Answer::Fenced {
                    hwm: value(hwm),
                    open: self.windows_watched().then(|| open_windows(&held, m.size)),
                },
                None => Answer::FenceHeld(fence_text(held.fence)),
            },
            Script::Raise => {
                if shard.raise(token, run.new, m.rules != Rules::RaiseUnfenced) {
                    Answer::Raised { hwm: id(shard.hwm) }
                } else {
                    Answer::NotOurs(text_of(held.fence))
                }
            }
            Script::Create => {
                let watched = self.windows_watched();
                if shard.create(m.rules, token, run.window[sh], m.size, watched) {
                    Answer::Created
                } else if held.fence != token {
                    // The model refuses without saying which check did;
                    // the script checks the fence first.
                    Answer::NotOurs(text_of(held.fence))
                } else {
                    Answer::BelowHwm(value(held.hwm))
                }
            }
        };
        (answer, shard)
    }
}
