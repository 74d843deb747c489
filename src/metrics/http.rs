//! The `--metrics-listen` HTTP listener: `/metrics` (the registry of
//! [`super::Metrics`]), `/healthz` and `/readyz`.
//!
//! Design: hyper 1.x (HTTP/1.1 only, which is what Prometheus and
//! Kubernetes probes speak) on the subcommand's own runtime, as a task of
//! its own. Three fixed routes did not need a router, so axum would have
//! added code and dependencies for nothing. Nothing here takes a lock the
//! supervision path takes: a scrape reads atomics and encodes them, so a
//! slow or stuck scraper delays only its own connection, never a renewal.
//! Each connection is bounded (its headers by `HEADER_TIMEOUT`, its whole
//! life by `CONNECTION_LIMIT`) so that idle scrapers cannot pile up.
//!
//! `/healthz` answers 200 whenever it is answered at all: the binary runs
//! on one runtime thread, so an answer proves that the event loop the
//! supervision runs on is turning. `/readyz` is [`super::Metrics::ready`].
//!
//! The listener is bound before Redis is touched ([`bind`]), so that a port
//! in use is one line and exit status 2 (a usage error, as for `seq serve
//! --listen`), and stopped by an explicit channel ([`Listener::stop`]) when
//! the subcommand ends.

use super::{Kind, Metrics};
use crate::error::{Error, Result};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How long a client has to send its request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest life of one connection (keep-alive included).
const CONNECTION_LIMIT: Duration = Duration::from_secs(60);

/// The content type of the OpenMetrics text the registry encodes.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Binds `addr` (`HOST:PORT`, port 0 for any free one). A failure is a
/// usage error: one line naming the flag, exit status 2.
pub async fn bind(addr: &str) -> Result<TcpListener> {
    TcpListener::bind(addr).await.map_err(|e| {
        Error::Usage(format!(
            "cannot listen on {addr} for --metrics-listen: {e}; give another HOST:PORT (port 0 \
             picks a free one)"
        ))
    })
}

/// The running listener; [`stop`](Self::stop) ends it.
pub struct Listener {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Listener {
    /// Serves `metrics` on `listener` until stopped, and says where on
    /// stderr (always, when the port was picked by the system, so that a
    /// test or an operator using port 0 can find it even with `--quiet`).
    pub fn start(listener: TcpListener, requested: &str, metrics: Metrics) -> Listener {
        let addr = listener
            .local_addr()
            .map_or_else(|_| requested.to_string(), |a: SocketAddr| a.to_string());
        if requested.ends_with(":0") {
            crate::warn!("metrics: listening on http://{addr}/metrics");
        } else {
            crate::info!("metrics: listening on http://{addr}/metrics");
        }
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(accept(listener, metrics, stopped));
        Listener { stop, task }
    }

    /// Closes the listener and every open connection, and waits for it.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

async fn accept(listener: TcpListener, metrics: Metrics, mut stopped: watch::Receiver<bool>) {
    loop {
        let accepted = tokio::select! {
            _ = stopped.changed() => return,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, mostly: pause rather than spin.
                crate::warn!("metrics: cannot accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let metrics = metrics.clone();
        let mut stopped = stopped.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let metrics = metrics.clone();
                async move { Ok::<_, Infallible>(answer(&req, &metrics)) }
            });
            let conn = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = tokio::time::timeout(CONNECTION_LIMIT, conn) => {}
                _ = stopped.changed() => {}
            }
        });
    }
}

/// The answer to one request.
fn answer(req: &Request<Incoming>, metrics: &Metrics) -> Response<Full<Bytes>> {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "only GET\n");
    }
    match req.uri().path() {
        "/metrics" => Response::builder()
            .header(header::CONTENT_TYPE, OPENMETRICS)
            .body(Full::new(Bytes::from(metrics.render())))
            .unwrap_or_else(|_| text(StatusCode::INTERNAL_SERVER_ERROR, "\n")),
        "/healthz" => text(StatusCode::OK, "ok\n"),
        "/readyz" if metrics.ready() => text(StatusCode::OK, "ready\n"),
        "/readyz" => text(StatusCode::SERVICE_UNAVAILABLE, "not ready\n"),
        _ => text(StatusCode::NOT_FOUND, "/metrics, /healthz or /readyz\n"),
    }
}

fn text(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// Runs `body` with the metrics handle: recording and served at `listen`
/// when `--metrics-listen` was given, [`Metrics::off`] otherwise; one
/// helper, so that `seq serve`, `hilo agent`, `index` and `run` bind, start
/// and stop the listener the same way.
///
/// The listener is bound first, before the subcommand asks Redis anything,
/// so that a port in use is one line and exit 2 rather than a failure after
/// a claim was taken; and it is stopped by its channel
/// ([`Listener::stop`]) whatever way the subcommand ends, an error
/// included.
pub async fn with_metrics<F, Fut>(listen: Option<&str>, kind: Kind, body: F) -> Result<i32>
where
    F: FnOnce(Metrics) -> Fut,
    Fut: std::future::Future<Output = Result<i32>>,
{
    let Some(addr) = listen else {
        return body(Metrics::off()).await;
    };
    let listener = bind(addr).await?;
    let metrics = Metrics::new(kind);
    let listener = Listener::start(listener, addr, metrics.clone());
    let result = body(metrics).await;
    listener.stop().await;
    result
}
