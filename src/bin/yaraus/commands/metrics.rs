//! `--metrics-listen` for the long-running subcommands: one helper, so
//! that `seq serve`, `hilo agent`, `index` and `run` bind, start and stop
//! the listener the same way.
//!
//! The listener is bound first, before the subcommand asks Redis anything,
//! so that a port in use is one line and exit 2 rather than a failure after
//! a claim was taken; and it is stopped by its channel
//! ([`yaraus::metrics::http::Listener::stop`]) whatever way the subcommand
//! ends, an error included.

use crate::cli::MetricsArgs;
use std::future::Future;
use yaraus::error::Result;
use yaraus::metrics::{Kind, Metrics, http};

/// Runs `body` with the metrics handle: recording and served when
/// `--metrics-listen` was given, [`Metrics::off`] otherwise.
pub async fn with_metrics<F, Fut>(args: &MetricsArgs, kind: Kind, body: F) -> Result<i32>
where
    F: FnOnce(Metrics) -> Fut,
    Fut: Future<Output = Result<i32>>,
{
    let Some(addr) = &args.metrics_listen else {
        return body(Metrics::off()).await;
    };
    let listener = http::bind(addr).await?;
    let metrics = Metrics::new(kind);
    let listener = http::Listener::start(listener, addr, metrics.clone());
    let result = body(metrics).await;
    listener.stop().await;
    result
}
