//! The state of the hilo window agent's model: the shards (each an
//! independent Redis, its scripts atomic), the agent runs (their phase,
//! their requests in flight, what they planned), the ghost history of
//! every window ever created, and the bounds and rules of one exploration
//! ([`Model`]). `shard.rs` holds the three scripts and the reserver,
//! `run.rs` what a run does with its replies, `step.rs` the events,
//! `system.rs` the model as the explorer sees it, `words.rs` the words of
//! a narrated run.
//!
//! # Why the state looks like this
//!
//! * Tokens: run r (R1, R2, ...) has token r + 1. Runs start in any order,
//!   at any moment, so this loses nothing: every order of tokens relative
//!   to the starts is some order of starts. Nothing serialises the runs
//!   (the lock is assumed broken).
//! * A shard's fence and hwm are `u8`s, 0 meaning absent: a fence is a
//!   token (>= 1), and every hwm ever written is the end of a window
//!   (>= the window size >= 1).
//! * A run keeps, per shard, where its request of the current phase is
//!   ([`Req`]): sent (in the network, or queued: the shard executes it at
//!   any later moment, or never), acknowledged, or nothing. A run only
//!   moves to the next phase when every shard acknowledged the current
//!   one, so requests of one phase at a time are in flight per run and
//!   shard; a run that gave up keeps its requests in flight (strays: they
//!   may still execute), and forgets the rest (`Run::tidy`).
//! * Sending is folded into the step that makes it possible (the last
//!   acknowledgement): when the run sends is invisible to everyone, and a
//!   request sent late is a request delayed in the network, which the
//!   model already has. Choosing the windows is its own step
//!   ([`Event::Plan`]), one per choice.
//! * The ghost ([`Ghost`]) is the history the invariant needs: the ids of
//!   every window ever created anywhere (shards that restarted since
//!   included), the ids created twice, and how many windows. Windows all
//!   have the model's size and start at multiples of it (every hwm is
//!   START = 0 plus whole windows), so the masks say which windows exist.
//! * The windows on a shard and their cursors only matter to reservers; the
//!   model keeps them (`Shard::open`, the ids not yet reserved) only under
//!   `Watch::Ids`.

mod run;
mod shard;
mod step;
mod system;
mod words;

pub use step::Event;

/// Shards at most.
pub const MAX_SHARDS: usize = 3;
/// Agent runs at most.
pub const MAX_RUNS: usize = 3;
/// Every id is below this (the ghost's masks are `u32`).
pub const ID_LIMIT: u8 = 32;
/// A run's plan has no window for this shard.
pub const NO_WINDOW: u8 = u8::MAX;
/// `Model::restarts`: no limit (restarts are then not counted).
pub const UNLIMITED: u8 = u8::MAX;

/// The rules: the protocol, or one deliberate departure from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// fence (refuses an older token), raise (refuses another fence),
    /// create (refuses another fence, or an hwm below the window's end),
    /// each phase sent only when every shard acknowledged the last.
    Protocol,
    /// (a) CREATE without its fence check (its hwm check stays).
    CreateUnfenced,
    /// (b) No RAISE phase: CREATE (fenced) records hwm = max(hwm, end) on
    /// its own shard only, as the original blog post's design does.
    NoRaise,
    /// (c) Each shard's CREATE is sent as soon as that shard acknowledged
    /// its RAISE, without waiting for the other shards.
    CreateAfterOwnRaise,
    /// (d) FENCE takes any token: the last writer wins.
    FenceUnordered,
    /// RAISE without its fence check.
    RaiseUnfenced,
}

/// Which windows a run may plan once it knows the global hwm g: k windows
/// [g + i*W, g + (i+1)*W), window i on its own shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spread {
    /// k = 1, on any shard.
    One,
    /// k = the number of shards, one on each, in any order.
    PerShard,
    /// Either of the above, as the run chooses.
    Either,
}

/// What the invariant watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watch {
    /// No two windows ever created overlap.
    Windows,
    /// No id is handed out twice by reservers (each shard's reserver takes
    /// the lowest id not yet reserved of its open windows). Two windows
    /// over the same ids on one shard at once are merged (the shard would
    /// hand each id twice, the model once): this watch can miss a
    /// violation, never invent one.
    Ids,
}

/// The fault assumption: which shard may restart empty when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Any shard, any time: only `Model::restarts` bounds them.
    Budget,
    /// "At no time have all shards lost the hwm", made exact: a shard
    /// restarts only while another shard holds an hwm at least
    /// `Ghost::highest`, the highest hwm some run had acknowledged by every
    /// shard (its raise phase complete; it rises when the run's last raise
    /// executes, replies arriving at once in the model).
    KeepHighest,
    /// The same words read as counting restarts: a shard restarts only if
    /// some other shard has not restarted since the last completed raise
    /// phase (`Ghost::restarted`).
    SinceLastRaise,
}

