//! The hilo scripts and, for each, the one builder of its KEYS and ARGV.
//!
//! A script's header (its `.lua` file, beside this one) is the contract:
//! which keys and arguments, in which order, and what it returns. Every
//! script has the sequence's three keys ([`HiloKeys`]) and runs `keys.lua`
//! first; each builder pushes its fields in the header's order, ids as
//! 20-digit text ([`wire`]): the one place the Rust side knows the layout.
//!
//! Public so that the conformance tests (`tests/conformance/`) replay the
//! model checkers' steps through the very invocations the code makes.

use super::keys::HiloKeys;
use super::wire::wire;
use crate::store::invoke;
use std::sync::LazyLock;

const KEYS_LUA: &str = include_str!("keys.lua");

/// A script of this module: the key-type prologue, then its body.
fn script(body: &str) -> redis::Script {
    redis::Script::new(&[KEYS_LUA, body].concat())
}

static RESERVE: LazyLock<redis::Script> = LazyLock::new(|| script(include_str!("reserve.lua")));
static FENCE: LazyLock<redis::Script> = LazyLock::new(|| script(include_str!("fence.lua")));
static RAISE: LazyLock<redis::Script> = LazyLock::new(|| script(include_str!("raise.lua")));
static CREATE: LazyLock<redis::Script> = LazyLock::new(|| script(include_str!("create.lua")));
static STATUS: LazyLock<redis::Script> = LazyLock::new(|| script(include_str!("status.lua")));

type Invocation = redis::ScriptInvocation<'static>;

/// `script` with the sequence's keys, in their order.
fn with_keys(script: &'static redis::Script, keys: &HiloKeys) -> Invocation {
    invoke(script, &keys.all())
}

/// reserve.lua: a block of `batch` ids from the lowest open window.
pub struct Reserve<'a> {
    pub keys: &'a HiloKeys,
    pub batch: u64,
}

impl Reserve<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = with_keys(&RESERVE, self.keys);
        invocation.arg(wire(self.batch));
        invocation
    }
}

/// fence.lua: the first phase of an agent's run.
pub struct Fence<'a> {
    pub keys: &'a HiloKeys,
    pub fence: &'a str,
}

impl Fence<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = with_keys(&FENCE, self.keys);
        invocation.arg(self.fence);
        invocation
    }
}

/// raise.lua: the second phase, the new high-water mark.
#[derive(Clone, Copy)]
pub struct Raise<'a> {
    pub keys: &'a HiloKeys,
    pub fence: &'a str,
    pub hwm: u64,
    pub window_size: u64,
}

impl Raise<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = with_keys(&RAISE, self.keys);
        invocation
            .arg(self.fence)
            .arg(wire(self.hwm))
            .arg(wire(self.window_size));
        invocation
    }
}

/// create.lua: the third phase, one window `[start, end)`.
pub struct Create<'a> {
    pub keys: &'a HiloKeys,
    pub fence: &'a str,
    pub start: u64,
    pub end: u64,
}

impl Create<'_> {
    pub fn invocation(&self) -> Invocation {
        let mut invocation = with_keys(&CREATE, self.keys);
        invocation
            .arg(self.fence)
            .arg(wire(self.start))
            .arg(wire(self.end));
        invocation
    }
}

/// status.lua: what one shard holds, read-only.
pub struct Status<'a> {
    pub keys: &'a HiloKeys,
}

impl Status<'_> {
    pub fn invocation(&self) -> Invocation {
        with_keys(&STATUS, self.keys)
    }
}
