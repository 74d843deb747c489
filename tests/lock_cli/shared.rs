//! `yaraus lock -s`, the shared lock (flock -s), on one real master: shared
//! holders hold it together, an exclusive holder alone, a writer is not
//! starved by a stream of overlapping readers (writers go first), a writer
//! that stops waiting takes its mark back, fencing tokens increase across
//! both kinds, and a shared holder is supervised as any holder is.
//!
//! Every holder logs `start KIND PID` and `stop KIND PID` lines to one file
//! (appends of a line are atomic), so the file's order is the order of the
//! events; a holder's `stop` line is written before it releases, so the log
//! can only make an overlap look longer than it was.

use super::*;
use std::path::Path;

/// A holder's command: logs its stay of `stay` seconds as `kind`.
fn stay(log: &Path, kind: &str, stay: &str) -> String {
    format!(
        "echo \"start {kind} $$ $YARAUS_FENCING_TOKEN\" >> {log}; sleep {stay}; \
         echo \"stop {kind} $$\" >> {log}",
        log = log.display()
    )
}

fn holder(s: &RedisServer, shared: bool, name: &str, command: &str) -> std::process::Child {
    let mut cmd = lock_cmd(&[s]);
    if shared {
        cmd.arg("-s");
    }
    start(cmd.args([name, "--", "sh", "-c", command]))
}

/// Checks the log: no event inside an exclusive stay, and no exclusive stay
/// begun while shared holders were in. Returns the most shared holders that
/// were in at once, and the fencing tokens in the order of the stays.
fn check_exclusion(log: &Path) -> (usize, Vec<u64>) {
    let lines = lines(log);
    let text = lines.join("\n");
    let (mut inside, mut most, mut tokens) = (0usize, 0usize, Vec::new());
    let mut exclusive: Option<&str> = None;
    for line in &lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(pid) = exclusive {
            assert!(
                words[..3] == ["stop", "x", pid],
                "something happened while an exclusive holder held the lock:\n{text}"
            );
            exclusive = None;
            continue;
        }
        match words[..2] {
            ["start", "x"] => {
                assert_eq!(
                    inside, 0,
                    "an exclusive holder came in beside readers:\n{text}"
                );
                exclusive = Some(words[2]);
            }
            ["start", "s"] => {
                inside += 1;
                most = most.max(inside);
            }
            ["stop", "s"] => inside -= 1,
            _ => panic!("unexpected line {line:?}:\n{text}"),
        }
        if words[0] == "start" {
            tokens.push(words[3].parse().unwrap());
        }
    }
    (most, tokens)
}

#[test]
fn shared_holders_hold_the_lock_together() {
    let servers = masters(1, false);
    let dir = tempfile::tempdir().unwrap();
    // Each stays until all six are in: were they excluded from each other,
    // the first would never see the others and give up (exit 3).
    let command = format!(
        "touch {d}/in.$$; n=0; while [ $(ls {d} | grep -c '^in\\.') -lt 6 ]; do \
         n=$((n+1)); [ $n -gt 1500 ] && exit 3; sleep 0.02; done",
        d = dir.path().display()
    );
    let readers: Vec<_> = (0..6)
        .map(|_| holder(&servers[0], true, "together", &command))
        .collect();
    for reader in readers {
        assert_code(&finish(reader), 0);
    }
    assert_eq!(
        servers[0].query::<i64>(&["EXISTS", "together"]),
        0,
        "a shared place was left behind"
    );
}

#[test]
fn an_exclusive_holder_holds_it_alone_and_tokens_increase_across_both_kinds() {
    let servers = masters(1, false);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let mut children = Vec::new();
    for i in 0..12 {
        let shared = i % 3 != 0;
        let kind = if shared { "s" } else { "x" };
        children.push(holder(
            &servers[0],
            shared,
            "mixed",
            &stay(&log, kind, "0.1"),
        ));
    }
    for child in children {
        assert_code(&finish(child), 0);
    }
    let (_, tokens) = check_exclusion(&log);
    assert_eq!(tokens.len(), 12);
    // Stays that do not overlap come in token order; shared stays that do
    // may log in either order, so only exclusive ones are compared with
    // everything before them.
    let lines = lines(&log);
    let mut before = Vec::new();
    for line in lines.iter().filter(|l| l.starts_with("start")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let token: u64 = words[3].parse().unwrap();
        if words[1] == "x" {
            assert!(
                before.iter().all(|&t| t < token),
                "an exclusive holder's token {token} is not above those before it {before:?}"
            );
        }
        before.push(token);
    }
    let mut distinct = tokens.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        tokens.len(),
        "a fencing token repeated: {tokens:?}"
    );
}

