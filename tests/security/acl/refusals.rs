//! What the user is not granted: a command the operator chose not to grant
//! (`CONFIG GET`, `INFO`) gives the documented message and exit status, with
//! nothing changed in Redis, and `acl-rules` refuses what no rule can name.

use super::{AS_USER, global, servers_with_user};
use crate::security::{FAST, fails, ok};

#[test]
fn a_denied_config_get_is_named_and_assume_durable_does_without_it() {
    let (three, urls, rules) = servers_with_user(
        3,
        true,
        "ns",
        &[
            "acl-rules",
            "--lock-prefix",
            "locks:",
            "--assume-durable",
            "lock",
        ],
    );
    assert!(!rules.contains("config"), "{rules}");
    let args = |more: &[&'static str]| {
        [
            &["lock", "--prefix", "locks:", "job"][..],
            more,
            &["--", "true"],
        ]
        .concat()
    };
    let err = fails(&global(&urls, "ns", &args(&["--quiet"])), &AS_USER, 69);
    assert!(
        err.contains("denies this user CONFIG GET") && err.contains("--assume-durable"),
        "{err}"
    );
    assert!(!err.contains("NOPERM"), "{err}");
    for s in &three {
        assert!(s.snapshot().is_empty(), "a refused lock wrote something");
    }
    ok(&global(&urls, "ns", &args(&["--assume-durable"])), &AS_USER);
}

#[test]
fn a_denied_info_is_named_and_redis_replicas_does_without_it() {
    let (servers, urls, rules) = servers_with_user(
        1,
        false,
        "pool",
        &["--redis-replicas", "0", "acl-rules", "init", "run"],
    );
    let s = &servers[0];
    assert!(
        !rules.contains("info") && !rules.contains("+wait"),
        "{rules}"
    );
    ok(&global(&urls, "pool", &["init", "--max", "2"]), &AS_USER);
    let before = s.snapshot();
    let err = fails(&global(&urls, "pool", &["run", "--", "true"]), &AS_USER, 69);
    assert!(
        err.contains("denies this user INFO") && err.contains("--redis-replicas"),
        "{err}"
    );
    assert_eq!(s.snapshot(), before, "nothing may stay leased");
    let run = [&["run"][..], &FAST, &["--", "sh", "-c", "echo ran"]].concat();
    let with = [&["--redis-replicas", "0"][..], &run].concat();
    let out = ok(&global(&urls, "pool", &with), &AS_USER);
    assert_eq!(out.stdout.trim(), "ran");
}

#[test]
fn acl_rules_refuses_what_no_rule_can_name() {
    let err = fails(&["acl-rules", "lock"], &[], 2);
    assert!(err.contains("--lock-prefix"), "{err}");
    let err = fails(&["acl-rules", "--lock-prefix", "", "lock"], &[], 2);
    assert!(err.contains("every key"), "{err}");
    let err = fails(&["-N", "my pool", "acl-rules", "run"], &[], 2);
    assert!(err.contains("whitespace"), "{err}");
    let err = fails(&["--redis-user", "a b", "acl-rules"], &[], 2);
    assert!(err.contains("user name"), "{err}");
    fails(&["acl-rules", "nonsense"], &[], 2);
    // All subcommands but lock, which needs its prefix.
    let out = ok(&["acl-rules"], &[]);
    assert!(out.stdout.contains("# lock is left out"), "{}", out.stdout);
    let line = out.stdout.lines().last().unwrap();
    assert!(
        line.starts_with("ACL SETUSER yaraus reset on ~yaraus:"),
        "{line}"
    );
}
