//! Conformance of the locks on one master: the exclusive lock, shared
//! places with the waiting writer's mark, the semaphore, and the fencing
//! counter, walked in `yaraus_models::rwlock_model` beside one real
//! `redis-server`.
//!
//! # The tie
//!
//! A client's `Apply` event is the script the code runs for its request
//! (the builders of `yaraus::lock::script`, with the arguments `kind.rs`
//! gives them on one master): an acquisition is `acquire.lua` in `incr`
//! mode for a writer (with its waiting mark), `shared_acquire.lua` for a
//! reader, `semaphore_acquire.lua` for a semaphore's member; an extension
//! is `extend.lua` (no healing: one master) or `semaphore_extend.lua`
//! (`shared` for a reader); a release is `release.lua` or
//! `semaphore_release.lua`. Every attempt has a token of its own, as in
//! the code; a writer keeps one mark for the run (the model's one entry
//! per client; its marks are gone whenever it takes the lock). Sending,
//! reading a reply and a command's end run no script: after them the key
//! must be as it was. The answers compared are the model's words (taken
//! with which fencing token; refused by whom, for how many ticks, beside
//! how many holders; extended or not, as the code counts a reply; freed or
//! not); the keys are read back with `inspect.lua` and projected onto the
//! model's key (the exclusive holder and its ticks left, each client's
//! live place or mark and its ticks left), the fencing counter (the model
//! counts one per place taken, from the value `setup` writes: a lock used
//! before), and nothing else on the server. A counter that is missing
//! starts from the clock (counter.lua), which this model does not know.
//!
//! # Time
//!
//! The scripts compare expiries with the server's clock (`TIME`, `PX`,
//! scores in ms). The model's tick is [`TICK_MS`] of server time, and time
//! passes the other way round: a `Tick` moves every time stored on the
//! server (the key's expiry and every score of its sorted set) one tick
//! earlier, as if the clock had moved on, and leaves the removal of what
//! has expired to the scripts. Ttls are the model's in ticks (`TTL`,
//! `MARK_TTL` × [`TICK_MS`]). What a script stored at real time `t` with
//! `k` ticks to live is then expired at a later `now` exactly when the
//! model has ticked `k` times, as long as `now - t` stays below a tick: a
//! minute, against the few milliseconds a walk takes. A time the servers
//! report (a `pttl`, an expiry score) is read in the model's ticks,
//! rounded up. No test waits.
//!
//! Not tied: `undo.lua` and the `propose` fencing (several masters, which
//! this model does not have), and a writer's withdrawal of its mark when
//! it gives up (the model lets marks expire).

mod answer;
mod keys;

use super::{Nodes, Plan, Replay, walk};
use answer::Answer;
use keys::Held;
use std::collections::HashMap;
use yaraus::claim::Channel;
use yaraus::claim::wake::Waking;
use yaraus::lock::Token;
use yaraus::lock::script::{
    Acquire, Extend, FenceMode, Release, SemaphoreAcquire, SemaphoreExtend, SemaphoreRelease,
    SharedAcquire,
};
use yaraus_models::rwlock_model::{CLIENTS, Event, MARK_TTL, Model, Phase, Role, State, TTL};

/// One tick of the model, in ms of server time: far longer than a walk.
const TICK_MS: u64 = 60_000;
/// The fencing counter before the walk: a lock taken before.
const FENCE_START: u64 = 1_000;
const KEY: &str = "conf-lock";
const FENCE_KEY: &str = "yaraus:fence:conf-lock";
/// shared.lua's prefix of a waiting writer's mark.
const WAITING: &str = "writer-waiting:";

/// The tokens of a run and whose each is.
#[derive(Default)]
struct Names {
    /// Every attempt's token, to its client.
    owners: HashMap<String, usize>,
    /// Each client's latest token.
    tokens: [String; CLIENTS],
    /// Each writer's waiting mark.
    marks: [String; CLIENTS],
}

impl Names {
    /// The client and kind (mark or not) of a member of the sorted set.
    fn member(&self, member: &str) -> Option<(usize, bool)> {
        if let Some(c) = self.marks.iter().position(|m| m == member) {
            return Some((c, true));
        }
        self.owners.get(member).map(|&c| (c, false))
    }
}

struct Locks {
    model: Model,
    label: &'static str,
    names: Names,
    channel: Channel,
}

impl Locks {
    fn new(label: &'static str, mut model: Model) -> Locks {
        model.count_fence = true;
        Locks {
            model,
            label,
            names: Names::default(),
            channel: Channel::new("conf", KEY, false).expect("wake channel"),
        }
    }

