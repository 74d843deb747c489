//! `yaraus lock` as a command, against real redis-servers: a lost lock kills
//! the child's whole group, busy locks exit with the -E code, interop with a
//! raw `SET NX PX`, auto-extension of a short lock under a long child (with a
//! master restarted empty in the middle), the script forms (--acquire,
//! --extend, --release, --info), signals while waiting, semaphores, and bad
//! input (one stderr line, the documented code, Redis unchanged).

mod common;

use common::lock::*;
use common::{RedisServer, wait_until};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::collections::HashMap;
use std::process::Stdio;
use std::time::Duration;

/// Starts `cmd` with stderr going to a file the test can watch.
fn spawn_logged(
    cmd: &mut std::process::Command,
    stderr_path: &std::path::Path,
) -> std::process::Child {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(stderr_path).unwrap())
        .spawn()
        .unwrap()
}

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `NAME=value` lines of `--acquire` (single-quoted values unquoted).
fn parse_env(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches('\'').to_string()))
        .collect()
}

#[test]
fn losing_the_lock_kills_the_child_and_its_grandchildren() {
    let servers = masters(3, true);
    let dir = tempfile::tempdir().unwrap();
    let (child_pid, grandchild_pid) = (dir.path().join("child"), dir.path().join("grandchild"));
    let script = format!(
        "echo $$ > {}; sleep 300 & echo $! > {}; wait",
        child_pid.display(),
        grandchild_pid.display()
    );
    let running = lock_cmd(&all(&servers))
        .args(["--ttl", "3s", "--kill-after", "1s", "lost", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (child, grandchild) = (read_pid(&child_pid), read_pid(&grandchild_pid));
    assert!(alive(child) && alive(grandchild));

    // Someone deletes the key on a majority of the masters.
    servers[0].cmd(&["DEL", "lost"]);
    servers[1].cmd(&["DEL", "lost"]);
    let output = finish(running);
    assert_code(&output, 124);
    let err = stderr(&output);
    assert!(
        err.contains("lock lost lost while the command ran")
            && err.contains("our token is gone from 2 of 3 masters"),
        "{err}"
    );
    assert!(!alive(child), "the child survived the loss");
    assert!(
        !alive(grandchild),
        "the grandchild under sh -c survived the loss"
    );
    // What was left of our lock (the third master) is released too.
    for s in &servers {
        assert_eq!(get(s, "lost"), None, "{}", s.url());
    }
}

#[test]
fn losing_the_lock_on_one_master_kills_the_child() {
    let servers = masters(1, false);
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child");
    let running = lock_cmd(&all(&servers))
        .args(["--ttl", "1s", "lost1", "--", "sh", "-c"])
        .arg(format!("echo $$ > {}; exec sleep 300", pid_file.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let child = read_pid(&pid_file);
    // Another client takes the name over.
    servers[0].cmd(&["SET", "lost1", "intruder", "PX", "60000"]);
    let output = finish(running);
    assert_code(&output, 124);
    assert!(
        stderr(&output).contains("now held by another client"),
        "{}",
        stderr(&output)
    );
    assert!(!alive(child));
    assert_eq!(get(&servers[0], "lost1").as_deref(), Some("intruder"));
}

#[test]
fn a_busy_lock_exits_with_the_conflict_code_and_a_raw_set_nx_is_a_holder() {
    let servers = masters(1, false);
    let s = &servers[0];
    // Another tool's lock (redis-py, redsync: SET NAME token NX PX ttl).
    assert_eq!(
        s.query::<Option<String>>(&["SET", "shared", "their-token", "NX", "PX", "60000"]),
        Some("OK".into())
    );
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");

    let output = run(lock_cmd(&[s])
        .args(["-n", "shared", "--", "touch"])
        .arg(&marker));
    assert_code(&output, 75);
    let err = stderr(&output);
    assert!(
        err.contains("lock shared is busy: held by another client (value 'their-token')")
            && err.contains("not waiting"),
        "{err}"
    );
    let output = run(lock_cmd(&[s])
        .args(["-n", "-E", "99", "shared", "--", "touch"])
        .arg(&marker));
    assert_code(&output, 99);
    let output = run(lock_cmd(&[s])
        .args(["-q", "--wait", "300ms", "-E", "3", "shared", "--", "touch"])
        .arg(&marker));
    assert_code(&output, 3);
    assert!(
        stderr(&output).contains("gave up after waiting 300ms"),
        "{}",
        stderr(&output)
    );
    let output = run(lock_cmd(&[s]).args(["--acquire", "-w", "200ms", "shared"]));
    assert_code(&output, 75);

    assert!(
        !marker.exists(),
        "a command ran while another tool held the lock"
    );
    // Their key is untouched: same value, still expiring.
    assert_eq!(get(s, "shared").as_deref(), Some("their-token"));
    assert!(s.query::<i64>(&["PTTL", "shared"]) > 0);
}

#[test]
fn a_held_yaraus_lock_blocks_a_raw_set_nx_and_is_freed_after() {
    let servers = masters(3, true);
    let dir = tempfile::tempdir().unwrap();
    let (started, finish_flag) = (dir.path().join("started"), dir.path().join("finish"));
    let script = format!(
        "touch {}; while [ ! -e {} ]; do sleep 0.05; done",
        started.display(),
        finish_flag.display()
    );
    let running = lock_cmd(&all(&servers))
        .args(["-q", "interop", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the child to start", PROCESS_TIMEOUT, || started.exists());
    let taken = servers
        .iter()
        .filter(|s| {
            s.query::<Option<String>>(&["SET", "interop", "mine", "NX", "PX", "60000"])
                .is_some()
        })
        .count();
    assert!(taken < 2, "a raw SET NX took a majority of a held lock");
    std::fs::write(&finish_flag, "").unwrap();
    assert_code(&finish(running), 0);
    // Released by compare-and-delete: nodes it did not hold keep what they have.
    for s in &servers {
        let value = get(s, "interop");
        assert!(
            value.is_none() || value.as_deref() == Some("mine"),
            "{}: {value:?}",
            s.url()
        );
        s.cmd(&["DEL", "interop"]);
    }
    assert!(servers.iter().all(|s| {
        s.query::<Option<String>>(&["SET", "interop", "mine", "NX", "PX", "1000"])
            .is_some()
    }));
}

#[test]
fn a_two_second_lock_lives_through_a_ten_second_child_and_heals_a_restarted_master() {
    let mut servers = masters(3, true);
    let dir = tempfile::tempdir().unwrap();
    let (started, done) = (dir.path().join("started"), dir.path().join("done"));
    let running = lock_cmd(&all(&servers))
        .args(["--ttl", "2s", "long", "-c"])
        .arg(format!(
            "touch {}; sleep 10; touch {}",
            started.display(),
            done.display()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the child to start", PROCESS_TIMEOUT, || started.exists());
    // On a majority for sure; a master that was a little slower than the
    // majority may have been left out (the round settles without it).
    let token = servers
        .iter()
        .find_map(|s| get(s, "long"))
        .expect("the lock is on a majority of the masters");

    // Through the child's whole run a majority holds our token, far beyond
    // the 2 s it would last without extensions.
    let majority_holds = |servers: &[RedisServer]| {
        servers
            .iter()
            .filter(|s| get(s, "long").as_deref() == Some(token.as_str()))
            .count()
            >= 2
    };
    let watch = |servers: &[RedisServer], what: &str, until: &mut dyn FnMut() -> bool| {
        wait_until(what, PROCESS_TIMEOUT, || {
            // Checked in this order: the release that follows the child's
            // end must not pass for a lapse.
            assert!(
                majority_holds(servers) || done.exists(),
                "the lock lapsed while the child ran"
            );
            until()
        })
    };
    let t0 = std::time::Instant::now();
    watch(&servers, "3 s of the child's run", &mut || {
        t0.elapsed() >= Duration::from_secs(3)
    });

    // A master restarts empty: the next extension sets our token there again.
    servers[2].restart_empty();
    let healed = &servers[2];
    watch(
        &servers,
        "the restarted master to hold our token again",
        &mut || get(healed, "long").as_deref() == Some(token.as_str()),
    );
    // Meanwhile nobody else gets in.
    let output = run(lock_cmd(&all(&servers)).args(["-n", "long", "--", "true"]));
    assert_code(&output, 75);

    let mut running = Some(running);
    let mut status = None;
    watch(&servers, "the child to finish", &mut || done.exists());
    wait_until("yaraus to exit", PROCESS_TIMEOUT, || {
        status = running.as_mut().unwrap().try_wait().unwrap();
        status.is_some()
    });
    let output = running.take().unwrap().wait_with_output().unwrap();
    assert_code(&output, 0);
    assert!(t0.elapsed() >= Duration::from_secs(6));
    // The healing itself was awaited above (only our extension writes our
    // token there); its log line is not asserted, because the reply of the
    // restarted master, which must dial again, may come after the round has
    // settled on the other two.
    for s in &servers {
        assert_eq!(get(s, "long"), None, "{}", s.url());
    }
}

#[test]
fn acquire_extend_release_and_info_forms_work_even_for_a_lock_named_acquire() {
    let servers = masters(3, true);
    let clock_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64;
    let output = run(lock_cmd(&all(&servers)).args(["--acquire", "--ttl", "20s", "acquire"]));
    assert_code(&output, 0);
    let env = parse_env(&stdout(&output));
    assert_eq!(env["YARAUS_LOCK_NAME"], "acquire");
    // With several masters a fresh process votes for its clock (µs).
    let fencing: u64 = env["YARAUS_FENCING_TOKEN"].parse().unwrap();
    assert!(fencing >= clock_us, "{fencing} < {clock_us}");
    for s in &servers {
        assert_eq!(get(s, "yaraus:fencing:acquire"), Some(fencing.to_string()));
    }
    let token = env["YARAUS_LOCK_TOKEN"].clone();
    for s in &servers {
        assert_eq!(get(s, "acquire").as_deref(), Some(token.as_str()));
    }

    // --info: held by that token, on every master.
    let output = run(lock_cmd(&all(&servers)).args(["--info", "acquire"]));
    assert_code(&output, 0);
    let info: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(info["held"], true);
    assert_eq!(info["token"], token.as_str());
    assert_eq!(info["majority"], 2);
    assert!(info["holder"]["pid"].as_u64().is_some());
    for node in info["nodes"].as_array().unwrap() {
        assert_eq!(node["state"], "held");
        assert!(node["ttl_ms"].as_i64().unwrap() > 0);
        assert!(node["age_ms"].as_u64().is_some());
        assert_eq!(node["fencing_counter"], fencing);
    }

    // A lock named acquire also wraps a command (busy now).
    let output = run(lock_cmd(&all(&servers)).args(["-n", "acquire", "--", "true"]));
    assert_code(&output, 75);

    // --extend gives a full ttl again.
    servers[0].cmd(&["PEXPIRE", "acquire", "5000"]);
    let output =
        run(lock_cmd(&all(&servers))
            .args(["--extend", "acquire", "--ttl", "60s", "--token", &token]));
    assert_code(&output, 0);
    assert!(servers[0].query::<i64>(&["PTTL", "acquire"]) > 20_000);

    // --release frees it; a second --release says it was not held.
    let output = run(lock_cmd(&all(&servers)).args(["--release", "acquire", "--token", &token]));
    assert_code(&output, 0);
    for s in &servers {
        assert_eq!(get(s, "acquire"), None);
    }
    let output = run(lock_cmd(&all(&servers)).args(["--release", "acquire", "--token", &token]));
    assert_code(&output, 124);
    let output = run(lock_cmd(&all(&servers)).args(["--extend", "acquire", "--token", &token]));
    assert_code(&output, 124);
    for s in &servers {
        assert_eq!(get(s, "acquire"), None, "a failed --extend left a key");
    }

    // Free now: the wrapping form runs, with the next fencing token.
    let output = run(lock_cmd(&all(&servers)).args([
        "-q",
        "acquire",
        "--",
        "sh",
        "-c",
        "echo $YARAUS_FENCING_TOKEN",
    ]));
    assert_code(&output, 0);
    let second: u64 = stdout(&output).trim().parse().unwrap();
    assert!(second > fencing, "{second} <= {fencing}");

    // --info of a free lock; JSON output of --acquire.
    let output = run(lock_cmd(&all(&servers)).args(["--info", "acquire"]));
    let info: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(info["held"], false);
    assert_eq!(info["nodes"][0]["state"], "free");
    let output = run(lock_cmd(&all(&servers)).args([
        "--acquire",
        "--format",
        "json",
        "--ttl",
        "1s",
        "acquire",
    ]));
    assert_code(&output, 0);
    let taken: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert!(taken["fencing_token"].as_u64().unwrap() > second);
}

#[test]
fn a_signal_while_waiting_ends_the_wait_and_releases_what_was_taken() {
    let servers = masters(3, true);
    // Another client holds two of the three masters: each of our attempts
    // takes the third and must give it back.
    servers[0].cmd(&["SET", "waited", "other", "PX", "60000"]);
    servers[1].cmd(&["SET", "waited", "other", "PX", "60000"]);
    let dir = tempfile::tempdir().unwrap();
    let (log, marker) = (dir.path().join("stderr"), dir.path().join("ran"));
    let waiting = spawn_logged(
        lock_cmd(&all(&servers))
            .args(["waited", "--", "touch"])
            .arg(&marker),
        &log,
    );
    wait_until("yaraus to wait for the lock", PROCESS_TIMEOUT, || {
        read(&log).contains("waiting for the lock waited")
    });
    kill(Pid::from_raw(waiting.id() as i32), Signal::SIGTERM).unwrap();
    let output = finish(waiting);
    assert_code(&output, 128 + 15);
    assert!(
        read(&log).contains("interrupted by signal 15"),
        "{}",
        read(&log)
    );
    assert!(!marker.exists());
    assert_eq!(
        get(&servers[2], "waited"),
        None,
        "the partly taken lock was kept"
    );
    assert_eq!(get(&servers[0], "waited").as_deref(), Some("other"));
}

#[test]
fn the_command_s_status_and_signals_pass_through() {
    let servers = masters(1, false);
    let s = &servers[0];
    assert_code(
        &run(lock_cmd(&[s]).args(["-q", "st", "--", "sh", "-c", "exit 7"])),
        7,
    );
    assert_code(
        &run(lock_cmd(&[s]).args(["-q", "st", "-c", "kill -9 $$"])),
        128 + 9,
    );
    assert_code(
        &run(lock_cmd(&[s]).args(["-q", "st", "--", "/nonexistent/cmd"])),
        127,
    );
    let output = run(lock_cmd(&[s]).args(["-q", "--replacement", "", "st", "--", "echo", "<>"]));
    assert_eq!(stdout(&output).trim(), "<>");
    assert_eq!(get(s, "st"), None);
}

#[test]
fn a_prefix_makes_the_key_and_a_wrong_password_is_not_waited_out() {
    let servers = masters(1, false);
    let s = &servers[0];
    let output = run(lock_cmd(&[s]).args(["--acquire", "--prefix", "locks:", "pre"]));
    assert_code(&output, 0);
    let token = parse_env(&stdout(&output))["YARAUS_LOCK_TOKEN"].clone();
    assert_eq!(get(s, "locks:pre").as_deref(), Some(token.as_str()));
    assert_eq!(get(s, "pre"), None);

    let guarded = common::RedisServer::start_with(common::ServerOptions {
        requirepass: Some("s3cret".into()),
        ..Default::default()
    });
    let no_password = format!("unix://{}", guarded.socket_path().unwrap().display());
    // No --wait: a refused password must still end the wait at once.
    let output = run(common::yaraus().args([
        "lock",
        "-q",
        "--redis",
        &no_password,
        "guarded",
        "--",
        "true",
    ]));
    assert_code(&output, 69);
    assert!(
        stderr(&output).contains("refused authentication"),
        "{}",
        stderr(&output)
    );
    let output = run(common::yaraus().args([
        "lock",
        "-q",
        "--redis",
        &guarded.url(),
        "guarded",
        "--",
        "true",
    ]));
    assert_code(&output, 0);
    assert!(!stderr(&output).contains("s3cret"));
}

#[test]
fn a_semaphore_admits_up_to_its_limit() {
    let servers = masters(1, false);
    let s = &servers[0];
    let acquire = || run(lock_cmd(&[s]).args(["--acquire", "-n", "--limit", "2", "sem"]));
    let first = acquire();
    assert_code(&first, 0);
    let second = acquire();
    assert_code(&second, 0);
    let (a, b) = (parse_env(&stdout(&first)), parse_env(&stdout(&second)));
    assert_ne!(a["YARAUS_LOCK_TOKEN"], b["YARAUS_LOCK_TOKEN"]);
    // A new counter starts from the server's clock (µs), never at 1, so
    // that it cannot go back after a restart without its data.
    let clock_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64;
    let (fa, fb): (u64, u64) = (
        a["YARAUS_FENCING_TOKEN"].parse().unwrap(),
        b["YARAUS_FENCING_TOKEN"].parse().unwrap(),
    );
    assert_eq!(fb, fa + 1);
    assert!(
        fa + 60_000_000 > clock_us && fa < clock_us + 60_000_000,
        "{fa} vs {clock_us}"
    );

    let third = acquire();
    assert_code(&third, 75);
    assert!(stderr(&third).contains("every place of the semaphore sem (limit 2) is taken"));

    let output = run(lock_cmd(&[s]).args(["--info", "sem"]));
    let info: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(info["nodes"][0]["state"], "semaphore");
    assert_eq!(info["nodes"][0]["holders"].as_array().unwrap().len(), 2);

    let output = run(lock_cmd(&[s])
        .args(["--release", "--limit", "2", "sem", "--token"])
        .arg(&a["YARAUS_LOCK_TOKEN"]));
    assert_code(&output, 0);
    let fourth = acquire();
    assert_code(&fourth, 0);
    assert_eq!(
        parse_env(&stdout(&fourth))["YARAUS_FENCING_TOKEN"],
        (fb + 1).to_string()
    );

    // A plain lock on a semaphore's name is told what is there.
    let output = run(lock_cmd(&[s]).args(["-n", "sem", "--", "true"]));
    assert_code(&output, 125);
    assert!(stderr(&output).contains("holds a zset") && stderr(&output).contains("--limit"));
}

#[test]
fn four_masters_from_the_environment_work_and_say_their_majority() {
    let servers = masters(4, true);
    let urls: Vec<String> = servers.iter().map(|s| s.url()).collect();
    let output = run(common::yaraus()
        .env("YARAUS_REDIS", urls.join(","))
        .args(["lock", "even", "--", "true"]));
    assert_code(&output, 0);
    assert!(
        stderr(&output).contains("4 masters: a majority is 3"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn bad_input_gets_one_clear_line_its_code_and_leaves_redis_alone() {
    let one = masters(1, false);
    let three = masters(3, false); // no fsync: refused for fencing
    let s = &one[0];
    s.cmd(&["HSET", "a-hash", "f", "v"]);
    // Free locks whose fencing counters are broken: the acquire script takes
    // the lock before it votes, and must undo that.
    s.cmd(&["HSET", "yaraus:fencing:counter-hash", "f", "v"]);
    s.cmd(&["SET", "yaraus:fencing:counter-text", "abc"]);
    s.cmd(&["SET", "yaraus:fencing:counter-negative", "-5"]);
    for t in &three {
        t.cmd(&["HSET", "yaraus:fencing:counter-hash", "f", "v"]);
    }
    let dead = tempfile::tempdir().unwrap();
    let dead_url = |i: u32| format!("unix://{}/gone{i}.sock", dead.path().display());
    let snapshots = |all: &[&RedisServer]| all.iter().map(|s| s.snapshot()).collect::<Vec<_>>();
    let everyone: Vec<&RedisServer> = one.iter().chain(three.iter()).collect();
    let before = snapshots(&everyone);

    let one_url = s.url();
    let (gone1, gone2) = (dead_url(1), dead_url(2));
    let one_master = |rest: &[&str]| -> Vec<String> {
        ["--redis", one_url.as_str()]
            .iter()
            .chain(rest)
            .map(|a| a.to_string())
            .collect()
    };
    let three_masters = |rest: &[&str]| -> Vec<String> {
        three
            .iter()
            .flat_map(|t| ["--redis".to_string(), t.url()])
            .chain(rest.iter().map(|a| a.to_string()))
            .collect()
    };
    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (one_master(&["x"]), 2, "no command to run"),
        (
            one_master(&["--ttl", "0", "x", "--", "true"]),
            2,
            "must be more than zero",
        ),
        (
            one_master(&["--ttl", "10ms", "x", "--", "true"]),
            2,
            "too short",
        ),
        (
            three_masters(&["--limit", "2", "x", "--", "true"]),
            2,
            "--limit 2 needs exactly one Redis master",
        ),
        (
            one_master(&["--redis", one_url.as_str(), "x", "--", "true"]),
            2,
            "is given twice",
        ),
        (
            one_master(&["-c", "true", "x", "--", "true"]),
            2,
            "cannot be used with",
        ),
        (one_master(&["--extend", "x"]), 2, "--extend needs --token"),
        (
            one_master(&["--token", "t", "x", "--", "true"]),
            2,
            "--token is only for",
        ),
        (
            one_master(&["-E", "300", "x", "--", "true"]),
            2,
            "300 is not in 0..=255",
        ),
        (
            one_master(&["-n", "-w", "1s", "x", "--", "true"]),
            2,
            "cannot be used with",
        ),
        (
            ["--redis", "localhost:6379", "x", "--", "true"]
                .map(String::from)
                .to_vec(),
            2,
            "invalid Redis URL",
        ),
        (one_master(&["", "--", "true"]), 2, "must not be empty"),
        (
            three_masters(&["x", "--", "true"]),
            125,
            "appendfsync always",
        ),
        (
            one_master(&["a-hash", "--", "true"]),
            125,
            "holds a hash at a-hash",
        ),
        (
            one_master(&["counter-hash", "--", "true"]),
            125,
            "yaraus:fencing:counter-hash is a hash, not a counter",
        ),
        (
            one_master(&["counter-text", "--", "true"]),
            125,
            "yaraus:fencing:counter-text holds '",
        ),
        (
            one_master(&["counter-negative", "--", "true"]),
            125,
            "holds '-5', not a counter",
        ),
        (
            three_masters(&["--no-fsync-check", "counter-hash", "--", "true"]),
            125,
            "yaraus:fencing:counter-hash is a hash, not a counter",
        ),
    ];
    for (args, expected, message) in cases {
        let output = run(common::yaraus().arg("lock").arg("--quiet").args(&args));
        assert_code(&output, expected);
        let err = stderr(&output);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: not one line:\n{err}");
        assert!(
            lines[0].starts_with("yaraus: ") && lines[0].contains(message),
            "{args:?}: {err}"
        );
    }
    assert_eq!(snapshots(&everyone), before, "bad input changed Redis");

    // An unreachable majority is not bad input but an outage: the attempt
    // may have voted for a fencing token on the master it reached. It gives
    // the vote back when it saw it stand (usually), but a reply that came
    // too late leaves a counter that only grew, which is harmless. Nothing
    // else may remain.
    let args = one_master(&[
        "--redis",
        gone1.as_str(),
        "--redis",
        gone2.as_str(),
        "--no-fsync-check",
        "-n",
        "x",
        "--",
        "true",
    ]);
    let output = run(common::yaraus().arg("lock").arg("--quiet").args(&args));
    assert_code(&output, 69);
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "not one line:\n{err}");
    assert!(err.contains("a majority (2) is needed"), "{err}");
    let mut after = s.snapshot();
    if let Some(counter) = after.remove("yaraus:fencing:x") {
        assert!(
            counter.starts_with("string \"")
                && counter[8..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .count()
                    > 0,
            "{counter}"
        );
    }
    assert_eq!(after, before[0], "an outage left more than a fencing vote");
}

#[test]
fn a_release_reaches_a_master_that_answers_late_and_had_forgotten_the_script() {
    // The majority answers the release at once; the third master is frozen
    // and, once thawed, does not know the release script (NOSCRIPT, SCRIPT
    // LOAD, EVALSHA). A release that gave up on it after the majority left
    // the key there until its ttl.
    let servers = masters(3, true);
    let output = run(lock_cmd(&all(&servers)).args(["--acquire", "--ttl", "60s", "late"]));
    assert_code(&output, 0);
    let token = parse_env(&stdout(&output))["YARAUS_LOCK_TOKEN"].clone();
    servers[2].cmd(&["SCRIPT", "FLUSH"]);
    servers[2].sigstop();
    let child = lock_cmd(&all(&servers))
        .args(["--release", "late", "--token", &token])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The fault's length, not a wait for an event: long beside a round trip,
    // short beside the release's request timeout (2 s).
    std::thread::sleep(Duration::from_millis(300));
    servers[2].sigcont();
    let output = finish(child);
    assert_code(&output, 0);
    for s in &servers {
        assert_eq!(get(s, "late"), None, "the lock is left on {}", s.url());
    }
}
