//! How a connection reads and writes (one read per
//! readiness event into the connection's own buffer, every pipelined
//! request parsed, all the replies of a turn in one write), over real
//! sockets: a request cut at every byte across two reads, 10,000 requests
//! in one write, a client that reads none of its replies while another
//! one is served, and the idle timer (one per connection, re-armed when it
//! is due) against a busy connection and an idle one.

use super::*;

/// A `PING` and the first `cut` bytes of `frame` in one write, the `PONG`
/// read back (so the server has read the piece and holds it, unparsed,
/// across the wait), then the rest of the frame: its reply.
fn cut_across_reads(c: &mut Client, frame: &[u8], cut: usize) -> Reply {
    let mut first = b"*1\r\n$4\r\nPING\r\n".to_vec();
    first.extend_from_slice(&frame[..cut]);
    c.raw(&first);
    assert_eq!(c.read(), Some(status("PONG")), "cut at {cut}");
    c.raw(&frame[cut..]);
    c.read()
        .unwrap_or_else(|| panic!("closed after a cut at {cut}"))
}

#[test]
fn a_request_cut_at_every_byte_across_two_reads_is_answered_whole() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let mut c = serve.client();
    let mut next = 1;
    let incr: &[u8] = b"*2\r\n$4\r\nINCR\r\n$6\r\norders\r\n";
    let incrby: &[u8] = b"*3\r\n$6\r\nINCRBY\r\n$6\r\norders\r\n$2\r\n10\r\n";
    let inline: &[u8] = b"INCR orders\r\n";
    for (frame, count) in [(incr, 1), (incrby, 10), (inline, 1)] {
        for cut in 1..frame.len() {
            let reply = cut_across_reads(&mut c, frame, cut);
            // INCRBY answers the last id of its block.
            let want = next + count - 1;
            assert_eq!(reply, Reply::Int(want), "{frame:?} cut at {cut}");
            next += count;
        }
    }
    let echo = format!("*2\r\n$4\r\nECHO\r\n$5000\r\n{}\r\n", "e".repeat(5000));
    for cut in [1, 14, 20, 2500, echo.len() - 1] {
        let reply = cut_across_reads(&mut c, echo.as_bytes(), cut);
        assert_eq!(reply, bulk(&"e".repeat(5000)));
    }
}

#[test]
fn ten_thousand_pipelined_incrs_in_one_write_come_back_in_order() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let mut c = serve.client();
    let mut burst = Vec::new();
    for _ in 0..10_000 {
        burst.extend_from_slice(b"*2\r\n$4\r\nINCR\r\n$6\r\norders\r\n");
    }
    burst.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
    // Written by another thread: the server answers while it reads, and
    // this thread reads the answers meanwhile.
    let mut writer = c.writer.try_clone().unwrap();
    let sent = thread::spawn(move || writer.write_all(&burst).is_ok());
    for want in 1..=10_000 {
        assert_eq!(c.read(), Some(Reply::Int(want)));
    }
    assert_eq!(c.read(), Some(status("PONG")));
    assert!(sent.join().unwrap());
    // Requests read together share a round: about one round per turn of
    // the connection (256 requests), not one per request.
    let rounds = serve.stat("orders", "rounds");
    assert!(
        rounds <= 200.0,
        "10,000 pipelined INCRs took {rounds} rounds"
    );
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(10_001));
}

#[test]
fn a_client_that_reads_no_replies_stalls_no_one_else() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let mut other = serve.client();
    assert_eq!(other.send(&["INCR", "orders"]), Reply::Int(1));

    // INCRs, each with a 16 KB ECHO so that its replies fill the socket's
    // buffers in a few hundred rounds, and nothing read: the server's
    // write to it waits, it reads no more of it, and this client's writes
    // stall until their timeout (the event waited for).
    let hog = std::net::TcpStream::connect(("127.0.0.1", serve.port)).unwrap();
    hog.set_write_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let body = "x".repeat(16_000);
    let pair = format!(
        "*2\r\n$4\r\nINCR\r\n$6\r\norders\r\n*2\r\n$4\r\nECHO\r\n${}\r\n{body}\r\n",
        body.len()
    );
    let mut hog_writer = hog.try_clone().unwrap();
    let stalled = thread::spawn(move || {
        for _ in 0..100_000 {
            if hog_writer.write_all(pair.as_bytes()).is_err() {
                return true;
            }
        }
        false
    });
    assert!(
        stalled.join().unwrap(),
        "the server read 1.6 GB of a client that reads nothing"
    );

    // The stalled client's INCRs shared rounds with these; they are
    // answered all the same.
    let mut last = 1;
    for _ in 0..50 {
        let id = other.send(&["INCR", "orders"]).id().unwrap();
        assert!(id > last, "{id} after {last}");
        last = id;
    }
    let mut newcomer = serve.client();
    assert!(newcomer.send(&["INCR", "orders"]).id().unwrap() > last);
    drop(hog);
    assert_eq!(other.send(&["PING"]), status("PONG"));
}

#[test]
fn a_busy_connection_outlives_its_idle_timeout_and_an_idle_one_does_not() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &["--idle-timeout", "300ms"]);
    let mut c = serve.client();
    // Requests without a pause for three times the timeout: the timer armed
    // when the connection came is due meanwhile; it is re-armed from the
    // last request, not obeyed.
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(900) {
        assert_eq!(
            c.try_send(&["PING"]),
            Some(status("PONG")),
            "closed while busy"
        );
    }
    // Then silence: closed.
    assert!(c.closed());
}
