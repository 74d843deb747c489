//! Bad input gets one clear line, its code, and leaves Redis alone; and a
//! release reaches a master that answers late and forgot the script.

use super::*;

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
            three_masters(&["-s", "x", "--", "true"]),
            2,
            "a shared lock (-s) needs exactly one Redis master",
        ),
        (
            one_master(&["-s", "--limit", "2", "x", "--", "true"]),
            2,
            "cannot be used with",
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
