//! The builders of the sequence scripts' KEYS and ARGV, one per script.
//!
//! A script's header (its `.lua` file, beside this one) is the contract:
//! which keys and arguments, in which order, and what it returns. Each
//! builder has a field per key or argument and pushes them in that order:
//! the one place the Rust side knows it. Every script here but census.lua
//! has one key, the counter.
//!
//! Public so that the conformance tests (`tests/conformance/`) replay the
//! model checkers' steps through the very invocations the code makes.

use crate::base::COUNTER_LUA;
use crate::store::invoke;
use std::sync::LazyLock;
use std::time::Duration;

static PROPOSE: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(&[COUNTER_LUA, include_str!("propose.lua")].concat()));
static READ: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(&[COUNTER_LUA, include_str!("read.lua")].concat()));
static TRANSITION: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(&[COUNTER_LUA, include_str!("transition.lua")].concat()));
static SET_FLOOR: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(&[COUNTER_LUA, include_str!("set_floor.lua")].concat()));
static CENSUS: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(&[COUNTER_LUA, include_str!("census.lua")].concat()));
static HEAL: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(&[COUNTER_LUA, include_str!("heal.lua")].concat()));

type Invocation = redis::ScriptInvocation<'static>;

/// propose.lua: one node's vote for the block `first..=last`.
pub struct Propose<'a> {
    pub key: &'a str,
    pub first: u64,
    pub last: u64,
}

impl Propose<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = invoke(&PROPOSE, &[self.key]);
        invocation.arg(self.first).arg(self.last);
        invocation
    }
}

/// read.lua: one node's state; `mark` (hex) is left where the key is
/// missing, `''` for a read-only look.
pub struct Read<'a> {
    pub key: &'a str,
    pub mark: &'a str,
}

impl Read<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = invoke(&READ, &[self.key]);
        invocation.arg(self.mark);
        invocation
    }
}

/// census.lua: the states of many counters on one node, read-only.
pub struct CensusRead<'a> {
    pub keys: &'a [String],
}

impl CensusRead<'_> {
    pub fn invocation(&self) -> Invocation {
        let keys: Vec<&str> = self.keys.iter().map(String::as_str).collect();
        invoke(&CENSUS, &keys)
    }
}

/// transition.lua: compare-and-set of a node's whole state; `bound`: the
/// age a settle must be below, or a rollback at or above, on the node's
/// clock.
pub struct Transition<'a> {
    pub key: &'a str,
    pub from: &'a str,
    pub to: &'a str,
    pub bound: Option<Duration>,
}

impl Transition<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = invoke(&TRANSITION, &[self.key]);
        invocation.arg(self.from).arg(self.to);
        if let Some(bound) = self.bound {
            invocation.arg(bound.as_millis() as u64);
        }
        invocation
    }
}

/// set_floor.lua: raise a node's counter to at least `floor`.
pub struct SetFloor<'a> {
    pub key: &'a str,
    pub floor: u64,
}

impl SetFloor<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = invoke(&SET_FLOOR, &[self.key]);
        invocation.arg(self.floor);
        invocation
    }
}

/// heal.lua: one step of the quarantined repair of a node.
pub struct Heal<'a> {
    pub key: &'a str,
    pub step: &'a HealStep,
}

/// A step of heal.lua, each with the exact state it was read in.
#[derive(Clone, Debug)]
pub enum HealStep {
    /// Start the quarantine of a node found without the counter (`''`
    /// or an `unborn:` mark), under a fresh `token`.
    Mark { state: String, token: String },
    /// Ask whether the quarantine of `healing:…` is over.
    Ripe { state: String, quarantine: Duration },
    /// Set the counter again, if the quarantine is over.
    Repair {
        state: String,
        counter: u64,
        quarantine: Duration,
    },
}

impl Heal<'_> {
    pub fn invocation(&self) -> Invocation {
        let ms = |d: &Duration| d.as_millis() as u64;
        let mut invocation = invoke(&HEAL, &[self.key]);
        match self.step {
            HealStep::Mark { state, token } => invocation.arg("mark").arg(state).arg(token),
            HealStep::Ripe { state, quarantine } => {
                invocation.arg("ripe").arg(state).arg(ms(quarantine))
            }
            HealStep::Repair {
                state,
                counter,
                quarantine,
            } => invocation
                .arg("repair")
                .arg(state)
                .arg(counter)
                .arg(ms(quarantine)),
        };
        invocation
    }
}
