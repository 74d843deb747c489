//! yaraus: lease scarce, cluster-wide things from Redis to ordinary processes.
//!
//! The `yaraus` binary (`src/bin/yaraus/`) is a thin shell over this
//! library: it parses the command line, works the settings out once, calls
//! the library and turns an error into an exit status
//! ([`error::Error::exit_code`]). The pieces are usable on their own:
//!
//! * [`store`]: connecting to Redis (URL forms, timeouts, reconnecting,
//!   `WAIT` for replicas), with every error sorted into what the user sees;
//!   a [`store::Quorum`] of independent masters asked all at once;
//! * [`claim`]: the life of any claim: one attempt ([`claim::Claimant`]),
//!   the wait loop, validity, and [`claim::Keeper`], which renews it;
//! * [`lease`]: the worker-id pool (Go yaraus keyspace): init, acquire,
//!   renew, release, stats, list;
//! * [`supervise`]: running a command only while its claim holds: a watchdog process that kills the
//!   command's whole tree by the claim's deadline however yaraus dies or
//!   stalls, signals forwarded, exit status as a shell reports it;
//! * [`lock`]: locks over one or N Redis masters (Redlock), with fencing
//!   tokens, and semaphores; [`seq`]: the majority monotonic sequence under
//!   the fencing tokens;
//! * [`hilo`]: ids in blocks from windows on several Redis shards, the agent
//!   that stocks them, and the in-process [`hilo::Allocator`];
//! * [`index`]: distributed peer indexing (index, replicas) per interval.

#![deny(unsafe_code)]

pub mod acl;
pub mod base;
pub mod claim;
pub mod context;
pub mod error;
pub mod hilo;
pub mod index;
pub mod lease;
pub mod lock;
#[macro_use]
pub mod log;
pub mod seq;
pub mod store;
pub mod supervise;
pub mod timing;
