//! `yaraus seq serve` as a process, against real redis-servers that persist
//! every write, talked to over TCP by a raw RESP client (replies are
//! checked byte for byte: an integer is not a bulk string): the commands as
//! Redis answers them, AUTH, 64-bit ids at 2^63 and 2^64, 50 concurrent
//! clients and two servers on the same nodes (unique ids, real-time
//! order), a node killed and restarted from its AOF, a lost majority, bad
//! clients (garbage, a 1 GB bulk length, half a frame, too many
//! connections), SIGTERM under load, and the real redis-cli and
//! redis-benchmark when they are installed.
//!
//! Nothing sleeps to let time pass: every wait is for an event (the port
//! in the log, a reply, a closed socket, an exit).

#[path = "seq_serve/client.rs"]
mod client;
mod common;

use client::{Call, Client, Reply, Serve, assert_unique_and_ordered, bulk, hammer, status};
use common::lock::masters;
use nix::sys::signal::Signal;
use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const KEY: &str = "yaraus:seq:orders";

// ----- the tests ---------------------------------------------------------------

#[test]
fn commands_answer_as_redis_does() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let mut c = serve.client();
    assert_eq!(c.send(&["GET", "orders"]), Reply::Bulk(None));
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(1));
    assert_eq!(c.send(&["incrby", "orders", "10"]), Reply::Int(11));
    assert_eq!(c.send(&["GET", "orders"]), bulk("11"));
    for s in &servers {
        assert_eq!(s.query::<String>(&["GET", KEY]), "11");
    }
    for bad in ["0", "-1", "abc", "1.5", "+3", "18446744073709551616"] {
        let e = c.send(&["INCRBY", "orders", bad]);
        assert!(
            e.error().starts_with("ERR the increment must be"),
            "{bad}: {e:?}"
        );
    }
    assert!(c.send(&["INCR", ""]).error().contains("must not be empty"));
    assert!(
        c.send(&["INCR", &"n".repeat(513)])
            .error()
            .contains("longer than 512")
    );
    assert_eq!(c.send(&["GET", "orders"]), bulk("11"), "bad requests wrote");

    assert_eq!(c.send(&["PING"]), status("PONG"));
    assert_eq!(c.send(&["PING", "hi there"]), bulk("hi there"));
    assert_eq!(c.send(&["ECHO", "x\r\ny"]), bulk("x\r\ny"));
    assert_eq!(c.send(&["SELECT", "0"]), status("OK"));
    assert!(
        c.send(&["SELECT", "1"])
            .error()
            .starts_with("ERR DB index is out of range")
    );
    assert_eq!(c.send(&["CLIENT", "SETNAME", "worker-1"]), status("OK"));
    assert_eq!(c.send(&["CLIENT", "GETNAME"]), bulk("worker-1"));
    assert_eq!(
        c.send(&["CLIENT", "SETINFO", "lib-name", "x"]),
        status("OK")
    );
    let Reply::Array(hello) = c.send(&["HELLO", "2"]) else {
        panic!("HELLO is an array")
    };
    assert_eq!(hello[..2], [bulk("server"), bulk("yaraus")]);
    assert!(c.send(&["HELLO", "3"]).error().starts_with("NOPROTO"));
    assert!(
        c.send(&["AUTH", "x"])
            .error()
            .contains("without any password configured")
    );
    assert!(matches!(c.send(&["COMMAND", "COUNT"]), Reply::Int(n) if n > 0));
    assert!(c.send(&["COMMAND", "DOCS"]).error().starts_with("ERR"));
    assert_eq!(
        c.send(&["CONFIG", "GET", "appendonly"]),
        Reply::Array(vec![bulk("appendonly"), bulk("yes")])
    );
    assert_eq!(
        c.send(&["SET", "orders", "1"]).error(),
        "ERR unknown command 'SET', with args beginning with: 'orders' '1'"
    );
    assert_eq!(
        c.send(&["INCR"]).error(),
        "ERR wrong number of arguments for 'incr' command"
    );
    // Inline commands, as typed into telnet.
    c.raw(b"PING\r\nINCR orders\r\n");
    assert_eq!(c.read(), Some(status("PONG")));
    assert_eq!(c.read(), Some(Reply::Int(12)));

    // A sequence error is one -ERR line for its requests; others go on.
    for s in &servers {
        s.cmd(&["HSET", "yaraus:seq:hashed", "a", "1"]);
    }
    let e = c.send(&["INCR", "hashed"]);
    assert!(
        e.error().starts_with("ERR ") && e.error().contains("is a hash, not a counter"),
        "{e:?}"
    );
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(13));

    let requests = serve.stat("orders", "requests");
    assert_eq!(requests, 4.0);
    assert_eq!(serve.stat("hashed", "errors"), 1.0);
    assert_eq!(c.send(&["QUIT"]), status("OK"));
    assert!(c.closed());
}

