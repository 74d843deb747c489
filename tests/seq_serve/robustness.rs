//! Clients that misbehave (garbage, a 1 GB bulk length, half a frame, a
//! reader that never reads), too many connections, more connections than
//! file descriptors, and SIGTERM under load or with a round in flight.

use super::*;
use common::{EVENT, wait_until};
use std::net::TcpStream;

#[test]
fn bad_clients_are_closed_and_disturb_no_one() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &["--idle-timeout", "500ms"]);
    let rss = || serve.memory_kib("VmRSS");
    let mut good = serve.client();
    assert_eq!(good.send(&["INCR", "orders"]), Reply::Int(1));
    let before = rss();

    // A header that is not a number: an error, then the end.
    let mut bad = serve.client();
    bad.raw(b"*abc\r\n");
    assert_eq!(
        bad.read(),
        Some(Reply::Error(
            "ERR Protocol error: invalid multibulk length".into()
        ))
    );
    assert!(bad.closed());

    // A 1 GB bulk string announced: refused before a byte is buffered.
    let mut huge = serve.client();
    huge.raw(b"*2\r\n$4\r\nINCR\r\n$1073741824\r\n");
    assert_eq!(
        huge.read(),
        Some(Reply::Error(
            "ERR Protocol error: invalid bulk length".into()
        ))
    );
    assert!(huge.closed());

    // Random bytes (a fixed seed): errors or a close, never a crash.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..20 {
        let mut noise = serve.client();
        let bytes: Vec<u8> = (0..4096)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        // The server may close before it has read everything.
        let _ = noise.writer.write_all(&bytes);
        drop(noise);
    }

    assert_eq!(
        good.send(&["INCR", "orders"]),
        Reply::Int(2),
        "a good client was disturbed"
    );

    // Half a frame, then silence: closed after --idle-timeout (the good
    // client, idle as long, is closed too: a new one is served).
    let mut half = serve.client();
    let started = Instant::now();
    half.raw(b"*2\r\n$4\r\nINCR\r\n$6\r\nord");
    assert!(half.closed());
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(450), "closed after {took:?}");
    assert_eq!(serve.client().send(&["INCR", "orders"]), Reply::Int(3));

    // A client that pipelines big ECHOs and reads nothing: the server stops
    // reading it once 64 KiB of replies wait, and holds no more. Its writes
    // then stall until their timeout: the event waited for.
    let hog = std::net::TcpStream::connect(("127.0.0.1", serve.port)).unwrap();
    hog.set_write_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let stop = hog.try_clone().unwrap();
    let body = "x".repeat(60_000);
    let echo = format!("*2\r\n$4\r\nECHO\r\n${}\r\n{body}\r\n", body.len());
    let total = echo.len() * 500;
    let writer = thread::spawn(move || {
        let mut hog = hog;
        let mut written = 0;
        for _ in 0..500 {
            if hog.write_all(echo.as_bytes()).is_err() {
                break;
            }
            written += echo.len();
        }
        written
    });
    let written = writer.join().unwrap();
    assert!(written < total, "the server read all {total} bytes");
    let mut other = serve.client();
    assert_eq!(other.send(&["INCR", "orders"]), Reply::Int(4));
    let grown = rss().saturating_sub(before);
    assert!(grown < 8 * 1024, "the server grew by {grown} KiB");
    let _ = stop.shutdown(std::net::Shutdown::Both);
    assert_eq!(other.send(&["PING"]), status("PONG"));
}

#[test]
fn connections_beyond_max_clients_get_an_error_and_are_closed() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &["--max-clients", "5"]);
    let mut five: Vec<Client> = (0..5).map(|_| serve.client()).collect();
    for c in &mut five {
        assert_eq!(c.send(&["PING"]), status("PONG"));
    }
    let mut sixth = serve.client();
    assert_eq!(
        sixth.read(),
        Some(Reply::Error("ERR max number of clients reached".into()))
    );
    assert!(sixth.closed());
    assert_eq!(five[0].send(&["INCR", "orders"]), Reply::Int(1));
    // One leaves: a new one is served once the server has seen it go.
    drop(five.pop());
    common::wait_until("a freed slot", common::EVENT, || {
        Client::connect(serve.port).try_send(&["PING"]) == Some(status("PONG"))
    });
    let Reply::Bulk(Some(info)) = five[0].send(&["INFO", "clients"]) else {
        panic!()
    };
    assert!(info.contains("rejected_connections:"), "{info}");
    assert!(!info.contains("rejected_connections:0\r"), "{info}");
}

