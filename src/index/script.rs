//! The index's Lua scripts and, for each, the one builder of its KEYS and
//! ARGV.
//!
//! A script's header (its `.lua` file, beside this one) is the contract:
//! which keys and arguments, in which order, and what it returns. Each
//! builder has the fields the keys and arguments are made from, and
//! pushes them in that order: the one place the Rust side knows it.
//!
//! Public so that the conformance tests (`tests/conformance/`) replay the
//! model checkers' steps through the very invocations the code makes.

use super::keys::IndexKeys;
use super::pair::Pair;
use crate::store::invoke;
use std::sync::LazyLock;

static TICK: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("tick.lua")));
static CONFIRM: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("confirm.lua")));

type Invocation = redis::ScriptInvocation<'static>;

/// tick.lua: one replica's tick of interval `number`.
pub struct Tick<'a> {
    pub keys: &'a IndexKeys,
    pub number: u64,
    pub interval_ms: u64,
    pub client: &'a str,
    /// The pair the client's command runs with, packed `index/replicas`
    /// (`''` for none).
    pub holding: Option<Pair>,
    /// How long the keys are kept.
    pub keep_ms: u64,
}

impl Tick<'_> {
    pub fn invocation(&self) -> Invocation {
        let (keys, n) = (self.keys, self.number);
        let holding = self
            .holding
            .map_or(String::new(), |p| format!("{}/{}", p.index, p.replicas));
        let mut invocation = invoke(
            &TICK,
            &[
                &keys.config(),
                &keys.count(n),
                &keys.who(n),
                &keys.count(n - 1),
                &keys.who(n - 1),
                &keys.transition(n),
            ],
        );
        invocation
            .arg(n)
            .arg(self.interval_ms)
            .arg(self.client)
            .arg(holding)
            .arg(self.keep_ms);
        invocation
    }
}

/// confirm.lua: confirm the transition of `number` for a replica whose
/// command is gone.
pub struct Confirm<'a> {
    pub keys: &'a IndexKeys,
    pub number: u64,
    pub client: &'a str,
    pub keep_ms: u64,
}

impl Confirm<'_> {
    pub fn invocation(&self) -> Invocation {
        let (keys, n) = (self.keys, self.number);
        let mut invocation = invoke(&CONFIRM, &[&keys.who(n - 1), &keys.transition(n)]);
        invocation.arg(self.client).arg(self.keep_ms);
        invocation
    }
}
