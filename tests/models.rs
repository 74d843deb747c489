//! The model checkers: pure computation, no server. Each model is checked
//! exhaustively by the shared explorer (`explorer/`), and the models whose
//! steps are the shipped scripts are replayed against them elsewhere.
//! `scripts/test.sh` runs this target beside the others, on one thread.

mod clock_guard_model;
mod explorer;
mod hilo_model;
mod index_model;
mod pool_model;
mod rwlock_model;
mod seq_model;
mod wake_model;
