//! Proves the test harness itself: real servers start, faults are real, and
//! snapshots notice changes. If these fail, no other integration test means
//! anything.

use crate::common;

use std::time::Duration;

use common::{RedisServer, ServerOptions, wait_until};

#[test]
fn start_answers_ping_on_a_unix_socket() {
    let server = RedisServer::start();
    assert_eq!(server.query::<String>(&["PING"]), "PONG");
    assert_eq!(server.cmd(&["SET", "k", "v"]), redis::Value::Okay);
    assert_eq!(
        server.query::<Option<String>>(&["GET", "k"]).as_deref(),
        Some("v")
    );

    let socket = server.socket_path().expect("a socket server");
    assert!(socket.exists());
    assert_eq!(server.url(), format!("unix://{}", socket.display()));
    assert_eq!(
        server.url_ns("t1"),
        format!("unix://{}?ns=t1", socket.display())
    );
    assert_eq!(server.port(), None);
    // No TCP listener, no persistence.
    assert_eq!(
        server.info_field("server", "tcp_port").as_deref(),
        Some("0")
    );
    assert_eq!(
        server.query::<Vec<String>>(&["CONFIG", "GET", "save"]),
        ["save", ""]
    );
    assert_eq!(
        server.query::<Vec<String>>(&["CONFIG", "GET", "appendonly"]),
        ["appendonly", "no"]
    );

    // The URL is one redis-rs accepts too.
    let mut conn = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    assert_eq!(
        redis::cmd("GET")
            .arg("k")
            .query::<String>(&mut conn)
            .unwrap(),
        "v"
    );
}

#[test]
fn servers_are_independent() {
    let a = RedisServer::start();
    let b = RedisServer::start();
    assert_ne!(a.url(), b.url());
    a.cmd(&["SET", "only-in-a", "1"]);
    assert_eq!(b.query::<i64>(&["DBSIZE"]), 0);
}

