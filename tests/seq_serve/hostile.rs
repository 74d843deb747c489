//! Clients that try to take more than their share: a transaction whose
//! replies would pass the bound on one connection's replies; connections
//! that never authenticate, holding every slot or idling before AUTH; a
//! password guessed again and again, by AUTH and by HELLO AUTH.

use super::*;
use common::metrics::Endpoint;

const PASSWORD: &str = "s3cret";

/// `*N` then `INFO`, `N` times, as one pipeline inside `MULTI`.
fn multi_of_infos(n: usize) -> Vec<u8> {
    let mut burst = b"MULTI\r\n".to_vec();
    for _ in 0..n {
        burst.extend_from_slice(b"INFO\r\n");
    }
    burst
}

/// The bound the server states in its refusal: "... exceed N bytes ...".
fn stated_bound(error: &str) -> u64 {
    let words: Vec<&str> = error.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| w.trim_end_matches(',') == "bytes")
        .unwrap_or_else(|| panic!("no bound in {error}"));
    words[at - 1].parse().unwrap()
}

#[test]
fn a_transaction_whose_replies_pass_the_bound_closes_the_connection_and_others_go_on() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    // 100 sequences of 500-byte names make INFO about 60 KB.
    let mut c = serve.client();
    let mut burst = Vec::new();
    for i in 0..100 {
        let name = format!("{i:03}{}", "n".repeat(497));
        burst.extend_from_slice(format!("*2\r\n$4\r\nINCR\r\n$500\r\n{name}\r\n").as_bytes());
    }
    c.raw(&burst);
    for _ in 0..100 {
        assert_eq!(c.read(), Some(Reply::Int(1)));
    }
    let Reply::Bulk(Some(info)) = c.send(&["INFO"]) else {
        panic!("INFO is a bulk string")
    };
    let info_kib = info.len() as u64 / 1024;

    // A transaction within the bound is answered.
    c.raw(&multi_of_infos(2));
    c.raw(b"EXEC\r\n");
    for _ in 0..3 {
        c.read();
    }
    assert!(matches!(c.read(), Some(Reply::Array(a)) if a.len() == 2));

    // 1,024 INFOs: about 60 MB of replies asked for with 7 KB.
    let quiet = Instant::now();
    assert_eq!(serve.client().send(&["PING"]), status("PONG"));
    eprintln!(
        "a PING on a new connection, nothing else going on: {:?}",
        quiet.elapsed()
    );
    // The peak from here on: VmHWM starts again from VmRSS (Linux 4.0).
    std::fs::write(format!("/proc/{}/clear_refs", serve.run.pid()), "5").unwrap();
    let rss_before = serve.memory_kib("VmRSS");
    let mut hog = serve.client();
    hog.raw(&multi_of_infos(1024));
    for _ in 0..1025 {
        hog.read();
    }
    hog.raw(b"EXEC\r\n");
    let sent = Instant::now();
    let mut other = serve.client();
    assert_eq!(other.send(&["PING"]), status("PONG"));
    eprintln!(
        "another client's PING answered {:?} after the EXEC",
        sent.elapsed()
    );
    let refusal = hog.read().expect("a reply to EXEC");
    let bound_kib = stated_bound(refusal.error()) / 1024;
    assert!(hog.closed(), "the connection stays open after {refusal:?}");
    // The server held at most the bound and the reply that crossed it,
    // each twice (its text and its encoding).
    let peak = serve.memory_kib("VmHWM");
    let allowed = 2 * (bound_kib + info_kib);
    assert!(
        peak <= rss_before + allowed,
        "RSS went from {rss_before} KiB to {peak} KiB (allowed: {allowed} KiB more)"
    );
    eprintln!("RSS {rss_before} KiB before, {peak} KiB at most; bound {bound_kib} KiB");
    assert_eq!(
        serve.counter("stats", "client_output_buffer_limit_disconnections"),
        1
    );
    // Logged through the logger's queue: awaited, not read at once.
    serve.run.wait_log("bound on one connection's replies");
    assert_eq!(other.send(&["INCR", "orders"]), Reply::Int(1));
}

#[test]
fn the_password_holder_gets_in_while_strangers_hold_every_slot() {
    let servers = masters(3, true);
    let serve = Serve::start_env(
        &servers,
        &["--max-clients", "10"],
        &[("YARAUS_SEQ_PASSWORD", PASSWORD)],
    );
    let mut strangers: Vec<Client> = (0..10).map(|_| serve.client()).collect();
    for s in &mut strangers {
        assert!(s.send(&["PING"]).error().starts_with("NOAUTH"));
    }
    let mut holder = serve.client();
    assert!(matches!(
        holder.send(&["HELLO", "2", "AUTH", "default", PASSWORD]),
        Reply::Array(_)
    ));
    assert_eq!(holder.send(&["INCR", "orders"]), Reply::Int(1));
    // The stranger that waited longest gave its slot, and was told why.
    let told = strangers[0].read().expect("a reason before the close");
    assert!(told.error().contains("not authenticated"), "{told:?}");
    assert!(strangers[0].closed());
    for s in &mut strangers[1..] {
        assert!(s.send(&["PING"]).error().starts_with("NOAUTH"));
    }
    // Asked on the holder's connection: a new one would take a slot.
    let Reply::Bulk(Some(stats)) = holder.send(&["INFO", "stats"]) else {
        panic!("INFO is a bulk string")
    };
    assert_eq!(info_field(&stats, "unauthenticated_evicted"), 1);
    // Authenticated clients are never made to give their slot.
    for s in &mut strangers[1..] {
        assert_eq!(s.send(&["AUTH", PASSWORD]), status("OK"));
    }
    let mut one_more = serve.client();
    assert_eq!(
        one_more.read(),
        Some(Reply::Error("ERR max number of clients reached".into()))
    );
}