#[test]
fn a_password_on_the_command_line_is_warned_of_and_one_from_the_environment_is_not() {
    let servers = masters(3, true);
    let argv = Serve::start_env(&servers, &["--requirepass", "s3cret"], &[]);
    let env = Serve::start_env(&servers, &[], &[("YARAUS_SEQ_PASSWORD", "s3cret")]);
    let warning = "--requirepass is on the command line";
    assert!(argv.run.log().contains(warning), "{}", argv.run.log());
    assert!(!env.run.log().contains(warning), "{}", env.run.log());
    assert!(!argv.run.log().contains("s3cret") && !env.run.log().contains("s3cret"));
}

#[test]
fn a_password_is_required_before_anything_else() {
    let servers = masters(3, true);
    let serve = Serve::start_env(&servers, &[], &[("YARAUS_SEQ_PASSWORD", "s3cret")]);
    let mut c = serve.client();
    assert_eq!(
        c.send(&["INCR", "orders"]).error(),
        "NOAUTH Authentication required."
    );
    assert!(c.send(&["PING"]).error().starts_with("NOAUTH"));
    assert!(c.send(&["AUTH", "wrong"]).error().starts_with("WRONGPASS"));
    assert!(c.send(&["HELLO", "2"]).error().starts_with("NOAUTH"));
    assert!(
        c.send(&["AUTH", "bob", "s3cret"])
            .error()
            .starts_with("WRONGPASS")
    );
    assert_eq!(c.send(&["AUTH", "s3cret"]), status("OK"));
    assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(1));
    let mut d = serve.client();
    assert!(matches!(
        d.send(&["HELLO", "2", "AUTH", "default", "s3cret"]),
        Reply::Array(_)
    ));
    assert_eq!(d.send(&["INCR", "orders"]), Reply::Int(2));
    assert!(
        !serve.run.log().contains("s3cret"),
        "the password was logged"
    );
}

#[test]
fn ids_stay_exact_at_2_to_the_63_and_stop_at_2_to_the_64() {
    let servers = masters(3, true);
    for s in &servers {
        s.cmd(&["SET", "yaraus:seq:big", "9223372036854775797"]);
        s.cmd(&["SET", "yaraus:seq:top", "18446744073709551610"]);
    }
    let serve = Serve::start(&servers, &[]);
    let mut c = serve.client();
    // 2^63 - 10, exactly; then past i64: the same digits as a bulk string.
    assert_eq!(c.send(&["INCR", "big"]), Reply::Int(9223372036854775798));
    assert_eq!(c.send(&["INCRBY", "big", "9"]), Reply::Int(i64::MAX));
    assert_eq!(c.send(&["INCR", "big"]), bulk("9223372036854775808"));
    assert_eq!(c.send(&["GET", "big"]), bulk("9223372036854775808"));

    // Past 2^64 - 1: an error, and no node was written.
    for k in ["10", "6"] {
        let e = c.send(&["INCRBY", "top", k]);
        assert!(e.error().contains("18446744073709551615"), "{e:?}");
    }
    for s in &servers {
        assert_eq!(
            s.query::<String>(&["GET", "yaraus:seq:top"]),
            "18446744073709551610"
        );
    }
    assert_eq!(
        c.send(&["INCRBY", "top", "5"]),
        bulk("18446744073709551615")
    );
    assert!(
        c.send(&["INCR", "top"])
            .error()
            .contains("18446744073709551615")
    );
    assert_eq!(c.send(&["GET", "top"]), bulk("18446744073709551615"));
}

