//! yaraus: lease scarce, cluster-wide things from Redis to ordinary processes.
//!
//! The `yaraus` binary (`src/bin/yaraus/`) is a thin shell over this
//! library: it works the command line out once into a [`context::Context`]
//! and turns an error into an exit status ([`error::Error::exit_code`]). The
//! library has no command line: its messages name a
//! [`base::setting::Setting`], which the binary spells as its flag and an
//! embedding program as it likes. It logs through the
//! [`log`](https://docs.rs/log) facade (the node a line is about as the
//! key-value `node`) and installs no logger.
//!
//! Layers, from the top; a module imports only its own layer and those
//! below (`tests/layers.rs` checks it, and that this list and the README's
//! "How the code is laid out" match it):
//!
//! * report — [`health`]: where a deployment stands, read on every node;
//! * context — [`context`]: the settings, resolved once;
//! * domain — [`lease`] (the worker-id pool), [`lock`] (locks and
//!   semaphores over 1..N masters, fencing tokens), [`seq`] (the majority
//!   sequence, and `seq serve`), [`hilo`] (ids in blocks from windows on
//!   shards), [`index`] ((index, replicas) per interval), [`acl`] (the
//!   least ACL a Redis user needs);
//! * claims — [`claim`] (attempts, the wait loop, the keeper that renews),
//!   [`supervise`] (the command runs only while its claim holds);
//! * store — [`store`]: one Redis deployment, or a quorum of masters;
//! * metrics — [`metrics`]: the Prometheus registry and its listener;
//! * timing — [`timing`]: every timing rule, with its reason;
//! * bottom — [`base`]: the boot clock, tokens, the counter Lua prelude;
//! * errors — [`error`]: the one error type and its exit statuses.
//!
//! # Embedding
//!
//! A program uses the pieces without the binary. Every example starts from a
//! [`context::Context`]: parsed servers, a namespace, the timeouts.
//!
//! A lock over three independent masters, with its fencing token:
//!
//! ```no_run
//! use std::time::Duration;
//! use yaraus::context::Context;
//! use yaraus::store::Target;
//! use yaraus::timing::Timeouts;
//!
//! # async fn example() -> yaraus::error::Result<()> {
//! let targets = ["redis://a:6379", "redis://b:6379", "redis://c:6379"]
//!     .iter()
//!     .map(|url| Target::parse(url))
//!     .collect::<yaraus::error::Result<Vec<_>>>()?;
//! let ctx = Context::new(targets, Some("myapp"), Timeouts::default())?;
//! // Its keys in the namespace myapp; a ttl of 30 s, extended by a Keeper
//! // while held (or by `locker.extend`).
//! let options = ctx.lock_options(Duration::from_secs(30));
//! let mut locker = ctx.locker("nightly-backup", options)?;
//! // Wait up to 5 s; a future that resolves to an error would end the wait.
//! let held = locker
//!     .acquire(Some(Duration::from_secs(5)), std::future::pending())
//!     .await?;
//! println!("held, fencing token {}", held.fencing_token());
//! locker.release(held.token()).await;
//! # Ok(())
//! # }
//! ```
//!
//! Ids in blocks from the windows a `yaraus hilo agent` keeps stocked:
//!
//! ```no_run
//! use yaraus::context::Context;
//! use yaraus::hilo::{Allocator, AllocatorOptions, HiloKeys, Reserver};
//! use yaraus::store::Target;
//! use yaraus::timing::Timeouts;
//!
//! # async fn example() -> yaraus::error::Result<()> {
//! let shards = vec![Target::parse("redis://s1:6379")?, Target::parse("redis://s2:6379")?];
//! let ctx = Context::new(shards, None, Timeouts::default())?;
//! let quorum = ctx.quorum(ctx.timeouts().shard_request())?;
//! let keys = HiloKeys::new(ctx.namespace(), "orders")?;
//! let mut ids = Allocator::new(Reserver::new(quorum, keys)?, AllocatorOptions::new(100))?;
//! let id = ids.next().await?;
//! # let _ = id;
//! # Ok(())
//! # }
//! ```
//!
//! Numbers that only grow, agreed on by a majority of durable nodes:
//!
//! ```no_run
//! use tokio::time::Instant;
//! use yaraus::context::Context;
//! use yaraus::seq::{MajoritySequence, SeqKeys};
//! use yaraus::store::Target;
//! use yaraus::timing::Timeouts;
//!
//! # async fn example() -> yaraus::error::Result<()> {
//! let nodes = ["redis://n1:6379", "redis://n2:6379", "redis://n3:6379"]
//!     .iter()
//!     .map(|url| Target::parse(url))
//!     .collect::<yaraus::error::Result<Vec<_>>>()?;
//! let ctx = Context::new(nodes, None, Timeouts::default())?;
//! let mut quorum = ctx.quorum(ctx.timeouts().sequence_request())?;
//! let mut invoices = MajoritySequence::new(SeqKeys::new(ctx.namespace()).counter("invoices")?);
//! let deadline = Instant::now() + ctx.timeouts().timeout();
//! let number = invoices.next(&mut quorum, deadline).await?;
//! # let _ = number;
//! # Ok(())
//! # }
//! ```

#![deny(unsafe_code)]

pub mod acl;
pub mod base;
pub mod claim;
pub mod context;
pub mod error;
pub mod health;
pub mod hilo;
pub mod index;
pub mod lease;
pub mod lock;
pub mod metrics;
pub mod seq;
pub mod store;
pub mod supervise;
pub mod timing;