/// Where the search stops besides a violation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    None,
    /// A window was created.
    Created,
    /// Every run started, and every run is over having created nothing.
    EveryRunFailed,
}

/// One exploration's bounds and rules.
#[derive(Clone, Debug)]
pub struct Model {
    pub rules: Rules,
    /// Shards, A, B, C.
    pub shards: usize,
    /// Agent runs, R1 (token 1), R2 (token 2), R3 (token 3).
    pub runs: usize,
    /// Empty restarts allowed in total, over all shards (or UNLIMITED).
    pub restarts: u8,
    /// Which restarts the fault assumption allows, within `restarts`.
    pub gate: Gate,
    /// The window size W.
    pub size: u8,
    pub spread: Spread,
    /// A reply may be lost (the run gives up).
    pub losses: bool,
    pub watch: Watch,
    pub goal: Goal,
    /// Merge states that differ by a renaming of the shards.
    pub symmetry: bool,
    /// States the search may visit.
    pub limit: usize,
}

impl Model {
    /// `rules` with `shards` shards, `runs` runs, `restarts` empty restarts
    /// allowed; W = 1, one window per run, replies may be lost, the
    /// windows watched, shards merged by symmetry.
    pub fn new(rules: Rules, shards: usize, runs: usize, restarts: u8) -> Model {
        Model {
            rules,
            shards,
            runs,
            restarts,
            gate: Gate::Budget,
            size: 1,
            spread: Spread::One,
            losses: true,
            watch: Watch::Windows,
            goal: Goal::None,
            symmetry: true,
            limit: 60_000_000,
        }
    }
}

/// One Redis shard's keys for the sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shard {
    /// The token of the run that fenced it last; 0: absent.
    pub fence: u8,
    /// The high-water mark; 0: absent.
    pub hwm: u8,
    /// Bit i: id i is in an open window here, not yet reserved (kept
    /// under `Watch::Ids` only).
    pub open: u32,
}

/// An agent script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Script {
    Fence,
    Raise,
    Create,
}

/// Where a run's request to one shard is, in the run's current phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Req {
    /// No request: none sent, or its reply is of no more use.
    Idle,
    /// In flight: the shard executes it at any later moment, or never.
    Sent(Script),
    /// Executed, and the run received its OK.
    Acked(Script),
}

/// A run's phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// Not started.
    Waiting,
    /// Fences sent.
    Fencing,
    /// Raises sent (under `CreateAfterOwnRaise`, some creates too).
    Raising,
    /// Creates sent.
    Creating,
    /// Gave up (a refusal, a lost reply) or done: it sends nothing more;
    /// its requests still in flight may execute.
    Over,
}

/// An agent run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Run {
    pub phase: Phase,
    /// The highest hwm among its fence replies so far (while fencing).
    pub global: u8,
    /// The hwm its raises write (once planned).
    pub new: u8,
    /// The start of the window planned for each shard, or NO_WINDOW.
    pub window: [u8; MAX_SHARDS],
    pub reqs: [Req; MAX_SHARDS],
}

impl Run {
    pub const WAITING: Run = Run {
        phase: Phase::Waiting,
        global: 0,
        new: 0,
        window: [NO_WINDOW; MAX_SHARDS],
        reqs: [Req::Idle; MAX_SHARDS],
    };
}

/// What happened, kept for the invariant: no shard can see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ghost {
    /// Bit i: some window ever created holds id i.
    pub created: u32,
    /// Bit i: two windows ever created hold id i.
    pub twice: u32,
    /// Windows created.
    pub windows: u8,
    /// The highest hwm some run had acknowledged by every shard (its
    /// raise phase complete): every window created lies below it (kept
    /// under `Gate::KeepHighest` only).
    pub highest: u8,
    /// Bit s: shard s restarted since a run last had its raise
    /// acknowledged by every shard (kept under `Gate::SinceLastRaise`
    /// only).
    pub restarted: u8,
    /// Bit i: id i was handed out (`Watch::Ids`).
    pub handed: u32,
    /// Bit i: id i was handed out twice (`Watch::Ids`).
    pub handed_twice: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct State {
    pub shards: [Shard; MAX_SHARDS],
    pub runs: [Run; MAX_RUNS],
    pub ghost: Ghost,
    /// Empty restarts so far.
    pub restarts: u8,
}

/// The ids [start, end) as a mask.
pub fn ids(start: u8, end: u8) -> u32 {
    debug_assert!(start < end && end <= ID_LIMIT);
    let below = |n: u8| if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
    below(end) & !below(start)
}

pub fn shard_name(s: usize) -> char {
    (b'A' + s as u8) as char
}

pub fn run_name(r: usize) -> String {
    format!("R{}", r + 1)
}

/// "absent" for 0, else the number.
pub fn value_name(v: u8) -> String {
    if v == 0 {
        "absent".to_string()
    } else {
        v.to_string()
    }
}