#[test]
fn fifty_concurrent_clients_get_unique_ids_in_real_time_order_in_shared_rounds() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let calls = hammer(&[serve.port], 50, 100);
    assert_eq!(calls.len(), 5000);
    assert_unique_and_ordered(&calls);
    let rounds = serve.stat("orders", "rounds");
    assert!(
        serve.stat("orders", "batch_max") > 1.0,
        "no round answered two requests"
    );
    assert!(
        rounds < 5000.0,
        "{rounds} rounds for 5000 ids: no group commit"
    );
    // INCRBY blocks are consecutive and never overlap another id.
    let mut c = serve.client();
    let last = c.send(&["INCRBY", "orders", "100"]).id().unwrap();
    assert!(calls.iter().all(|call| call.id < last - 99));
}

#[test]
fn two_servers_on_the_same_nodes_stay_unique_and_ordered() {
    let servers = masters(3, true);
    let a = Serve::start(&servers, &[]);
    let b = Serve::start(&servers, &[]);
    // Every client alternates between the two, so that order is checked
    // across servers too.
    let calls = hammer(&[a.port, b.port], 16, 60);
    assert_eq!(calls.len(), 16 * 60);
    assert_unique_and_ordered(&calls);
}

#[test]
fn a_node_killed_and_restarted_from_its_aof_mid_run_never_repeats_nor_steps_back() {
    let mut servers = masters(3, true);
    let serve = Serve::start(&servers, &["--timeout", "2s"]);
    let done = Arc::new(AtomicBool::new(false));
    let served = Arc::new(AtomicU64::new(0));
    let calls = Arc::new(Mutex::new(Vec::new()));
    let clients: Vec<_> = (0..10)
        .map(|_| {
            let (done, served, calls, port) =
                (done.clone(), served.clone(), calls.clone(), serve.port);
            thread::spawn(move || {
                let mut c = Client::connect(port);
                let mut mine = Vec::new();
                while !done.load(Ordering::Relaxed) {
                    let start = Instant::now();
                    let reply = c.send(&["INCR", "orders"]);
                    if let Some(id) = reply.id() {
                        mine.push(Call {
                            start,
                            end: Instant::now(),
                            id,
                        });
                        served.fetch_add(1, Ordering::Relaxed);
                    }
                }
                calls.lock().unwrap().extend(mine);
            })
        })
        .collect();
    let wait_for_more = |n: u64| {
        let target = served.load(Ordering::Relaxed) + n;
        common::wait_until("more ids", Duration::from_secs(60), || {
            served.load(Ordering::Relaxed) >= target
        });
    };
    wait_for_more(300);
    servers[0].sigkill();
    wait_for_more(300);
    servers[0].restart();
    wait_for_more(300);
    servers[1].sigkill();
    wait_for_more(300);
    servers[1].restart();
    wait_for_more(300);
    done.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    let calls = calls.lock().unwrap();
    assert_unique_and_ordered(&calls);
    let highest = calls.iter().map(|c| c.id).max().unwrap();
    let mut c = serve.client();
    assert!(c.send(&["INCR", "orders"]).id().unwrap() > highest);
}

#[test]
fn two_of_three_frozen_give_errors_within_the_timeout_never_an_id() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &["--timeout", "1s"]);
    let mut c = serve.client();
    let before = c.send(&["INCR", "orders"]).id().unwrap();
    servers[1].sigstop();
    servers[2].sigstop();
    for _ in 0..2 {
        let started = Instant::now();
        let reply = c.send(&["INCR", "orders"]);
        let took = started.elapsed();
        let e = reply.error();
        assert!(e.starts_with("ERR cannot hear from a majority"), "{e}");
        // The contract is --timeout; the margin is for a loaded machine.
        assert!(took < Duration::from_millis(2500), "{took:?}");
    }
    assert!(c.send(&["GET", "orders"]).error().starts_with("ERR"));
    assert_eq!(
        c.send(&["PING"]),
        status("PONG"),
        "the server stopped serving"
    );
    servers[1].sigcont();
    servers[2].sigcont();
    let after = c.send(&["INCR", "orders"]).id().unwrap();
    assert!(after > before, "{after} after {before}");
    assert!(serve.stat("orders", "failed_rounds") >= 2.0);
}

