//! The worker-id pool's model (`tests/pool_model/`) replayed against the
//! shipped scripts of `src/lease/` on a real `redis-server`.
//!
//! # The tie
//!
//! The pool is made by the code's own `yaraus::lease::init` (which builds
//! it and publishes it with `finalize_init.lua`). Each model event is the
//! invocation the code makes, through the library's builders
//! (`yaraus::lease::script`): `Acquire` with the client's name (`''`
//! until an acquire gave it one), `Renew` with the id it holds and the
//! stepped-back flag (its horizon below its last), `Release` in the form
//! the event names (`ended` with the code's release horizon, the greater of
//! the record its lease found and its wall clock; `unused` with that record
//! as the acquire returned it; nothing; a leftover's `live_only` with
//! `unused`), `Init` the whole of `yaraus::lease::init`, `Decide` alone
//! `Resize`, and `Shrink` the removal that init would then make (`Shrink`
//! with the range it decided, refused once another init decided since). A model
//! horizon `h` is the Unix instant `BASE_MS + h × UNIT_MS`, and client `c`
//! sends the offset `c + 1` ms (error 0), so that each record says who
//! wrote it.
//!
//! After each step the keys are read back: the sorted set (which ids are
//! present, the order of the free ones), the live ids through the listing
//! script (`Leased`), the clients hash, the clock hash, and the stats
//! through `Stats` (its counters, `min` and `max`, its free and using
//! counts, the records of the using ids); each projected as the model's
//! state.
//!
//! # Time
//!
//! The scripts time leases by the server's clock; the model knows a lease
//! only as lasting or lapsing (the holder pausing past it). So a lasting
//! lease is sent for `LASTING_MS` (ten minutes: no run comes near it), a
//! lapsing one for 0 ms: its expiry is the server's millisecond of the
//! step, which every later `TIME` is at or past, so the next script finds
//! it run out, as the model does, with no wait. Free ids are ordered by
//! when they became free; after each step that writes a score (acquire,
//! renew, release) the test awaits the server's clock entering its next
//! millisecond, so that no two steps' scores tie (a tie would order by
//! name, not by step).

mod read;

use super::{Nodes, Plan, Replay, walk};
use read::{Projection, Read};
use yaraus::lease::clock_guard::{ClockRecord, Offset};
use yaraus::lease::script::{Acquire, Release, Renew, Resize, Shrink};
use yaraus::lease::{InitOutcome, PoolKeys, WorkerId};
use yaraus::store::{Store, Target};
use yaraus::timing::Timeouts;
use yaraus_models::pool_model::{
    Bounds, CLIENTS, Event, How, InitReply, Model, Phase, Reply, State, System, Who,
};

/// A lease that outlives every run.
const LASTING_MS: u64 = 600_000;
/// Where the model's horizons sit on the wall clock, and their unit.
const BASE_MS: i64 = 1_700_000_000_000;
const UNIT_MS: i64 = 1_000;

fn ttl(lasts: bool) -> u64 {
    if lasts { LASTING_MS } else { 0 }
}

fn wall(h: u8) -> i64 {
    BASE_MS + i64::from(h) * UNIT_MS
}

fn offset(c: u8) -> Offset {
    Offset {
        ms: i64::from(c) + 1,
        error_ms: 0,
    }
}

struct Pool {
    model: Model,
    keys: PoolKeys,
    rt: tokio::runtime::Runtime,
    store: Option<Store>,
    read: Read,
}

impl Pool {
    fn new(bounds: Bounds) -> Pool {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        Pool {
            model: Model { bounds, flaw: None },
            keys: PoolKeys::new("conformance"),
            rt,
            store: None,
            read: Read::default(),
        }
    }

    /// `yaraus init` to `1..=to`, as the command runs it.
    fn init(&mut self, to: u8, force: bool) -> yaraus::error::Result<InitOutcome> {
        let store = self.store.as_mut().expect("connected in setup");
        let range = (1, u64::from(to));
        self.rt
            .block_on(yaraus::lease::init(store, &self.keys, range, force))
    }
}

/// The id `c` holds (or held) in `s`.
fn held(s: &State, c: u8) -> u8 {
    match s.clients[c as usize].phase {
        Phase::Holding { id, .. } => id,
        Phase::Idle => panic!("c{c} holds nothing: the model offers no such step"),
    }
}

impl Replay for Pool {
    type Model = Model;
    type Answer = Reply;
    type Projection = Projection;

    fn name(&self) -> String {
        format!("pool ({})", self.model.rules())
    }

    fn model(&self) -> &Model {
        &self.model
    }