#[test]
fn out_of_file_descriptors_the_accept_warning_is_written_once_per_interval() {
    // Enough for the nodes, the listeners and a few clients, not for all.
    const FILES: u32 = 40;
    let servers = masters(3, true);
    let since = Instant::now();
    let serve = Serve::start_with_files(&servers, &[], FILES);
    assert_eq!(serve.client().send(&["INCR", "orders"]), Reply::Int(1));
    let warnings = || {
        serve
            .run
            .log()
            .matches("cannot accept a connection")
            .count()
    };
    // The kernel completes every connection; accepting those beyond the
    // descriptors fails (EMFILE), and is tried again ten times a second.
    let clients: Vec<TcpStream> = (0..FILES)
        .map(|_| TcpStream::connect(("127.0.0.1", serve.port)).expect("connect"))
        .collect();
    wait_until("the first warning", EVENT, || warnings() >= 1);
    // What is checked is that lines do not come: no event to wait for, so
    // a window of failing accepts (longer only makes it stricter), and the
    // bound from the time since before the first line could be written.
    thread::sleep(Duration::from_secs(1));
    let bound = 1 + since.elapsed().as_secs() / 10;
    assert!(warnings() as u64 <= bound, "{}", serve.run.log());
    // Descriptors free again: the connections waiting are served.
    drop(clients);
    assert_eq!(serve.client().send(&["INCR", "orders"]), Reply::Int(2));
}

#[test]
fn sigterm_under_load_answers_or_closes_every_client_and_exits_0() {
    let servers = masters(3, true);
    let mut serve = Serve::start(&servers, &[]);
    let served = Arc::new(AtomicU64::new(0));
    let clients: Vec<_> = (0..20)
        .map(|_| {
            let (served, port) = (served.clone(), serve.port);
            thread::spawn(move || {
                let mut c = Client::connect(port);
                let mut ids = Vec::new();
                // Until the server closes: every reply is an id or an error.
                while let Some(reply) = c.try_send(&["INCR", "orders"]) {
                    match reply {
                        Reply::Int(n) => ids.push(n as u64),
                        Reply::Error(e) => assert!(e.starts_with("ERR"), "{e}"),
                        other => panic!("{other:?}"),
                    }
                    served.fetch_add(1, Ordering::Relaxed);
                }
                ids
            })
        })
        .collect();
    common::wait_until("ids under load", Duration::from_secs(60), || {
        served.load(Ordering::Relaxed) >= 500
    });
    serve.run.signal(Signal::SIGTERM);
    assert_eq!(serve.run.wait(), 0, "{}", serve.run.log());
    let mut seen = HashSet::new();
    for c in clients {
        for id in c
            .join()
            .expect("a client saw something else than an id, an error or a close")
        {
            assert!(seen.insert(id), "{id} twice");
        }
    }
    assert!(serve.run.log().contains("stopping"), "{}", serve.run.log());
}

#[test]
fn sigterm_waits_for_the_round_in_flight_and_answers_it() {
    let servers = masters(3, true);
    let mut serve = Serve::start(&servers, &["--timeout", "1s"]);
    let mut c = serve.client();
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(1));
    servers[1].sigstop();
    servers[2].sigstop();
    c.raw(b"*2\r\n$4\r\nINCR\r\n$6\r\norders\r\n");
    common::wait_until("the INCR to reach its round", common::EVENT, || {
        serve.stat("orders", "requests") >= 2.0
    });
    let mut idle = serve.client();
    assert_eq!(idle.send(&["PING"]), status("PONG"));
    serve.run.signal(Signal::SIGTERM);
    // The idle connection is closed at once; the one in a round gets its
    // answer (no majority: an error, never an id), then the close.
    assert!(idle.closed());
    let reply = c.read().expect("an answer before the close");
    assert!(
        reply.error().starts_with("ERR cannot hear from a majority"),
        "{reply:?}"
    );
    assert!(c.closed());
    assert_eq!(serve.run.wait(), 0, "{}", serve.run.log());
    servers[1].sigcont();
    servers[2].sigcont();
}
