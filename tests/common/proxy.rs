//! A TCP proxy in front of one server, which a test can cut and heal: a
//! network partition between the clients that dial the proxy and the server.
//!
//! [`Proxy::cut`] closes every connection it carries (both ends see EOF, as
//! after a reset) and from then on *blackholes* new ones: the kernel still
//! completes the TCP handshake on the listening socket, the proxy accepts it
//! and then never forwards a byte, so a client's connect "succeeds" and its
//! first command is never answered — what a partition that drops packets
//! looks like, and the path where a client must rely on its own timeouts.
//! [`Proxy::heal`] closes the blackholed connections and forwards again.
//!
//! [`Proxy::delay`] makes the server a straggler instead: every chunk it
//! sends is held that long before it is forwarded (requests go through at
//! once), so each request/reply exchange takes at least that long and
//! still completes — a node whose answers come late but come. A chunk read
//! while one is held waits its turn, so the delay is a lower bound, which
//! is what a test of a lifetime needs. A zero delay forwards at once again.
//!
//! Plain std threads: one accepting, two per connection pumping bytes. The
//! proxy knows nothing of RESP.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// How long the proxy waits for the server to accept a connection it forwards.
const UPSTREAM_CONNECT: Duration = Duration::from_secs(2);

/// A proxy on a free port of 127.0.0.1 forwarding to `127.0.0.1:upstream`.
/// Dropping it closes everything it holds.
pub struct Proxy {
    port: u16,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

struct Shared {
    upstream: u16,
    stopping: AtomicBool,
    next_id: AtomicU64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    cut: bool,
    /// How long each chunk from the server is held ([`Proxy::delay`]).
    delay: Duration,
    /// Forwarded connections: (client side, server side), by id.
    live: HashMap<u64, (TcpStream, TcpStream)>,
    /// Connections accepted while cut, never answered.
    held: Vec<TcpStream>,
}

impl Proxy {
    /// Starts forwarding to the server on `127.0.0.1:upstream_port`.
    pub fn start(upstream_port: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().expect("proxy address").port();
        let shared = Arc::new(Shared {
            upstream: upstream_port,
            stopping: AtomicBool::new(false),
            next_id: AtomicU64::new(0),
            state: Mutex::new(State::default()),
        });
        let accept = {
            let shared = shared.clone();
            thread::Builder::new()
                .name(format!("proxy-{port}"))
                .spawn(move || accept_loop(listener, shared))
                .expect("start the proxy thread")
        };
        Proxy {
            port,
            shared,
            accept: Some(accept),
        }
    }

    /// The port clients dial.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:PORT/0?ns=NS`: the server, through this proxy.
    pub fn url_ns(&self, ns: &str) -> String {
        format!("redis://127.0.0.1:{}/0?ns={ns}", self.port)
    }

    /// Partition: closes every forwarded connection now and blackholes new
    /// ones until [`heal`](Self::heal). Returns how many connections it closed.
    pub fn cut(&self) -> usize {
        let mut state = self.shared.lock();
        state.cut = true;
        let n = state.live.len();
        for (_, (a, b)) in state.live.drain() {
            let _ = a.shutdown(Shutdown::Both);
            let _ = b.shutdown(Shutdown::Both);
        }
        n
    }

    /// Ends the partition: the blackholed connections are closed (their
    /// clients see EOF and dial again), new ones are forwarded.
    pub fn heal(&self) {
        let mut state = self.shared.lock();
        state.cut = false;
        for s in state.held.drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// Holds every chunk the server sends from now on for `delay` before
    /// forwarding it (the module docs); `Duration::ZERO` ends that.
    pub fn delay(&self, delay: Duration) {
        self.shared.lock().delay = delay;
    }

    /// Whether the proxy is cut now.
    pub fn is_cut(&self) -> bool {
        self.shared.lock().cut
    }

    /// How many connections are being forwarded now.
    pub fn connections(&self) -> usize {
        self.shared.lock().live.len()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.cut();
        self.heal();
        // Wake the accepting thread, blocked in accept().
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for client in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        let _ = client.set_nodelay(true);
        if shared.lock().cut {
            shared.lock().held.push(client);
            continue;
        }
        let addr = SocketAddr::from(([127, 0, 0, 1], shared.upstream));
        let Ok(server) = TcpStream::connect_timeout(&addr, UPSTREAM_CONNECT) else {
            // The server is down: the client sees its connection closed.
            continue;
        };
        let _ = server.set_nodelay(true);
        let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
        {
            let mut state = shared.lock();
            if state.cut {
                // Cut while we dialed: this one is partitioned too.
                state.held.push(client);
                continue;
            }
            let (Ok(c), Ok(s)) = (client.try_clone(), server.try_clone()) else {
                continue;
            };
            state.live.insert(id, (c, s));
        }
        for (from, to, from_server) in [
            (client.try_clone(), server.try_clone(), false),
            (server.try_clone(), client.try_clone(), true),
        ] {
            let (Ok(from), Ok(to)) = (from, to) else {
                continue;
            };
            let shared = shared.clone();
            let _ = thread::Builder::new()
                .name("proxy-pump".into())
                .spawn(move || pump(from, to, id, from_server, &shared));
        }
    }
}

/// Copies bytes one way until either side closes; then closes both. What
/// comes `from_server` is held for the proxy's delay first.
fn pump(mut from: TcpStream, mut to: TcpStream, id: u64, from_server: bool, shared: &Shared) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let delay = shared.lock().delay;
                if from_server && !delay.is_zero() {
                    thread::sleep(delay);
                }
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
    shared.lock().live.remove(&id);
}
