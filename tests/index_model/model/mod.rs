//! The state of the `yaraus index` model: the shared store (one Redis, its
//! scripts atomic), the replicas (their child, their latest tick, what they
//! know of earlier ticks, their requests in flight), and the bounds and
//! rules of one exploration ([`Model`]). `step.rs` holds the events and
//! what each does, `replica.rs` a replica's conditions and actions,
//! `system.rs` the model as the explorer sees it.
//!
//! # Why the state looks like this
//!
//! Every field is something a later step can observe; what no step can
//! observe any more is wiped by `State::tidy` (`replica.rs`), so that equal
//! futures are equal states: a time that has "passed" (every condition on
//! it holds from now on) becomes 0, a claim past its validity loses its
//! pair, a stray tick that the seal will refuse is dropped, a confirm that
//! can no longer add anything is dropped. Times are absolute (`now` is in
//! the state anyway).
//!
//! A replica keeps one tick record (its latest tick, sent or answered) and
//! one *basis*: the latest tick whose successful reply it received, the
//! pair it may start a child under. Under the protocol a replica starts
//! only when the basis is its latest tick (a tick sent since forbids
//! starting under an older one); `Rules::LatestAnswered` drops that.

mod replica;
mod step;
mod system;

pub use step::{Event, Fate};

/// Replicas at most.
pub const MAX_R: usize = 3;
/// Interval numbers at most (1..=MAX_N; 0 is the interval before the first).
pub const MAX_N: usize = 5;
/// Room for stray requests (given up on, or left by a crash) per replica.
pub const STRAYS: usize = 2;

/// What the replicas are told: their index, and how many replicas there are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pair {
    pub index: u8,
    pub replicas: u8,
}

/// How a settled tick reply extends a child's deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extension {
    /// As specified: tick m's reply says the pair is unchanged (settled
    /// with a child): the deadline becomes send(m) + V, even for a child an
    /// earlier reply decided to stop.
    AsSpecified,
    /// As specified, but a child being stopped is never extended.
    UnlessStopping,
    /// The fix this model suggests: tick m's settled reply extends the
    /// child only if tick m - 1 vouched for it (the child started under
    /// m - 1, or m - 1's reply extended it). Any gap (a tick skipped,
    /// refused, lost, or whose pair changed) ends its extensions.
    Contiguous,
}

/// The rules: the protocol, or one deliberate departure from it (each is
/// expected to be unsafe, which shows that the checker can fail).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// The protocol.
    Protocol,
    /// The protocol without the fallback `now >= recv(m) + V + D`.
    NoFallback,
    /// Start as soon as a pair is known (no barrier at all).
    NoBarrier,
    /// The barrier without its time condition: only confirmations.
    ConfirmOnly,
    /// A tick reply extends the child's deadline even when the pair changed.
    ExtendOnChange,
    /// No seal: the tick script never refuses a late tick.
    NoSeal,
    /// A replica may start under its latest *answered* tick even after it
    /// sent a later one (in flight, or given up on).
    LatestAnswered,
}

/// Where the search stops (besides a violation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    None,
    /// Every replica has a child alive and none is being stopped, after
    /// some child was stopped because its pair changed: that replica runs
    /// a new child (a transition completed).
    AllAliveAfterStop,
}