#[test]
fn bad_clients_are_closed_and_disturb_no_one() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &["--idle-timeout", "500ms"]);
    let rss = || -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", serve.run.pid())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
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

/// The real tools, when installed (they come with redis-server).
#[test]
fn redis_cli_and_redis_benchmark_are_clients() {
    let on_path = |tool: &str| {
        std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
    };
    if !on_path("redis-cli") || !on_path("redis-benchmark") {
        eprintln!("redis-cli or redis-benchmark not on PATH: skipped");
        return;
    }
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let port = serve.port.to_string();
    let cli = |args: &[&str]| {
        let out = std::process::Command::new("redis-cli")
            .args(["-p", &port])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(cli(&["INCR", "orders"]), "1");
    assert_eq!(cli(&["INCRBY", "orders", "5"]), "6");
    assert_eq!(cli(&["GET", "orders"]), "6");
    let bench = std::process::Command::new("redis-benchmark")
        .args([
            "-p", &port, "-c", "10", "-n", "500", "--csv", "INCR", "orders",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&bench.stdout);
    let stderr = String::from_utf8_lossy(&bench.stderr);
    assert!(bench.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("\"INCR orders\""), "{stdout}");
    assert!(!stderr.contains("WARNING"), "{stderr}");
    assert_eq!(cli(&["GET", "orders"]), "506");
}

#[test]
fn nodes_that_do_not_persist_every_write_are_refused_at_start_unless_allowed() {
    let servers = masters(3, false);
    let mut cmd = common::yaraus();
    cmd.args(["seq", "serve", "--listen", "127.0.0.1:0"]);
    for s in &servers {
        cmd.arg("--redis").arg(s.url());
    }
    let out = cmd.output().expect("yaraus seq serve");
    assert_eq!(out.status.code(), Some(125));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("appendfsync") && err.contains("--allow-volatile"),
        "{err}"
    );
    let serve = Serve::start(&servers, &["--allow-volatile"]);
    assert_eq!(serve.client().send(&["INCR", "orders"]), Reply::Int(1));
    assert_eq!(
        serve.client().send(&["CONFIG", "GET", "appendonly"]),
        Reply::Array(vec![bulk("appendonly"), bulk("unknown")])
    );
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

#[test]
fn a_pipeline_is_answered_in_order_and_shares_rounds() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let mut c = serve.client();
    // More than a connection takes at once (256), mixed with other commands.
    let mut burst = Vec::new();
    for _ in 0..300 {
        burst.extend_from_slice(b"*2\r\n$4\r\nINCR\r\n$6\r\norders\r\nPING\r\n");
    }
    c.raw(&burst);
    let mut last = 0;
    for _ in 0..300 {
        let id = c.read().unwrap().id().unwrap();
        assert!(id > last, "{id} after {last}");
        last = id;
        assert_eq!(c.read(), Some(status("PONG")));
    }
    assert_eq!(last, 300);
    let rounds = serve.stat("orders", "rounds");
    assert!(rounds <= 10.0, "300 pipelined INCRs took {rounds} rounds");
}

#[test]
fn max_batch_caps_the_ids_of_a_round_but_never_splits_a_request() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &["--max-batch", "3"]);
    let mut c = serve.client();
    let mut burst = Vec::new();
    for _ in 0..10 {
        burst.extend_from_slice(b"INCR orders\r\n");
    }
    burst.extend_from_slice(b"INCRBY orders 7\r\nINCR orders\r\n");
    c.raw(&burst);
    let ids: Vec<u64> = (0..12).map(|_| c.read().unwrap().id().unwrap()).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17, 18]);
    assert!(serve.stat("orders", "batch_max") <= 3.0);
    // 10 INCRs at 3 a round, the 7 alone, the last INCR: at least 6 rounds.
    assert!(serve.stat("orders", "rounds") >= 6.0);
}
