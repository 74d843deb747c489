//! flock(1)'s conventions where `yaraus lock` stands in for it: seconds as
//! bare numbers (fractions too) wherever a duration is taken, silence when
//! the lock was taken (cron mails whatever a job prints) with `-v` for the
//! lines, and a warning when `--timeout` is typed where `-w` was meant.

use super::*;

/// `yaraus --redis URL ARGS...`, run to its end.
fn at_run(url: &str, args: &[&str]) -> Output {
    let args = at(url, args);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    yaraus(&argv)
}

#[test]
fn bare_numbers_are_seconds_with_fractions() {
    let s = RedisServer::start();
    let url = s.url();
    // Held by someone else, as a raw SET NX would: -w 0.5 is a wait of 500ms.
    s.cmd(&["SET", "busy", "theirs", "PX", "60000"]);
    let out = at_run(&url, &["lock", "busy", "-w", "0.5", "--", "true"]);
    assert_eq!(out.code, Some(75), "{out:#?}");
    assert!(
        out.stderr.contains("gave up after waiting 500ms"),
        "{out:#?}"
    );
    // --ttl 1.5: the key lives 1.5 s.
    let out = at_run(
        &url,
        &["lock", "--acquire", "mine", "--ttl", "1.5", "-w", "2"],
    );
    assert_eq!(out.code, Some(0), "{out:#?}");
    let pttl: i64 = s.query(&["PTTL", "mine"]);
    assert!(pttl > 0 && pttl <= 1500, "PTTL {pttl}");
    // The global --timeout and run's durations too (run checks them before Redis).
    let out = at_run(
        &url,
        &["--timeout", "0.75", "lock", "free", "-n", "--", "true"],
    );
    assert_eq!(out.code, Some(0), "{out:#?}");
}

#[test]
fn a_negative_duration_says_it_must_be_positive() {
    let s = RedisServer::start();
    let before = s.snapshot();
    let args = at(&s.url(), &["lock", "x", "--ttl", "-5s", "--", "true"]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = yaraus(&argv);
    check_usage_error(&args, &out, &["--ttl", "-5s", "must be positive"]);
    assert_eq!(s.snapshot(), before);
}

#[test]
fn a_lock_taken_is_silent_unless_verbose() {
    let s = RedisServer::start();
    let url = s.url();
    for args in [
        vec!["lock", "x", "--", "true"],
        vec!["lock", "x", "-n", "-c", "true"],
        vec!["lock", "--acquire", "y"],
    ] {
        let out = at_run(&url, &args);
        assert_eq!(out.code, Some(0), "{args:?}: {out:#?}");
        assert_eq!(out.stderr, "", "{args:?} is not silent");
    }
    let out = at_run(&url, &["lock", "x", "-v", "--", "true"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    for said in [
        "x: acquired on 1 of 1 masters",
        "starting",
        "releasing lock x",
    ] {
        assert!(
            out.stderr.contains(said),
            "-v does not say {said:?}: {out:#?}"
        );
    }
    // Waiting for a busy lock and giving up are still said.
    s.cmd(&["SET", "busy", "theirs", "PX", "60000"]);
    let out = at_run(&url, &["lock", "busy", "-w", "300ms", "--", "true"]);
    assert_eq!(out.code, Some(75), "{out:#?}");
    assert!(out.stderr.contains("lock busy is busy"), "{out:#?}");
    assert!(
        out.stderr.contains("gave up after waiting 300ms"),
        "{out:#?}"
    );
}

#[test]
fn timeout_without_wait_warns_that_it_is_not_the_wait() {
    let s = RedisServer::start();
    let url = s.url();
    let warning = "not the wait for the lock";
    let out = at_run(&url, &["lock", "x", "--timeout", "2s", "--", "true"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(out.stderr.contains(warning), "{out:#?}");
    assert_eq!(out.stderr.lines().count(), 1, "{out:#?}");
    for args in [
        vec!["lock", "x", "--timeout", "2s", "-w", "1s", "--", "true"],
        vec!["lock", "x", "--timeout", "2s", "-n", "--", "true"],
        vec!["lock", "x", "--", "true"],
    ] {
        let out = at_run(&url, &args);
        assert_eq!(out.code, Some(0), "{args:?}: {out:#?}");
        assert!(!out.stderr.contains(warning), "{args:?}: {out:#?}");
    }
}
