//! The model checkers of yaraus's protocols, as a library: the state
//! machines themselves (pure computation, no server), so that the
//! conformance tests of the root package (`tests/conformance/`) walk the
//! same models the exhaustive checks explore, and replay each step against
//! the shipped Lua scripts on a real `redis-server`.
//!
//! The files live under `tests/` beside the rest of the test tree; the
//! package's test target (`tests/models.rs`) declares the same modules and
//! runs their exhaustive checks, optimised. Here their `#[test]`s and
//! `cfg(test)` modules drop out, which leaves helpers only they use: hence
//! the allowances below.
#![allow(dead_code, unused_imports, unused_macros)]

#[path = "../tests/clock_guard_model/mod.rs"]
pub mod clock_guard_model;
#[path = "../tests/explorer/mod.rs"]
pub mod explorer;
#[path = "../tests/hilo_model/mod.rs"]
pub mod hilo_model;
#[path = "../tests/index_model/mod.rs"]
pub mod index_model;
#[path = "../tests/pool_model/mod.rs"]
pub mod pool_model;
#[path = "../tests/rwlock_model/mod.rs"]
pub mod rwlock_model;
#[path = "../tests/seq_model/mod.rs"]
pub mod seq_model;
#[path = "../tests/wake_model/mod.rs"]
pub mod wake_model;