/// One exploration's bounds and rules.
#[derive(Clone, Debug)]
pub struct Model {
    pub extension: Extension,
    pub rules: Rules,
    /// Replicas, R1..Rk.
    pub replicas: usize,
    /// Replica r ticks interval n at (n - 1) * interval + skews[r].
    pub skews: [u8; MAX_R],
    pub interval: u8,
    pub slack: u8,
    pub kill_after: u8,
    /// The drift margin D.
    pub drift: u8,
    /// The highest interval number ticked.
    pub ticks: u8,
    /// Time stops here.
    pub horizon: u8,
    /// Requests given up on (a lost request, a lost reply, a timeout).
    pub faults: u8,
    pub crashes: u8,
    /// A child may exit on its own at any moment (else only when stopped or
    /// at its deadline).
    pub child_exits: bool,
    /// A tick is sent, executed and answered in one step (`Event::Tick`),
    /// its request or its reply possibly lost: a reduction, sound when
    /// `child_exits` holds (see `step.rs`). Else three steps.
    pub atomic: bool,
    /// Merge states that differ by swapping replicas of equal skew (the
    /// skews must then be in ascending order).
    pub symmetry: bool,
    /// A restarted replica reads the clock anew: its first tick is for the
    /// interval current when it restarted, or later. False: its clock may
    /// have stepped back across the restart (it may tick any interval due,
    /// above its last tick since the restart).
    pub restart_floor: bool,
    /// Where the search stops besides a violation.
    pub goal: Goal,
    /// States the search may visit.
    pub limit: usize,
}

impl Model {
    /// `rules` with `replicas` replicas, all skews 0, I = 2, V = I + 2
    /// (slack 1, kill_after 1), D = 0, `ticks` intervals, the horizon just
    /// past the last tick's deadline, no fault, no crash, children that may
    /// exit, atomic ticks.
    pub fn new(extension: Extension, rules: Rules, replicas: usize, ticks: u8) -> Model {
        let mut m = Model {
            extension,
            rules,
            replicas,
            skews: [0; MAX_R],
            interval: 2,
            slack: 1,
            kill_after: 1,
            drift: 0,
            ticks,
            horizon: 0,
            faults: 0,
            crashes: 0,
            child_exits: true,
            atomic: true,
            restart_floor: true,
            symmetry: true,
            goal: Goal::None,
            limit: 40_000_000,
        };
        m.horizon = m.default_horizon();
        m
    }

    /// The model with its horizon recomputed (after changing the interval,
    /// the skews or V).
    pub fn with_default_horizon(mut self) -> Model {
        self.horizon = self.default_horizon();
        self
    }

    /// V: how long a child may run past the send time of the tick that
    /// last vouched for its pair.
    pub fn v(&self) -> u8 {
        self.interval + self.slack + self.kill_after
    }

    /// The last tick's send time plus V: nothing can start after it.
    pub fn default_horizon(&self) -> u8 {
        let skew = self.skews[..self.replicas].iter().max().copied();
        (self.ticks - 1) * self.interval + skew.unwrap_or(0) + self.v()
    }

    /// The time replica r ticks interval n, if nothing delays it.
    pub fn due(&self, r: usize, n: u8) -> u8 {
        (n - 1) * self.interval + self.skews[r]
    }

    /// The interval r's clock is in at time t (0 before the first).
    pub fn current(&self, r: usize, t: u8) -> u8 {
        if t < self.skews[r] {
            0
        } else {
            (t - self.skews[r]) / self.interval + 1
        }
    }
}

/// The shared store. Index n of each array is interval n (0 never ticked).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Store {
    pub last: u8,
    pub count: [u8; MAX_N + 1],
    /// who[n][r]: r's rank in interval n, 0 when r has none.
    pub who: [[u8; MAX_R]; MAX_N + 1],
    /// transition[n]: bit r set when r is in the set.
    pub transition: [u8; MAX_N + 1],
}

/// A tick script's reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reply {
    /// `last > n`: nothing written.
    Refused,
    Ok {
        pair: Option<Pair>,
        settled: bool,
    },
}

impl Store {
    /// The tick script for interval n by replica r holding `holding`.
    pub fn tick(&mut self, r: usize, n: u8, holding: Option<Pair>, seal: bool) -> Reply {
        let n = n as usize;
        if seal && self.last as usize > n {
            return Reply::Refused;
        }
        if self.who[n][r] == 0 {
            self.count[n] += 1;
            self.who[n][r] = self.count[n];
        }
        self.last = self.last.max(n as u8);
        let prev = self.who[n - 1][r];
        let pair = (prev != 0).then(|| Pair {
            index: prev - 1,
            replicas: self.count[n - 1],
        });
        let settled = holding.is_none() || holding == pair;
        if settled && pair.is_some() {
            self.transition[n] |= 1 << r;
        }
        Reply::Ok { pair, settled }
    }

