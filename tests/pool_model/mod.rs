//! An exhaustive explorer of the worker-id pool's scripts (`src/lease/*.lua`):
//! a few clients leasing, renewing and releasing the ids of one pool on one
//! Redis server, the pool growing and shrinking under them, each id's clock
//! record and the pool's counters, every interleaving within a budget of
//! steps.
//!
//! # What is modelled
//!
//! The keys of `src/lease/mod.rs`, as the scripts see them: per id
//! ([`Slot`]) whether the sorted set holds it, its score, its owner in the
//! clients hash and its clock record; the counters of the stats hash
//! ([`Counters`]) and the range it records. Each event is one script, or
//! one `init` (the whole of `src/lease/init.rs`), atomic as Redis runs it:
//!
//! * `Acquire` (`acquire.lua`): the client leases the present id with the
//!   lowest score (never leased, then freed longest ago, then the smallest
//!   id), or is told the pool is exhausted; a client without a name is
//!   given one. The id's record becomes the greater of what it holds and
//!   the horizon the client sends.
//! * `Renew` (`renew.lua`): extends the client's id if it owns it, else
//!   refuses, naming the owner; its record is raised likewise. A horizon
//!   below the client's last one is a wall clock that stepped back.
//! * `Release` (`release.lua`) in the code's four forms: the command ended
//!   (the record becomes the client's wall clock, never below what the lease
//!   found), it never ran (the record put back as the lease found it), it
//!   is not known (the record left), and a failed attempt's leftover (the
//!   same as never ran, and only while the lease runs). A client may release
//!   an id it lost, knowing it (its renewal was refused) or not.
//! * `Init` (`yaraus init` to `1..=to`, with or without `--force`): the
//!   range decided by `resize.lua`, the whole of it added (`ZADD NX`: the
//!   ids present left as they are), the ids beyond removed (`shrink.lua`).
//!   `Decide` and `Shrink` are the same init cut in two, others acting
//!   between its decision and its removal: an id leased meanwhile is
//!   removed under its holder, who learns at its next renewal; and when
//!   another init decided meanwhile, the removal is refused
//!   ([`Reply::Overtaken`]): the later decision stands.
//!
//! # Time
//!
//! Nothing is timed but leases, and a lease only matters as running or
//! run out. So each lease and renewal says which: it *lasts* (it runs until
//! its holder renews or releases it) or it *lapses* (its holder pauses, a
//! stopped process or a late renewal, past its expiry right after it:
//! time passes, and the id is free for the next acquire while the clients
//! hash still names its holder). Free ids are ordered by when they became
//! free ([`Score::At`], ranks renumbered after each step), which is the
//! order acquire takes them in.
//!
//! # What is checked
//!
//! * No id in force for two clients at once ([`Violation::SharedId`]): a
//!   client's lease is in force from a lease or renewal that lasts until it
//!   lapses, is released, or is removed by a shrink (its holder loses it at
//!   its next renewal; the next holder's grace delay covers that window,
//!   which is the clock guard's model's business).
//! * A renewal or release never writes an id its client does not own
//!   ([`Violation::ForeignWrite`]).
//! * A clock record is never lowered, but by its owner's release, and then
//!   never below what that owner's lease found ([`Violation::RecordLowered`]).
//! * Once no init is in flight, the pool holds its recorded range: every
//!   id of it ([`Violation::LostId`]: two inits racing must not cut an id
//!   out of the range the later one recorded) and none beyond
//!   ([`Violation::StrayId`]). Only a shrinking init is cut in two here: a
//!   growing one is a single step, so the model never sees its additions
//!   land after a later init's decision, which in the real code can leave
//!   ids beyond the range (never fewer) until the next `init` removes them.
//!
//! The shipped scripts pass ([`Flaw`] `None`); a renewal that extends any
//! owner's id, a release that frees any owner's id, a release that writes
//! its wall clock below what its lease found, and a removal that ignores a
//! later init's decision (with init adding its whole range, or only past
//! the largest id it measures) each fail. The
//! conformance test (`tests/conformance/pool/`) replays these steps on a
//! real `redis-server` through the library's own script builders.

mod steps;
mod system;
mod tests;

use crate::explorer;

pub use explorer::System;

/// The most ids the pool holds (it starts with fewer and may grow).
pub const IDS: usize = 3;
/// The most clients.
pub const CLIENTS: usize = 3;
/// The horizons a client sends (wall-clock instants, in the model's units).
pub const HORIZONS: [u8; 2] = [1, 2];

/// An id's score in the sorted set, as acquire orders them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Score {
    /// 0: never leased since it was added (ties go to the smallest id).
    Never,
    /// Free since the rank-th instant (a lapsed lease's expiry, a release).
    At(u8),
    /// A lease that runs.
    Live,
}

/// An id's clock record: its horizon, and whose offset it carries (the
/// client that wrote it last: a release keeps the writer's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    pub horizon: u8,
    pub writer: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Slot {
    /// In the sorted set.
    pub present: bool,
    pub score: Score,
    /// Its entry in the clients hash.
    pub owner: Option<u8>,
    pub record: Option<Record>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    Idle,
    /// It leased `id`, finding `found`.
    Holding {
        id: u8,
        found: Option<Record>,
        /// Its lease runs (see the module docs).
        in_force: bool,
        /// A renewal was refused: it knows the id is no longer its.
        lost: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    /// It was given a client id by an acquire.
    pub named: bool,
    pub phase: Phase,
    /// The last horizon it sent.
    pub last_horizon: u8,
}

/// The counters of the stats hash, each present once it is 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counters {
    pub client_id_count: u8,
    pub get_id_count: u8,
    pub get_id_no_available_id: u8,
    pub get_id_success: u8,
    pub extend_ttl_count: u8,
    pub clock_step_back: u8,
    pub extend_ttl_ownership_error: u8,
    pub extend_ttl_expire_warning: u8,
    pub extend_ttl_success: u8,
}