#[test]
fn a_writer_is_not_starved_by_a_stream_of_overlapping_readers() {
    let servers = masters(1, false);
    let s = &servers[0];
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let done = dir.path().join("writer-done");
    let mut readers = vec![holder(s, true, "stream", &stay(&log, "s", "0.3"))];
    wait_until("the first reader is in", PROCESS_TIMEOUT, || {
        read(&log).contains("start s")
    });
    // Without writers first, readers that overlap (a new one every 100 ms,
    // each staying 300 ms) keep the lock shared until the stream ends (after
    // 250 of them, far beyond the writer's wait), and the writer gives up.
    let writer = start(lock_cmd(&[s]).args([
        "-w",
        "10s",
        "stream",
        "--",
        "sh",
        "-c",
        &format!("{}; touch {}", stay(&log, "x", "0.1"), done.display()),
    ]));
    for _ in 0..250 {
        if done.exists() {
            break;
        }
        readers.push(holder(s, true, "stream", &stay(&log, "s", "0.3")));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_code(&finish(writer), 0);
    for reader in readers {
        assert_code(&finish(reader), 0);
    }
    let (most, _) = check_exclusion(&log);
    assert!(
        most >= 2,
        "the readers never overlapped: the test proves nothing"
    );
}

#[test]
fn a_writer_that_gives_up_or_does_not_wait_holds_no_reader_back() {
    let servers = masters(1, false);
    let s = &servers[0];
    let reader = run(lock_cmd(&[s]).args(["-s", "--acquire", "-n", "--ttl", "1m", "gate"]));
    assert_code(&reader, 0);

    let writer = run(lock_cmd(&[s]).args(["-n", "gate", "--", "true"]));
    assert_code(&writer, 75);
    assert!(
        stderr(&writer).contains("lock gate is busy: held by 1 shared holder"),
        "{}",
        stderr(&writer)
    );
    assert_code(
        &run(lock_cmd(&[s]).args(["-s", "-n", "gate", "--", "true"])),
        0,
    );

    let writer = run(lock_cmd(&[s]).args(["-w", "700ms", "gate", "--", "true"]));
    assert_code(&writer, 75);
    // It waited with its mark in place, and took it back when it gave up.
    let after = run(lock_cmd(&[s]).args(["-s", "-n", "gate", "--", "true"]));
    assert_code(&after, 0);
    let members: Vec<String> = s.query(&["ZRANGE", "gate", "0", "-1"]);
    assert_eq!(members.len(), 1, "{members:?}");
}

#[test]
fn while_a_writer_waits_a_new_reader_is_held_back_and_told_why() {
    let servers = masters(1, false);
    let s = &servers[0];
    let first = run(lock_cmd(&[s]).args(["-s", "--acquire", "-n", "--ttl", "1m", "queue"]));
    assert_code(&first, 0);
    let first = parse_env(&stdout(&first));
    let writer = start(lock_cmd(&[s]).args(["queue", "--", "true"]));
    wait_until("the writer's mark", PROCESS_TIMEOUT, || {
        let members: Vec<String> = s.query(&["ZRANGE", "queue", "0", "-1"]);
        members.iter().any(|m| m.starts_with("writer-waiting:"))
    });
    let late = run(lock_cmd(&[s]).args(["-s", "-n", "queue", "--", "true"]));
    assert_code(&late, 75);
    assert!(
        stderr(&late).contains("shared lock queue is busy: a writer (pid ")
            && stderr(&late).contains("writers go first"),
        "{}",
        stderr(&late)
    );
    let info = run(lock_cmd(&[s]).args(["--info", "queue"]));
    let info: serde_json::Value = serde_json::from_str(&stdout(&info)).unwrap();
    assert_eq!(info["held"], true);
    assert_eq!(info["nodes"][0]["state"], "shared");
    assert_eq!(info["nodes"][0]["holders"].as_array().unwrap().len(), 1);
    assert_eq!(
        info["nodes"][0]["waiting_writers"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // The last reader leaves: the writer gets it, with a greater token.
    let released = run(lock_cmd(&[s])
        .args(["-s", "--release", "queue", "--token"])
        .arg(&first["YARAUS_LOCK_TOKEN"]));
    assert_code(&released, 0);
    assert_code(&finish(writer), 0);
    let counter: u64 = s.query(&["GET", "yaraus:fencing:queue"]);
    assert!(counter > first["YARAUS_FENCING_TOKEN"].parse::<u64>().unwrap());
    assert_eq!(s.query::<i64>(&["EXISTS", "queue"]), 0);
}

#[test]
fn a_shared_holder_is_extended_under_a_long_command_and_killed_when_its_place_goes() {
    let servers = masters(1, false);
    let s = &servers[0];
    let output = run(lock_cmd(&[s]).args(["-s", "--ttl", "1s", "long", "--", "sleep", "2.5"]));
    assert_code(&output, 0);

    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let child = holder(
        s,
        true,
        "doomed",
        &format!("echo $$ > {}; exec sleep 60", pid_file.display()),
    );
    let pid = read_pid(&pid_file);
    // An operator deletes the key: the place is gone, the command is killed.
    s.cmd(&["DEL", "doomed"]);
    let output = finish(child);
    assert_code(&output, 124);
    assert!(!alive(pid), "the command outlived its shared place");
}
