//! Every subcommand on the deployments users already run, against real
//! processes: a Sentinel-managed group whose master is SIGKILLed
//! (`sentinel.rs`), a Redis Cluster of three masters (`cluster.rs`), and a
//! TLS-only server with throwaway certificates made by `openssl` in the test
//! (`tls.rs`).

#[path = "../common/mod.rs"]
mod common;

mod cluster;
mod sentinel;
mod tls;

use common::{Output, run_yaraus};
use std::time::Duration;

/// How long one short-lived `yaraus` may run before the test fails.
pub const LIMIT: Duration = Duration::from_secs(60);

/// `yaraus ARGS`, expecting exit 0.
pub fn ok(args: &[&str]) -> Output {
    let out = run_yaraus(args, &[], LIMIT);
    assert_eq!(
        out.code,
        Some(0),
        "yaraus {args:?}\nstdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
    out
}
