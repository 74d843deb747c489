//! Conformance: the model checkers' steps replayed against the shipped Lua
//! scripts on real `redis-server`s, so that a model is the code and not a
//! copy of it (docs/safety.md, "Models tied to the code").
//!
//! # Design
//!
//! Each protocol family has a module here that implements [`Replay`] for
//! one of the models in `yaraus-models` (the same state machines the
//! exhaustive checks of `tests/models.rs` explore). It says, per model
//! event, which script the event stands for and with which arguments (the
//! library's own builders in `src/*/script.rs`, the invocations the code
//! makes), what the model expects that script to answer, and how the keys
//! on the servers project onto the model's state. [`walk`] drives it: a
//! bounded exhaustive prefix (every state the model reaches within a few
//! steps, each through the first run that reached it, and every transition
//! out of them, so that a step into a state a shorter run reached first —
//! a refusal where a lost reply already led — is compared too) and seeded random
//! walks beyond, one `redis-server` per modelled node, every server emptied
//! before each run. After every step the script's answer and the projected
//! keys must equal the model's; a difference fails with the run so far in
//! the model's words, both sides, and the seed that replays it.
//!
//! Events that run no script (a proposer deciding, a message lost) are
//! still steps of the walk: after them the servers must still project onto
//! the model's state, which checks that the model changed no node.
//!
//! The seed is printed at the start (`CONFORMANCE_SEED=N` replays it);
//! `CONFORMANCE_WALKS=N` sets how many random walks each test makes (the
//! default suite makes few, to stay within the CI budget; a longer run is
//! `CONFORMANCE_WALKS=2000 cargo test conformance`).

#![allow(dead_code, unused_imports)] // until the families land
mod birth;
mod counters;
mod hilo;
mod index;
mod locks;
mod pool;
mod wake;
mod walk;

pub use walk::{Plan, walk};

use crate::common::server::RedisServer;
use std::fmt::Debug;
use yaraus_models::explorer::System;

/// The servers of a conformance test, one per modelled node, each with a
/// connection that lives as long as the test.
pub struct Nodes {
    servers: Vec<RedisServer>,
    conns: Vec<redis::Connection>,
}

impl Nodes {
    pub fn start(n: usize) -> Nodes {
        let servers: Vec<RedisServer> = (0..n).map(|_| RedisServer::start()).collect();
        let conns = servers.iter().map(RedisServer::conn).collect();
        Nodes { servers, conns }
    }

    /// The connection to node `i`.
    pub fn conn(&mut self, i: usize) -> &mut redis::Connection {
        &mut self.conns[i]
    }

    pub fn server(&self, i: usize) -> &RedisServer {
        &self.servers[i]
    }

    /// Every node emptied, before a run.
    pub fn reset(&mut self) {
        for conn in &mut self.conns {
            let _: () = redis::cmd("FLUSHALL").query(conn).expect("FLUSHALL");
        }
    }
}

/// One protocol family's tie between a model and the shipped scripts.
pub trait Replay {
    type Model: System;
    /// What a step's scripts answer, in the model's words.
    type Answer: Debug + PartialEq;
    /// The part of the state that lives in Redis, as the model sees it.
    type Projection: Debug + PartialEq;

    /// The family's name, for the failure message.
    fn name(&self) -> String;
    fn model(&self) -> &Self::Model;
    /// How many servers the model's nodes need.
    fn nodes(&self) -> usize;
    /// Writes the model's initial state to the (empty) nodes.
    fn setup(&mut self, nodes: &mut Nodes, initial: &<Self::Model as System>::State);
    /// What the model says the scripts of `e` answer, taken from `before`
    /// to `after`; `None` when `e` runs no script.
    fn expected(
        &self,
        before: &<Self::Model as System>::State,
        e: <Self::Model as System>::Event,
        after: &<Self::Model as System>::State,
    ) -> Option<Self::Answer>;
    /// Runs the scripts of `e` on the nodes and returns what they answered;
    /// `None` when `e` runs no script.
    fn perform(
        &mut self,
        nodes: &mut Nodes,
        before: &<Self::Model as System>::State,
        e: <Self::Model as System>::Event,
    ) -> Option<Self::Answer>;
    fn project(&self, s: &<Self::Model as System>::State) -> Self::Projection;
    /// The keys on the nodes, read back and projected.
    fn observe(&mut self, nodes: &mut Nodes) -> Self::Projection;
}