impl Counters {
    /// Each counter with its field name in the stats hash (for the
    /// conformance test, which reads them back).
    #[allow(dead_code)]
    pub fn fields(&self) -> [(&'static str, u8); 9] {
        [
            ("client_id_count", self.client_id_count),
            ("get_id_count", self.get_id_count),
            ("get_id_no_available_id", self.get_id_no_available_id),
            ("get_id_success", self.get_id_success),
            ("extend_ttl_count", self.extend_ttl_count),
            ("clock_step_back", self.clock_step_back),
            (
                "extend_ttl_ownership_error",
                self.extend_ttl_ownership_error,
            ),
            ("extend_ttl_expire_warning", self.extend_ttl_expire_warning),
            ("extend_ttl_success", self.extend_ttl_success),
        ]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// Id `n` at `ids[n - 1]`.
    pub ids: [Slot; IDS],
    pub clients: [Client; CLIENTS],
    pub counters: Counters,
    /// The range recorded in the stats hash is `1..=range`.
    pub range: u8,
    /// An init that decided to shrink to `1..=lo - 1` and has not removed
    /// `lo..=hi` yet.
    pub pending: Option<(u8, u8)>,
    /// Steps left in the budget.
    pub left: u8,
    /// The first property a step broke (the checks look at transitions).
    pub broken: Option<Violation>,
}

/// How a release treats the id's clock record (`release.lua`'s ARGV[4]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum How {
    /// The command ended with the client's wall clock at this instant.
    Ended(u8),
    /// The command never ran.
    Unused,
    /// Not known: the record is left.
    Untouched,
    /// A failed attempt's leftover: never ran, and only while it runs.
    Leftover,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    Acquire { c: u8, lasts: bool, horizon: u8 },
    Renew { c: u8, lasts: bool, horizon: u8 },
    Release { c: u8, how: How },
    Init { to: u8, force: bool },
    Decide { to: u8, force: bool },
    Shrink,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Violation {
    SharedId {
        id: u8,
    },
    ForeignWrite {
        id: u8,
        client: u8,
    },
    RecordLowered {
        id: u8,
    },
    /// An id of the recorded range absent, no init in flight.
    LostId {
        id: u8,
    },
    /// An id beyond the recorded range present, no init in flight.
    StrayId {
        id: u8,
    },
}

/// A client as a script's reply names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Who {
    Client(u8),
    /// A name that is no client's (what the conformance test reads back
    /// from a script gone wrong).
    #[allow(dead_code)]
    Unknown(String),
}

/// What `yaraus init` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InitReply {
    Already {
        to: u8,
    },
    Resized {
        from: (u8, u8),
        to: u8,
        added: u8,
        removed: u8,
    },
    /// Refused: a leased id outside the range, and no `--force`.
    Refused,
}

/// What a step's script answers, in the model's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Leased {
        client: Who,
        id: u8,
        lasts: bool,
        found: Option<Record>,
    },
    Exhausted {
        client: Who,
    },
    Extended {
        lasts: bool,
    },
    /// A renewal refused, naming the id's owner (none: gone, or nobody's).
    Refused {
        owner: Option<Who>,
    },
    Released(bool),
    Init(InitReply),
    /// `resize.lua`: recorded or refused, and the leased ids outside the
    /// range with their owners, by id.
    Decided {
        recorded: bool,
        leased: Vec<(u8, Who)>,
    },
    /// `shrink.lua`: how many of the ids were in the pool.
    Shrunk(u8),
    /// `shrink.lua` refused, removing nothing: the range recorded is no
    /// longer its init's decision.
    Overtaken,
    /// None of these: what a script gone wrong answers (an error, a lease
    /// of another length), as the conformance test reads it back.
    #[allow(dead_code)]
    Other(String),
}

/// A mistake in the scripts, to show the checks catch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flaw {
    /// A renewal extends the id whoever owns it.
    RenewAnyOwner,
    /// A release frees the id whoever owns it.
    ReleaseAnyOwner,
    /// An ended release writes its wall clock, even below what its lease
    /// found.
    EndedBelowFound,
    /// A removal takes its ids whatever range is recorded by then.
    RemovalIgnoresRange,
    /// That, and an init adds only the ids past the largest one present
    /// (or past its recorded range, when the count matches it): the pool
    /// measured by its ends alone.
    RemovalIgnoresRangeAddsPastTheTop,
}

impl Flaw {
    /// The removal does not compare the recorded range with its decision.
    fn unchecked_removal(flaw: Option<Flaw>) -> bool {
        matches!(
            flaw,
            Some(Flaw::RemovalIgnoresRange | Flaw::RemovalIgnoresRangeAddsPastTheTop)
        )
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub clients: usize,
    /// The pool starts as `1..=ids`.
    pub ids: u8,
    /// The budget of steps.
    pub steps: u8,
}

pub struct Model {
    pub bounds: Bounds,
    pub flaw: Option<Flaw>,
}