    /// A new attempt of client `c`: its own token.
    fn acquire(&mut self, c: usize) -> redis::ScriptInvocation<'static> {
        let token = Token::generate().expect("token").as_str().to_string();
        self.names.owners.insert(token.clone(), c);
        self.names.tokens[c] = token;
        let (token, ttl_ms) = (self.names.tokens[c].as_str(), ticks_ms(TTL));
        let (key, fence_key) = (KEY, FENCE_KEY);
        match self.model.roles[c] {
            Role::Writer => Acquire {
                key,
                fence_key,
                token,
                ttl_ms,
                fence: FenceMode::Increment,
                mark: Some((self.names.marks[c].as_str(), ticks_ms(MARK_TTL))),
                queued: None,
            }
            .invocation(),
            Role::Reader => SharedAcquire {
                key,
                fence_key,
                token,
                ttl_ms,
            }
            .invocation(),
            Role::Member => SemaphoreAcquire {
                key,
                fence_key,
                token,
                ttl_ms,
                limit: u32::from(self.model.limit),
                queued: None,
            }
            .invocation(),
        }
    }

    fn extend(&self, c: usize) -> redis::ScriptInvocation<'static> {
        let (key, token, ttl_ms) = (KEY, self.names.tokens[c].as_str(), ticks_ms(TTL));
        match self.model.roles[c] {
            Role::Writer => Extend {
                key,
                token,
                ttl_ms,
                heal: false,
            }
            .invocation(),
            role => SemaphoreExtend {
                key,
                token,
                ttl_ms,
                shared: role == Role::Reader,
            }
            .invocation(),
        }
    }

    fn release(&self, c: usize) -> redis::ScriptInvocation<'static> {
        let token = self.names.tokens[c].as_str();
        let waking = Waking {
            channel: &self.channel,
            queue: None,
            waker: "",
        };
        match self.model.roles[c] {
            Role::Writer => Release {
                key: KEY,
                fence_key: FENCE_KEY,
                token,
                waking,
            }
            .invocation(),
            _ => SemaphoreRelease {
                key: KEY,
                token,
                waking,
            }
            .invocation(),
        }
    }
}

/// `ticks` of the model as a ttl argument.
fn ticks_ms(ticks: u8) -> u64 {
    u64::from(ticks) * TICK_MS
}

impl Replay for Locks {
    type Model = Model;
    type Answer = Answer;
    type Projection = Held;

    fn name(&self) -> String {
        format!("locks ({})", self.label)
    }

    fn model(&self) -> &Model {
        &self.model
    }

    fn nodes(&self) -> usize {
        1
    }

    fn setup(&mut self, nodes: &mut Nodes, _initial: &State) {
        self.names = Names::default();
        for mark in &mut self.names.marks {
            *mark = format!("{WAITING}{}", Token::generate().expect("token").as_str());
        }
        let _: () = redis::cmd("SET")
            .arg(FENCE_KEY)
            .arg(FENCE_START)
            .query(nodes.conn(0))
            .expect("SET the fencing counter");
    }

    fn expected(&self, before: &State, e: Event, after: &State) -> Option<Answer> {
        match e {
            Event::Apply(c) => Some(answer::expected(&self.model, before, c as usize, after)),
            _ => None,
        }
    }

    fn perform(&mut self, nodes: &mut Nodes, before: &State, e: Event) -> Option<Answer> {
        let c = match e {
            Event::Tick => {
                keys::tick(nodes.conn(0));
                return None;
            }
            Event::Apply(c) => c as usize,
            Event::Send(_) | Event::Reply(_) | Event::Finish(_) => return None,
        };
        let phase = before.clients[c];
        let invocation = match phase {
            Phase::Acquiring { .. } => self.acquire(c),
            Phase::Extending { .. } => self.extend(c),
            Phase::Releasing => self.release(c),
            _ => unreachable!("the model applies no request of c{c} in {phase:?}"),
        };
        let reply = invocation.invoke::<redis::Value>(nodes.conn(0));
        Some(match phase {
            Phase::Acquiring { .. } => answer::acquire(reply, &self.names),
            Phase::Extending { .. } => answer::extend(reply),
            _ => answer::release(reply),
        })
    }

    fn project(&self, s: &State) -> Held {
        keys::project(s)
    }

    fn observe(&mut self, nodes: &mut Nodes) -> Held {
        keys::observe(nodes.conn(0), &self.names)
    }
}

/// Every state within 5 steps, and walks long enough for holders to
/// extend, lose and retake the lock (CONFORMANCE_WALKS for more).
const PLAN: Plan = Plan {
    depth: 5,
    transitions: 5,
    walks: 20,
    steps: 60,
};

fn conform(label: &'static str, model: Model) {
    let compared = walk(&mut Locks::new(label, model), PLAN);
    eprintln!("conformance locks ({label}): {compared} steps compared");
    assert!(compared > 0, "the walk compared no step");
}

use Role::{Reader, Writer};

#[test]
fn conformance_locks_two_readers_and_a_writer() {
    conform("2 readers, 1 writer", Model::new([Reader, Reader, Writer]));
}

#[test]
fn conformance_locks_a_reader_and_two_writers() {
    conform("1 reader, 2 writers", Model::new([Reader, Writer, Writer]));
}

#[test]
fn conformance_locks_semaphore() {
    conform("semaphore, limit 2", Model::semaphore(2));
}