#[test]
fn a_connection_that_does_not_authenticate_in_time_is_closed_busy_or_idle() {
    let servers = masters(3, true);
    let serve = Serve::start_env(
        &servers,
        &["--idle-timeout", "1s"],
        &[("YARAUS_SEQ_PASSWORD", PASSWORD)],
    );
    let mut holder = serve.client();
    assert_eq!(holder.send(&["AUTH", PASSWORD]), status("OK"));
    let mut idle = serve.client();
    let mut stranger = serve.client();
    // Both stay busy (never idle for the timeout); only the stranger,
    // who never authenticates, is closed.
    let started = Instant::now();
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "an unauthenticated connection was kept 30 s"
        );
        match stranger.try_send(&["PING"]) {
            Some(Reply::Error(e)) if e.starts_with("NOAUTH") => {}
            // Told why, then closed (or reset: the PING came too late).
            Some(told) => {
                assert!(
                    told.error().contains("not authenticated in time"),
                    "{told:?}"
                );
                assert!(stranger.closed());
                break;
            }
            None => break,
        }
        assert_eq!(holder.send(&["PING"]), status("PONG"));
        thread::sleep(Duration::from_millis(50));
    }
    assert!(started.elapsed() >= Duration::from_millis(900));
    // One that sent nothing is closed for the same reason, and told so.
    let told = idle.read().expect("a reason before the close");
    assert!(
        told.error().contains("not authenticated in time"),
        "{told:?}"
    );
    assert!(idle.closed());
    assert_eq!(serve.counter("stats", "auth_timeouts"), 2);
    assert_eq!(holder.send(&["INCR", "orders"]), Reply::Int(1));
}

#[test]
fn wrong_passwords_are_paused_counted_logged_and_close_the_connection() {
    let servers = masters(3, true);
    let serve = Serve::start_env(
        &servers,
        &["--metrics-listen", "127.0.0.1:0"],
        &[("YARAUS_SEQ_PASSWORD", PASSWORD)],
    );
    let metrics = Endpoint::from_log(|| serve.run.log());
    // Ten guesses in one write: a few answers, paused, then the close.
    let mut guesser = serve.client();
    let peer = guesser.writer.local_addr().unwrap().to_string();
    let mut burst = Vec::new();
    for n in 0..10 {
        burst.extend_from_slice(format!("AUTH guess{n}\r\n").as_bytes());
    }
    let started = Instant::now();
    guesser.raw(&burst);
    let mut refused = 0;
    while let Some(reply) = guesser.read() {
        assert!(reply.error().starts_with("WRONGPASS"), "{reply:?}");
        refused += 1;
    }
    let took = started.elapsed();
    assert!(refused < 10, "all ten guesses answered on one connection");
    eprintln!("{refused} guesses answered in {took:?}, then the close");
    assert_eq!(serve.counter("stats", "acl_access_denied_auth"), refused);

    // HELLO AUTH is the same check; the right password still works on a
    // connection that failed once.
    let mut d = serve.client();
    assert!(
        d.send(&["HELLO", "3", "AUTH", "default", "guess"])
            .error()
            .starts_with("WRONGPASS")
    );
    assert_eq!(d.send(&["AUTH", PASSWORD]), status("OK"));
    assert_eq!(d.send(&["INCR", "orders"]), Reply::Int(1));
    assert_eq!(
        serve.counter("stats", "acl_access_denied_auth"),
        refused + 1
    );
    assert_eq!(
        metrics.value("yaraus_seq_auth_failures_total"),
        (refused + 1) as f64
    );
    let log = serve.run.log();
    assert!(
        log.contains(&format!("wrong password from {peer}")),
        "{log}"
    );
    assert!(!log.contains("guess") && !log.contains(PASSWORD), "{log}");
    // Each refusal came after the pause the log states.
    let pause = log
        .split_once("each is answered after ")
        .and_then(|(_, rest)| rest.split_once("ms"))
        .and_then(|(ms, _)| ms.parse().ok())
        .unwrap_or_else(|| panic!("no pause in {log}"));
    assert!(
        took >= Duration::from_millis(pause) * refused as u32,
        "{refused} refusals in {took:?}, {pause} ms each"
    );
}
