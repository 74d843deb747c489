//! `lock` (one master and three), `seq`, `hilo` and `index` as the user.

use super::{AS_USER, as_user, denied, global, servers_with_user};
use crate::common::run_yaraus;
use crate::security::ok;

#[test]
fn lock_works_as_the_acl_user_on_one_master_and_on_three() {
    let (servers, urls, rules) = servers_with_user(
        1,
        false,
        "ns",
        &["acl-rules", "--lock-prefix", "locks:", "lock"],
    );
    let one = &servers[0];
    assert!(!rules.contains("config"), "{rules}");
    let lock = |urls: &[String], more: &[&str]| {
        let args = [
            &["lock", "--prefix", "locks:", "job"][..],
            more,
            &["--", "sh", "-c", "echo $YARAUS_FENCING_TOKEN"],
        ]
        .concat();
        ok(&global(urls, "ns", &args), &AS_USER)
    };
    // Fencing tokens grow from one holder to the next.
    let token = |out: crate::security::common::Output| out.stdout.trim().parse::<u64>().unwrap();
    let first = token(lock(&urls, &[]));
    assert!(token(lock(&urls, &[])) > first);
    let info = ok(
        &global(
            &urls,
            "ns",
            &["lock", "--prefix", "locks:", "--info", "job"],
        ),
        &AS_USER,
    );
    assert!(
        info.stdout.contains(r#""key": "locks:job""#),
        "{}",
        info.stdout
    );
    let mut conn = as_user(one);
    assert!(
        denied(&mut conn, &["SET", "job", "x"]),
        "a key outside the prefix"
    );
    assert!(denied(&mut conn, &["GET", "ns:fencing:other"]));

    let (three, urls, rules) = servers_with_user(
        3,
        true,
        "ns",
        &["acl-rules", "--lock-prefix", "locks:", "lock"],
    );
    assert!(
        rules.contains("+config|get"),
        "several masters are checked: {rules}"
    );
    let fence = token(lock(&urls, &[])).to_string();
    for s in &three {
        assert_eq!(
            s.query::<Option<String>>(&["GET", "ns:fencing:locks:job"]),
            Some(fence.clone())
        );
    }
}

#[test]
fn seq_hilo_and_index_work_as_a_user_from_acl_rules() {
    let (_three, urls, rules) =
        servers_with_user(3, true, "ns", &["acl-rules", "seq", "hilo", "index"]);
    assert!(
        rules.contains("~ns:seq:*") && rules.contains("+config|get"),
        "{rules}"
    );
    let first: u64 = ok(&global(&urls, "ns", &["seq", "next", "s1"]), &AS_USER)
        .stdout
        .trim()
        .parse()
        .unwrap();
    ok(
        &global(&urls, "ns", &["seq", "set-floor", "s1", "1000"]),
        &AS_USER,
    );
    let now: u64 = ok(&global(&urls, "ns", &["seq", "get", "s1"]), &AS_USER)
        .stdout
        .trim()
        .parse()
        .unwrap();
    assert!(now >= 1000 && now > first, "{first} then {now}");

    ok(&global(&urls, "ns", &["hilo", "agent", "h1"]), &AS_USER);
    let ids = ok(&global(&urls, "ns", &["hilo", "next", "h1"]), &AS_USER);
    assert!(!ids.stdout.trim().is_empty());
    let status = ok(&global(&urls, "ns", &["hilo", "status", "h1"]), &AS_USER);
    assert!(status.stdout.contains("\"ok\":true"), "{}", status.stdout);

    // An index lives on one server.
    let one = &urls[..1];
    let out = ok(
        &global(
            one,
            "ns",
            &[
                "index",
                "web",
                "--interval",
                "200ms",
                "--",
                "sh",
                "-c",
                "echo $YARAUS_INDEX",
            ],
        ),
        &AS_USER,
    );
    assert_eq!(out.stdout.trim(), "0");
    ok(&global(one, "ns", &["index", "web", "--status"]), &AS_USER);
}

#[test]
fn health_and_its_gate_work_as_a_user_from_acl_rules() {
    let (three, urls, rules) = servers_with_user(3, true, "ns", &["acl-rules", "seq", "health"]);
    assert!(
        rules.contains("+scan") && rules.contains("+time"),
        "{rules}"
    );
    ok(&global(&urls, "ns", &["seq", "next", "s1"]), &AS_USER);
    let look = ok(&global(&urls, "ns", &["health"]), &AS_USER);
    assert!(
        look.stdout
            .contains("ns:seq:s1 (sequence): held by all at 1"),
        "{}",
        look.stdout
    );
    // A node that lost its data (its users kept): the gate heals it as
    // the user.
    let _: () = three[1].query(&["FLUSHALL"]);
    let gate = run_yaraus(
        &global(&urls, "ns", &["health", "--wait", "60s"]),
        &AS_USER,
        std::time::Duration::from_secs(90),
    );
    assert_eq!(gate.code, Some(0), "{}\n{}", gate.stdout, gate.stderr);
}