#[test]
fn snapshot_detects_changes() {
    let server = RedisServer::start();
    assert!(server.snapshot().is_empty());

    server.cmd(&["SET", "s", "v"]);
    server.cmd(&["HSET", "ns:stats", "get_id_count", "3", "min", "1"]);
    server.cmd(&["ZADD", "ns:ids", "100", "A1", "200", "A2"]);
    server.cmd(&["SADD", "set", "b", "a"]);
    server.cmd(&["RPUSH", "list", "x", "y"]);
    let mut conn = server.conn();
    redis::cmd("SELECT").arg(3).exec(&mut conn).unwrap();
    redis::cmd("SET")
        .arg("elsewhere")
        .arg("1")
        .exec(&mut conn)
        .unwrap();

    let before = server.snapshot();
    assert_eq!(before.len(), 6, "{before:#?}");
    assert_eq!(before["s"], r#"string "v" expire=none"#);
    assert_eq!(
        before["ns:stats"],
        r#"hash {"get_id_count"="3", "min"="1"} expire=none"#
    );
    assert_eq!(before["ns:ids"], r#"zset ["A1"=100, "A2"=200] expire=none"#);
    assert_eq!(before["set"], r#"set {"a", "b"} expire=none"#);
    assert_eq!(before["list"], r#"list ["x", "y"] expire=none"#);
    assert!(before.contains_key("[db3] elsewhere"), "{before:#?}");
    assert_eq!(
        server.snapshot(),
        before,
        "a snapshot of an idle server is stable"
    );

    let changes: &[&[&str]] = &[
        &["ZADD", "ns:ids", "101", "A1"],
        &["HINCRBY", "ns:stats", "get_id_count", "1"],
        &["SADD", "set", "c"],
        &["LSET", "list", "0", "z"],
        &["APPEND", "s", "w"],
        &["PEXPIRE", "s", "100000"],
        &["SET", "new", ""],
    ];
    let mut last = before;
    for change in changes {
        server.cmd(change);
        let now = server.snapshot();
        assert_ne!(now, last, "snapshot missed {change:?}");
        last = now;
    }
    assert!(last["s"].contains("expire=@"), "{}", last["s"]);
}

#[test]
fn restart_empty_really_empties() {
    let mut server = RedisServer::start();
    let url = server.url();
    let pid = server.pid();
    server.cmd(&["SET", "k", "v"]);
    server.cmd(&["ZADD", "ns:ids", "1", "A1"]);
    // Even a dump on disk must not come back.
    server.cmd(&["SAVE"]);
    assert!(server.dir().join("dump.rdb").exists());

    server.restart_empty();
    assert_eq!(server.url(), url, "same address after restart");
    assert_ne!(server.pid(), pid, "a new process");
    assert_eq!(server.query::<i64>(&["DBSIZE"]), 0);
    assert!(server.snapshot().is_empty());
}

#[test]
fn restart_keeps_appendfsync_always_data() {
    let mut server = RedisServer::start_with(ServerOptions {
        appendfsync_always: true,
        ..Default::default()
    });
    assert_eq!(
        server.query::<Vec<String>>(&["CONFIG", "GET", "appendfsync"]),
        ["appendfsync", "always"]
    );
    server.cmd(&["INCR", "seq"]);
    server.cmd(&["INCR", "seq"]);
    server.restart();
    assert_eq!(server.query::<i64>(&["GET", "seq"]), 2);
}

#[test]
fn sigkill_makes_the_server_unreachable() {
    let mut server = RedisServer::start();
    let pid = server.pid();
    server.sigkill();
    assert!(!server.is_running());
    assert!(!server.ping());
    assert!(server.try_conn().is_err());
    // Reaped: no zombie left.
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    server.restart_empty();
    assert!(server.ping());
}

#[test]
fn sigstop_freezes_and_sigcont_resumes() {
    let server = RedisServer::start();
    let conn = server.conn();
    conn.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut conn = conn;
    assert_eq!(
        redis::cmd("PING").query::<String>(&mut conn).unwrap(),
        "PONG"
    );

    server.sigstop();
    let err = redis::cmd("PING").query::<String>(&mut conn).unwrap_err();
    assert!(err.is_timeout(), "expected a read timeout, got {err:?}");

    server.sigcont();
    let fresh = server.conn();
    fresh
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut fresh = fresh;
    assert_eq!(
        redis::cmd("PING").query::<String>(&mut fresh).unwrap(),
        "PONG"
    );
}

#[test]
fn replica_syncs_and_promote_makes_it_writable() {
    let master = RedisServer::start_with(ServerOptions {
        tcp: true,
        ..Default::default()
    });
    master.cmd(&["SET", "before", "1"]);
    let replica = RedisServer::start_with(ServerOptions {
        replica_of: Some(&master),
        ..Default::default()
    });
    replica.wait_replica_synced(&master);
    assert_eq!(replica.query::<i64>(&["GET", "before"]), 1);

    master.cmd(&["HSET", "h", "f", "v"]);
    replica.wait_replica_synced(&master);
    assert_eq!(replica.snapshot(), master.snapshot());

    let err = replica
        .try_query::<redis::Value>(&["SET", "x", "1"])
        .unwrap_err();
    assert!(err.to_string().contains("read only replica"), "{err}");

    replica.promote();
    assert_eq!(
        replica.info_field("replication", "role").as_deref(),
        Some("master")
    );
    replica.cmd(&["SET", "x", "1"]);
    assert_eq!(master.query::<Option<String>>(&["GET", "x"]), None);
}

#[test]
fn tcp_with_requirepass_rejects_unauthenticated_clients() {
    let master = RedisServer::start_with(ServerOptions {
        tcp: true,
        requirepass: Some("s3cr3t".into()),
        ..Default::default()
    });
    let port = master.port().expect("a TCP server");
    assert_eq!(master.url(), format!("redis://:s3cr3t@127.0.0.1:{port}/0"));
    assert_eq!(
        master.url_ns("x"),
        format!("redis://:s3cr3t@127.0.0.1:{port}/0?ns=x")
    );
    assert_eq!(master.query::<String>(&["PING"]), "PONG");

    let anonymous = redis::Client::open(format!("redis://127.0.0.1:{port}/0")).unwrap();
    let mut conn = anonymous.get_connection().unwrap();
    let err = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .exec(&mut conn)
        .unwrap_err();
    assert!(err.to_string().contains("NOAUTH"), "{err}");
    let wrong = redis::Client::open(format!("redis://:nope@127.0.0.1:{port}/0")).unwrap();
    assert!(
        wrong
            .get_connection()
            .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c))
            .is_err()
    );

    // The URL carries the password.
    let mut conn = redis::Client::open(master.url())
        .unwrap()
        .get_connection()
        .unwrap();
    redis::cmd("SET").arg("k").arg("v").exec(&mut conn).unwrap();

    // A replica of a password-protected master authenticates with masterauth.
    let replica = RedisServer::start_with(ServerOptions {
        replica_of: Some(&master),
        ..Default::default()
    });
    replica.wait_replica_synced(&master);
    assert_eq!(replica.query::<String>(&["GET", "k"]), "v");
}

#[test]
fn extra_args_are_applied() {
    let server = RedisServer::start_with(ServerOptions {
        extra_args: vec!["--maxclients".into(), "123".into()],
        ..Default::default()
    });
    assert_eq!(
        server.query::<Vec<String>>(&["CONFIG", "GET", "maxclients"]),
        ["maxclients", "123"]
    );
}

#[test]
fn drop_kills_the_server() {
    let server = RedisServer::start();
    let pid = server.pid();
    let dir = server.dir().to_path_buf();
    drop(server);
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    assert!(!dir.exists());
}

#[test]
fn wait_until_returns_once_the_condition_holds() {
    let mut calls = 0;
    wait_until("three calls", Duration::from_secs(5), || {
        calls += 1;
        calls == 3
    });
    assert_eq!(calls, 3);
}

#[test]
#[should_panic(expected = "timed out after 50ms waiting for the impossible")]
fn wait_until_panics_on_timeout() {
    wait_until("the impossible", Duration::from_millis(50), || false);
}

#[test]
fn yaraus_is_the_binary_under_test() {
    let cmd = common::yaraus();
    assert!(std::path::Path::new(cmd.get_program()).is_file());
}

#[test]
fn sentinels_promote_the_replica_when_the_master_is_sigkilled() {
    use common::sentinel::{three_watching, wait_failover};
    let tcp = || ServerOptions {
        tcp: true,
        ..Default::default()
    };
    let mut master = RedisServer::start_with(tcp());
    let replica = RedisServer::start_with(ServerOptions {
        replica_of: Some(&master),
        ..tcp()
    });
    replica.wait_replica_synced(&master);
    let sentinels = three_watching(&master, 1);
    let old = master.port().unwrap();
    assert_eq!(sentinels[0].master_port(), Some(old));
    master.sigkill();
    let new = wait_failover(&sentinels, old, Duration::from_secs(30));
    assert_eq!(Some(new), replica.port());
    wait_until(
        "the replica to become a master",
        Duration::from_secs(10),
        || replica.info_field("replication", "role").as_deref() == Some("master"),
    );
}

/// Ignores `ignored` and blocks `blocked` in this process (the mask in this
/// thread) until dropped: what `nohup` or a non-interactive shell's
/// background job hands down to `cargo test`.
struct Inherited {
    old_actions: Vec<(nix::sys::signal::Signal, nix::sys::signal::SigAction)>,
    old_mask: nix::sys::signal::SigSet,
}

impl Inherited {
    fn new(ignored: &[nix::sys::signal::Signal], blocked: nix::sys::signal::Signal) -> Inherited {
        use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, SigmaskHow, sigaction};
        let ignore = SigAction::new(SigHandler::SigIgn, SaFlags::empty(), SigSet::empty());
        let old_actions = ignored
            .iter()
            // SAFETY: SIG_IGN installs no handler.
            .map(|&sig| (sig, unsafe { sigaction(sig, &ignore) }.expect("sigaction")))
            .collect();
        let mut old_mask = SigSet::empty();
        let mut block = SigSet::empty();
        block.add(blocked);
        nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&block), Some(&mut old_mask))
            .expect("pthread_sigmask");
        Inherited {
            old_actions,
            old_mask,
        }
    }
}

