//! Everything else, against real redis-servers and real processes: the
//! subcommands one by one, their messages, logs and conventions, the
//! supervisor, the id server and its clients, the package. One test binary
//! (not one per file): it links the library once, and its tests share the
//! test threads.

mod alert_rules;
mod bad_input;
mod common;
mod completions;
mod conformance;
mod conventions;
mod harness_selftest;
mod heal;
mod health;
mod hilo;
mod index;
mod inherited_signals;
mod layers;
mod lock_cli;
mod lock_exclusion;
mod lock_fencing;
mod lock_library;
mod logs;
mod messages;
mod output;
mod package;
mod pool;
mod replicas;
mod riding_out;
mod run;
mod security;
mod seq_cli;
mod seq_creation;
mod seq_serve;
mod supervision;
