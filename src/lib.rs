//! yaraus: lease scarce, cluster-wide things from Redis to ordinary processes.
//!
//! The binary is a thin shell over this library: [`cli`] defines the command
//! line, [`commands::execute`] runs it, and [`error::Error::exit_code`] turns
//! a failure into an exit status. The pieces are usable on their own:
//!
//! * [`store`]: connecting to Redis (URL forms, timeouts, reconnecting,
//!   `WAIT` for replicas), with every error sorted into what the user sees;
//! * [`lease`]: the worker-id pool (Go yaraus keyspace): init, acquire,
//!   renew, release, stats, list;
//! * [`keeper`]: renewing any [`keeper::Claim`] in the background, with a
//!   local deadline that comes before the server's;
//! * [`supervise`] and [`hold`]: the child in its own process group, signals
//!   forwarded, killed on loss, exit status as a shell reports it;
//! * [`lock`]: locks over one or N Redis masters (Redlock), with fencing
//!   tokens, and semaphores; [`seq`]: the majority monotonic sequence under
//!   the fencing tokens, and the quorum of independent masters both use.

pub mod cli;
pub mod commands;
pub mod error;
pub mod guard;
pub mod hold;
pub mod keeper;
pub mod lease;
pub mod lock;
#[macro_use]
pub mod log;
pub mod seq;
pub mod signals;
pub mod spawn;
pub mod store;
pub mod supervise;