impl Drop for Inherited {
    fn drop(&mut self) {
        use nix::sys::signal::{SigmaskHow, sigaction};
        for (sig, action) in &self.old_actions {
            // SAFETY: puts back the action this process had before.
            let _ = unsafe { sigaction(*sig, action) };
        }
        let _ =
            nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&self.old_mask), None);
    }
}

#[test]
fn children_start_with_default_dispositions_and_no_blocked_signal_whatever_the_test_inherited() {
    use nix::sys::signal::Signal;
    let inherited = Inherited::new(
        &[
            Signal::SIGHUP,
            Signal::SIGINT,
            Signal::SIGQUIT,
            Signal::SIGTERM,
        ],
        Signal::SIGUSR1,
    );
    let out = common::command("grep")
        .args(["-E", "^Sig(Blk|Ign):", "/proc/self/status"])
        .output()
        .expect("run grep");
    drop(inherited);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "grep: {out:?}");
    // The child's own /proc/self/status, signals 1 to 31 (bit N-1 is
    // signal N): nothing ignored, nothing blocked. Signals 32 and up are
    // glibc's own and the real-time ones, which no shell hands down.
    let mask = |name: &str| -> u64 {
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {text}"));
        u64::from_str_radix(line.trim(), 16).expect("a hex mask") & 0x7fff_ffff
    };
    assert_eq!(mask("SigIgn:"), 0, "the child inherited ignored signals");
    assert_eq!(mask("SigBlk:"), 0, "the child inherited blocked signals");
}