    fn nodes(&self) -> usize {
        1
    }

    fn setup(&mut self, nodes: &mut Nodes, initial: &State) {
        if self.store.is_none() {
            let target = Target::parse(&nodes.server(0).url()).unwrap();
            let store = self
                .rt
                .block_on(Store::connect(&target, Timeouts::default()));
            self.store = Some(store.expect("connect"));
        }
        self.read = Read::default();
        let to = initial.range;
        let created = self.init(to, false).expect("init");
        let to = u64::from(to);
        assert_eq!(created, InitOutcome::Created { min: 1, max: to });
    }

    fn expected(&self, before: &State, e: Event, _after: &State) -> Option<Reply> {
        self.model.step(before, e).map(|(_, reply)| reply)
    }

    fn perform(&mut self, nodes: &mut Nodes, before: &State, e: Event) -> Option<Reply> {
        let reply = match e {
            Event::Acquire { c, lasts, horizon } => self.acquire(nodes, c, lasts, horizon),
            Event::Renew { c, lasts, horizon } => {
                let stepped_back = horizon < before.clients[c as usize].last_horizon;
                let id = held(before, c);
                self.renew(nodes, (c, id), lasts, horizon, stepped_back)
            }
            Event::Release { c, how } => self.release(nodes, c, held(before, c), how),
            Event::Init { to, force } => match self.init(to, force) {
                Ok(outcome) => init_reply(outcome),
                Err(yaraus::error::Error::State(msg)) if msg.starts_with("refusing to change") => {
                    Reply::Init(InitReply::Refused)
                }
                Err(e) => Reply::Other(e.to_string()),
            },
            Event::Decide { to, force } => self.decide(nodes, to, force),
            Event::Shrink => {
                let (lo, hi) = before.pending.expect("a shrink decided");
                let invocation = Shrink {
                    keys: &self.keys,
                    decided: (1, u64::from(lo) - 1),
                    ids: u64::from(lo)..=u64::from(hi),
                }
                .invocation();
                match invocation.invoke::<i64>(nodes.conn(0)) {
                    Ok(-1) => Reply::Overtaken,
                    Ok(n) => {
                        u8::try_from(n).map_or_else(|_| Reply::Other(n.to_string()), Reply::Shrunk)
                    }
                    Err(e) => Reply::Other(e.to_string()),
                }
            }
        };
        if matches!(
            e,
            Event::Acquire { .. } | Event::Renew { .. } | Event::Release { .. }
        ) {
            read::next_millisecond(nodes.conn(0));
        }
        Some(reply)
    }

    fn project(&self, s: &State) -> Projection {
        Projection::of(s)
    }

    fn observe(&mut self, nodes: &mut Nodes) -> Projection {
        self.read.observe(nodes.conn(0), &self.keys)
    }
}

impl Pool {
    fn acquire(&mut self, nodes: &mut Nodes, c: u8, lasts: bool, horizon: u8) -> Reply {
        let name = self.read.name(c).unwrap_or_default();
        let invocation = Acquire {
            keys: &self.keys,
            client: &name,
            host: "conformance",
            ttl_ms: ttl(lasts),
            horizon: wall(horizon),
            offset: offset(c),
            queued: None,
        }
        .invocation();
        let reply = invocation.invoke::<(i64, String, String, i64, i64, String)>(nodes.conn(0));
        let (ok, client, member, expiry_ms, now_ms, record) = match reply {
            Ok(reply) => reply,
            Err(e) => return Reply::Other(e.to_string()),
        };
        let client = self.read.given(c, &client);
        if ok == 0 {
            return Reply::Exhausted { client };
        }
        let Some(lasts) = read::lasts(expiry_ms - now_ms) else {
            return Reply::Other(format!("a lease of {} ms", expiry_ms - now_ms));
        };
        let found = (!record.is_empty()).then(|| read::record(&record));
        self.read.found[c as usize] = record;
        Reply::Leased {
            client,
            id: read::id(&member),
            lasts,
            found,
        }
    }

