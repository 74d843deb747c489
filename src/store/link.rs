//! The one connection a [`super::Store`] and every clone of it share, dialed
//! once for all of them and replaced, once, when it breaks.
//!
//! Why shared and not one per clone: a long-running process clones its
//! stores freely (`seq serve` one per sequence name and one per `GET`, a
//! lock one per hold). When each clone kept the connection it was cloned
//! with and dialed its own after a failure, a clone made from a store whose
//! connection had died never recovered (its copy was dead for good), and
//! after a node restarted every clone dialed a connection of its own, so
//! that a node's client count grew with the number of names a client
//! invented, up to its `maxclients`. A multiplexed connection already
//! serves any number of callers at once; one per node is what Redis
//! clients do.
//!
//! The dial itself is shared too: while one is in flight, every caller that
//! needs the connection awaits the same dial (a [`Shared`] future), so a
//! burst of rounds after a restart opens one connection, and a node that
//! does not answer costs each of them one connect timeout, not one each in
//! turn. A caller that gives up (its round was decided without this node)
//! does not cancel the dial for the others: the next caller polls it on.
//!
//! Each connection has a generation: a caller that saw a request fail
//! drops the connection only if it is still the one the caller used, so a
//! late failure on an old connection never throws away the new one.

use super::connection::Connection;
use crate::error::Result;
use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Shared};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A dial in flight, awaited by everyone who needs the connection now.
type Dial = Shared<BoxFuture<'static, Result<Connection>>>;

/// The shared connection of a store and its clones.
#[derive(Default)]
pub(super) struct Link {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    now: Now,
    /// The generation the next dial gets.
    next: u64,
}

#[derive(Default)]
enum Now {
    #[default]
    Idle,
    Dialing {
        dial: Dial,
        generation: u64,
    },
    Up {
        conn: Connection,
        generation: u64,
        /// The replicas `INFO` reported on this connection.
        replicas: Option<i64>,
    },
}

impl Link {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The live connection and its generation; when there is none, the dial
    /// in flight, or a new one made by `dial`.
    pub(super) async fn get(
        &self,
        dial: impl FnOnce() -> BoxFuture<'static, Result<Connection>>,
    ) -> Result<(Connection, u64)> {
        let (pending, generation) = {
            let mut state = self.state();
            match &state.now {
                Now::Up {
                    conn, generation, ..
                } => return Ok((conn.clone(), *generation)),
                Now::Dialing { dial, generation } => (dial.clone(), *generation),
                Now::Idle => {
                    let generation = state.next;
                    state.next += 1;
                    let pending = dial().shared();
                    state.now = Now::Dialing {
                        dial: pending.clone(),
                        generation,
                    };
                    (pending, generation)
                }
            }
        };
        let result = pending.await;
        let mut state = self.state();
        // The first caller back settles what the dial gave; the others
        // find it settled (or already replaced).
        if matches!(&state.now, Now::Dialing { generation: g, .. } if *g == generation) {
            state.now = match &result {
                Ok(conn) => Now::Up {
                    conn: conn.clone(),
                    generation,
                    replicas: None,
                },
                Err(_) => Now::Idle,
            };
        }
        result.map(|conn| (conn, generation))
    }

    /// Drops the connection of `generation`, if it is still the live one.
    pub(super) fn drop_generation(&self, generation: u64) {
        let mut state = self.state();
        if matches!(&state.now, Now::Up { generation: g, .. } if *g == generation) {
            state.now = Now::Idle;
        }
    }

    /// The generation of the live connection, if there is one.
    pub(super) fn live(&self) -> Option<u64> {
        match &self.state().now {
            Now::Up { generation, .. } => Some(*generation),
            _ => None,
        }
    }

    /// The replicas reported on the connection of `generation`, if asked.
    pub(super) fn replicas(&self, generation: u64) -> Option<i64> {
        match &self.state().now {
            Now::Up {
                generation: g,
                replicas,
                ..
            } if *g == generation => *replicas,
            _ => None,
        }
    }

    /// Records what `INFO` said of the replicas on `generation`.
    pub(super) fn set_replicas(&self, generation: u64, n: i64) {
        if let Now::Up {
            generation: g,
            replicas,
            ..
        } = &mut self.state().now
            && *g == generation
        {
            *replicas = Some(n);
        }
    }
}
