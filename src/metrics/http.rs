//! The `--metrics-listen` HTTP listener: `/metrics` (the registry of
//! [`super::Metrics`]), `/healthz` and `/readyz`.
//!
//! Design: hyper 1.x (HTTP/1.1 only, which is what Prometheus and
//! Kubernetes probes speak) on the subcommand's own runtime, as a task of
//! its own. Three fixed routes did not need a router, so axum would have
//! added code and dependencies for nothing. Nothing here takes a lock the
//! supervision path takes: a scrape reads atomics and encodes them, so a
//! slow or stuck scraper delays only its own connection, never a renewal.
//! Each connection is bounded (its headers by [`HTTP_HEADER_TIMEOUT`], its
//! whole life by [`HTTP_CONNECTION_LIMIT`]), and at most [`MAX_CONNECTIONS`]
//! are open at once (see `Slots`), so that idle or hostile clients of this
//! port can take neither many file descriptors from the process nor the port itself
//! from the scrapers. `/metrics` answers in the format the request's
//! `Accept` asks for ([`super::format`]).
//!
//! `/healthz` answers 200 whenever it is answered at all: the binary runs
//! on one runtime thread, so an answer proves that the event loop the
//! supervision runs on is turning. `/readyz` is [`super::Metrics::ready`].
//!
//! The listener is bound before Redis is touched ([`bind`]), so that a port
//! in use is one line and exit status 2 (a usage error, as for `seq serve
//! --listen`), and stopped by an explicit channel ([`Listener::stop`]) when
//! the subcommand ends.

use super::format::Format;
use super::{Kind, Metrics};
use crate::error::{Error, Result};
use crate::timing::listen::{ACCEPT_WARNING_EVERY, HTTP_CONNECTION_LIMIT, HTTP_HEADER_TIMEOUT};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Most connections open at once. Who connects here is a Prometheus or
/// two, a Kubernetes probe, an operator's curl: a handful at a time, each
/// for milliseconds. 64 is room for all of them many times over, and
/// bounds the file descriptors this port can take from the process,
/// whose clients and Redis connections need them.
pub const MAX_CONNECTIONS: usize = 64;

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
            log::warn!("metrics: listening on http://{addr}/metrics");
        } else {
            log::info!("metrics: listening on http://{addr}/metrics");
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
    let slots = Slots::default();
    let mut warnings = crate::base::Throttle::new(ACCEPT_WARNING_EVERY);
    loop {
        let accepted = tokio::select! {
            _ = stopped.changed() => return,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, mostly: pause rather than spin.
                if let Some(held) = warnings.admit(Instant::now()) {
                    log::warn!("metrics: cannot accept a connection: {e}{held}");
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        if let Some(evicted) = slots.make_room() {
            // Closed before the next accept: the port never holds more
            // than its cap and the one connection just accepted.
            evicted.abort();
            let _ = evicted.await;
        }
        slots.serve(stream, metrics.clone(), stopped.clone());
    }
}

/// The open connections, each with when it last began a request.
///
/// When all [`MAX_CONNECTIONS`] are taken, a new connection closes the one
/// least recently active rather than being refused or left waiting: a
/// connection that never sent a request (or went quiet) is what an idle
/// or hostile client holds, while a scraper sends its request at once. So
/// a flood of idle connections costs at most the cap in descriptors, and
/// a scrape or probe that comes during it is still answered at once;
/// waiting in the kernel's backlog behind the flood (a semaphore before
/// `accept`) would hold it until idle ones timed out, and refusing it
/// (accept and close) would fail it outright.
#[derive(Clone, Default)]
struct Slots(Arc<Mutex<Open>>);

#[derive(Default)]
struct Open {
    next: u64,
    by_id: HashMap<u64, Slot>,
}

struct Slot {
    active: Instant,
    task: JoinHandle<()>,
}

impl Slots {
    fn open(&self) -> MutexGuard<'_, Open> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// When every slot is taken, the task of the connection least recently
    /// active, out of its slot (the caller ends it).
    fn make_room(&self) -> Option<JoinHandle<()>> {
        let mut open = self.open();
        if open.by_id.len() < MAX_CONNECTIONS {
            return None;
        }
        let oldest = *open.by_id.iter().min_by_key(|(_, s)| s.active)?.0;
        open.by_id.remove(&oldest).map(|s| s.task)
    }

    /// Serves `stream` on a task of its own, in a slot.
    fn serve(&self, stream: TcpStream, metrics: Metrics, stopped: watch::Receiver<bool>) {
        // Held until the slot is in: the task may only leave a slot that is.
        let mut open = self.open();
        open.next += 1;
        let id = open.next;
        let task = tokio::spawn(connection(stream, id, self.clone(), metrics, stopped));
        let active = Instant::now();
        open.by_id.insert(id, Slot { active, task });
    }

    fn touch(&self, id: u64) {
        if let Some(slot) = self.open().by_id.get_mut(&id) {
            slot.active = Instant::now();
        }
    }

    fn leave(&self, id: u64) {
        self.open().by_id.remove(&id);
    }
}

async fn connection(
    stream: TcpStream,
    id: u64,
    slots: Slots,
    metrics: Metrics,
    mut stopped: watch::Receiver<bool>,
) {
    let active = slots.clone();
    let service = service_fn(move |req| {
        active.touch(id);
        let metrics = metrics.clone();
        async move { Ok::<_, Infallible>(answer(&req, &metrics)) }
    });
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HTTP_HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = tokio::time::timeout(HTTP_CONNECTION_LIMIT, conn) => {}
        _ = stopped.changed() => {}
    }
    slots.leave(id);
}

/// The answer to one request.
fn answer(req: &Request<Incoming>, metrics: &Metrics) -> Response<Full<Bytes>> {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "only GET\n");
    }
    match req.uri().path() {
        "/metrics" => {
            let accept = req.headers().get(header::ACCEPT);
            let format = Format::negotiate(accept.and_then(|v| v.to_str().ok()));
            Response::builder()
                .header(header::CONTENT_TYPE, format.content_type())
                .header(header::VARY, "Accept")
                .body(Full::new(Bytes::from(format.rewrite(metrics.render()))))
                .unwrap_or_else(|_| text(StatusCode::INTERNAL_SERVER_ERROR, "\n"))
        }
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