    fn renew(
        &mut self,
        nodes: &mut Nodes,
        (c, id): (u8, u8),
        lasts: bool,
        horizon: u8,
        stepped_back: bool,
    ) -> Reply {
        let name = self.read.name(c).expect("a holder has a name");
        let invocation = Renew {
            keys: &self.keys,
            client: &name,
            id: WorkerId(u64::from(id)),
            ttl_ms: ttl(lasts),
            horizon: wall(horizon),
            offset: offset(c),
            stepped_back,
        }
        .invocation();
        match invocation.invoke::<(i64, redis::Value, i64)>(nodes.conn(0)) {
            Ok((1, redis::Value::Int(expiry_ms), now_ms)) => {
                match read::lasts(expiry_ms - now_ms) {
                    Some(lasts) => Reply::Extended { lasts },
                    None => Reply::Other(format!("renewed for {} ms", expiry_ms - now_ms)),
                }
            }
            Ok((0, owner, _)) => {
                let owner: String = redis::from_redis_value(owner).unwrap_or_default();
                let owner = (!owner.is_empty()).then(|| self.read.who(&owner));
                Reply::Refused { owner }
            }
            Ok(other) => Reply::Other(format!("{other:?}")),
            Err(e) => Reply::Other(e.to_string()),
        }
    }

    fn release(&mut self, nodes: &mut Nodes, c: u8, id: u8, how: How) -> Reply {
        let name = self.read.name(c).expect("a holder has a name");
        let found = self.read.found[c as usize].clone();
        // `Lease::release_horizon`: never below what the lease found.
        let ended = |now: u8| {
            let now = wall(now);
            ClockRecord::parse(&found).map_or(now, |r| r.horizon.max(now))
        };
        let horizon;
        let (clock, live_only) = match how {
            How::Ended(now) => {
                horizon = ended(now).to_string();
                (("ended", horizon.as_str()), false)
            }
            How::Unused => (("unused", found.as_str()), false),
            How::Untouched => (("", ""), false),
            How::Leftover => (("unused", found.as_str()), true),
        };
        let release = Release {
            keys: &self.keys,
            client: &name,
            id: WorkerId(u64::from(id)),
            live_only,
            clock,
            waker: "",
        };
        let invocation = release.invocation(self.keys.wake.queue());
        match invocation.invoke::<i64>(nodes.conn(0)) {
            Ok(n) => Reply::Released(n == 1),
            Err(e) => Reply::Other(e.to_string()),
        }
    }

    fn decide(&mut self, nodes: &mut Nodes, to: u8, force: bool) -> Reply {
        let invocation = Resize {
            keys: &self.keys,
            min: 1,
            max: u64::from(to),
            force,
        }
        .invocation();
        let reply = match invocation.invoke::<Vec<redis::Value>>(nodes.conn(0)) {
            Ok(reply) => reply,
            Err(e) => return Reply::Other(e.to_string()),
        };
        let recorded = matches!(reply.first(), Some(redis::Value::Int(1)));
        let texts: Vec<String> = reply[1..]
            .iter()
            .map(|v| redis::from_redis_value(v.clone()).unwrap_or_default())
            .collect();
        let mut leased: Vec<(u8, Who)> = texts
            .chunks(2)
            .map(|pair| (read::id(&pair[0]), self.read.who(&pair[1])))
            .collect();
        leased.sort_by_key(|(id, _)| *id);
        Reply::Decided { recorded, leased }
    }
}

fn init_reply(outcome: InitOutcome) -> Reply {
    let small = |n: u64| u8::try_from(n).unwrap_or(u8::MAX);
    Reply::Init(match outcome {
        InitOutcome::Already { min: 1, max } => InitReply::Already { to: small(max) },
        InitOutcome::Resized {
            from,
            to,
            added,
            removed,
        } => InitReply::Resized {
            from: (small(from.0), small(from.1)),
            to: small(to.1),
            added: small(added),
            removed: small(removed),
        },
        other => return Reply::Other(format!("{other:?}")),
    })
}

/// Walks `bounds` under `plan`.
fn conform(bounds: Bounds, plan: Plan) {
    let compared = walk(&mut Pool::new(bounds), plan);
    eprintln!("conformance pool: {compared} steps compared");
    assert!(compared > 0);
}

/// One id to start with, so that a holder pausing hands its id to the
/// other client at once: every run of two steps, then random runs, where
/// the first holder renews or releases the id it lost.
#[test]
fn conformance_pool_one_id() {
    let bounds = Bounds {
        clients: 2,
        ids: 1,
        steps: 10,
    };
    let plan = Plan {
        depth: 2,
        transitions: 2,
        walks: 60,
        steps: 10,
    };
    conform(bounds, plan);
}

/// Three clients on two ids: exhaustion, hand-overs, resizes, in longer
/// random runs.
#[test]
fn conformance_pool_three_clients() {
    let bounds = Bounds {
        clients: CLIENTS,
        ids: 2,
        steps: 14,
    };
    let plan = Plan {
        depth: 2,
        transitions: 2,
        walks: 30,
        steps: 14,
    };
    conform(bounds, plan);
}