    /// The confirm script for tick m by replica r.
    pub fn confirm(&mut self, r: usize, m: u8) {
        let m = m as usize;
        if self.who[m - 1][r] != 0 {
            self.transition[m] |= 1 << r;
        }
    }

    /// |transition[m]| >= count[m-1].
    pub fn barrier(&self, m: u8) -> bool {
        let m = m as usize;
        self.transition[m].count_ones() >= u32::from(self.count[m - 1])
    }
}

/// Where a replica's latest tick is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// Its reply came back (and was acted on), or no tick was sent yet
    /// (n = 0).
    Done,
    /// Sent, not executed.
    InFlight,
    /// Executed; the reply is on its way.
    Executed(Reply),
    /// Given up on (timed out): if it was in flight it is now a stray; if
    /// it had executed, its reply is lost.
    Lost,
}

/// A replica's latest tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tick {
    pub n: u8,
    pub send: u8,
    /// The pair of the child when it was sent (the script's `holding`).
    pub holding: Option<Pair>,
    pub phase: Phase,
}

/// The latest tick whose successful reply the replica received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Basis {
    pub n: u8,
    /// Its send time (0 once its claim has expired).
    pub send: u8,
    /// Its receive time (0 once every condition on it holds for good).
    pub recv: u8,
    /// The pair it gave (None once its claim has expired).
    pub pair: Option<Pair>,
    /// recv of the replica's own tick n - 1, when it knows it.
    pub prev_recv: Option<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Child {
    pub pair: Pair,
    /// Dead by this time, for sure (the watchdog).
    pub deadline: u8,
    /// The replica has decided to stop it (it dies at some moment before
    /// its deadline).
    pub stopping: bool,
    /// Bit m: tick m's reply changed the pair under it (confirm m once it
    /// is dead).
    pub changed: u8,
    /// The tick that last vouched for its pair (it started under it, or
    /// its reply extended it); kept under `Extension::Contiguous` only.
    pub vouched: u8,
}

/// A tick request nobody waits for any more: it may still execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Stray {
    pub n: u8,
    pub holding: Option<Pair>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Replica {
    pub child: Option<Child>,
    pub tick: Tick,
    /// The lowest interval its next (new) tick may be for: the interval
    /// current when it last sent or (re)started, and above its last tick.
    /// Its loop reads the clock after each send, and a restarted process
    /// reads it after the crash.
    pub floor: u8,
    /// Restarted with its clock stepped back (`restart_floor` false): its
    /// floor is only ever above its last tick.
    pub stale: bool,
    pub basis: Option<Basis>,
    /// Sorted, at most STRAYS.
    pub strays: [Option<Stray>; STRAYS],
    /// Bit m: a confirm for tick m is in flight.
    pub confirms: u8,
}

impl Replica {
    pub const FRESH: Replica = Replica {
        child: None,
        tick: Tick {
            n: 0,
            send: 0,
            holding: None,
            phase: Phase::Done,
        },
        floor: 1,
        stale: false,
        basis: None,
        strays: [None; STRAYS],
        confirms: 0,
    };
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct State {
    pub now: u8,
    pub store: Store,
    pub reps: [Replica; MAX_R],
    /// Faults and crashes so far.
    pub faults: u8,
    pub crashes: u8,
    /// A child was stopped because its pair changed (kept only for
    /// `Goal::AllAliveAfterStop`).
    pub stopped: bool,
}

pub fn replica_name(r: usize) -> String {
    format!("R{}", r + 1)
}

pub fn pair_name(p: Option<Pair>) -> String {
    match p {
        Some(p) => format!("({}, {})", p.index, p.replicas),
        None => "none".to_string(),
    }
}