#[test]
fn every_process_a_test_starts_comes_from_common_command() {
    // Split so that this test does not find itself.
    let needle = concat!("Command", "::new(");
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let spawn = tests.join("common").join("spawn.rs");
    let mut offenders = Vec::new();
    let mut dirs = vec![tests];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read tests/") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && path != spawn {
                let text = std::fs::read_to_string(&path).expect("read a test file");
                for (n, line) in text.lines().enumerate() {
                    if line.contains(needle) {
                        offenders.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "start processes with common::command (or common::yaraus), which gives them \
         default signal dispositions and an empty mask:\n{}",
        offenders.join("\n")
    );
}

/// `alive_since` tells a process from a later one that reused its pid: a
/// process started after the instant does not count.
#[test]
fn alive_since_does_not_count_a_process_started_later() {
    use nix::time::{ClockId, clock_gettime};
    let mono = || {
        let t = clock_gettime(ClockId::CLOCK_MONOTONIC).expect("clock_gettime");
        t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
    };
    let before = mono();
    // Ticks are 10 ms: start well after `before`.
    std::thread::sleep(Duration::from_millis(50));
    let mut child = common::spawn::command("sleep")
        .arg("30")
        .spawn()
        .expect("sleep");
    let pid = child.id() as i32;
    let after = mono() + 20_000_000;
    assert!(common::process::alive(pid));
    assert!(
        !common::process::alive_since(pid, before),
        "started after `before`"
    );
    assert!(
        common::process::alive_since(pid, after),
        "started before `after`"
    );
    child.kill().ok();
    child.wait().ok();
    assert!(!common::process::alive_since(pid, after), "gone");
}

/// With three test binaries declared in Cargo.toml (`autotests = false`),
/// a file or folder of tests/ that no root names would be compiled by
/// nobody and its tests never run: each must be a module of one root.
#[test]
fn every_test_file_is_a_module_of_a_root() {
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let roots = ["integration", "faults", "models"];
    let declared: String = roots
        .iter()
        .map(|r| std::fs::read_to_string(tests.join(format!("{r}.rs"))).unwrap())
        .collect();
    let mut orphans = Vec::new();
    for entry in std::fs::read_dir(&tests).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let module = if path.is_dir() {
            path.join("mod.rs").exists()
        } else {
            path.extension().is_some_and(|e| e == "rs") && !roots.contains(&name.as_str())
        };
        if module && !declared.lines().any(|l| l == format!("mod {name};")) {
            orphans.push(name);
        }
    }
    assert!(
        orphans.is_empty(),
        "not a module of tests/integration.rs, faults.rs or models.rs: {orphans:?}"
    );
}

/// Only the three roots are files at the top of tests/: every other test
/// module is a folder, so that nobody (nor cargo's convention, were
/// `autotests` ever turned back on) takes it for a test target of its own.
#[test]
fn the_top_of_tests_holds_only_the_three_roots() {
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files: Vec<String> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["faults.rs", "integration.rs", "models.rs"]);
}
