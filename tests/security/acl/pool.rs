//! The pool subcommands as the user: everything they were made for works, and
//! nothing else does.

use super::{AS_USER, as_user, denied, global, servers_with_user};
use crate::security::{ADMIN_PASSWORD, FAST, LIMIT, fails, ok};

#[test]
fn a_user_from_acl_rules_runs_the_pool_subcommands_and_can_touch_nothing_else() {
    let (servers, urls, rules) = servers_with_user(
        1,
        false,
        "pool",
        &["acl-rules", "init", "run", "stats", "list"],
    );
    let s = &servers[0];
    assert!(
        rules.contains("~pool:ids") && rules.contains("+info|replication"),
        "{rules}"
    );

    let stats = init_run_once_and_stats(&urls);
    let stats: serde_json::Value = serde_json::from_str(&stats).expect("stats JSON");
    assert_eq!(stats["client_get_id_success"], 1, "{stats}");
    let prom = ok(
        &global(&urls, "pool", &["stats", "--format", "prometheus"]),
        &AS_USER,
    );
    assert!(
        prom.stdout
            .contains(r#"yaraus_client_get_id_success_total{pool="pool:ids"} 1"#),
        "{}",
        prom.stdout
    );
    let list = ok(&global(&urls, "pool", &["list"]), &AS_USER);
    let list: serde_json::Value = serde_json::from_str(&list.stdout).expect("list JSON");
    assert_eq!(list.as_array().map(Vec::len), Some(3), "{list}");

    // Without the user's credentials the same command is refused: what
    // worked above worked as the ACL user.
    fails(&global(&urls, "pool", &["stats"]), &[], 69);

    // Redis enforces the rules: nothing outside the pool's keys and the
    // commands yaraus sends.
    let mut conn = as_user(s);
    let _: redis::Value = redis::cmd("HGETALL")
        .arg("pool:clients")
        .query(&mut conn)
        .expect("a pool key is readable");
    for forbidden in [
        &["SET", "other", "x"][..],
        &["GET", "pool:other"],
        &["GET", "yaraus:ids"],
        &["DEL", "pool:other"],
        &["KEYS", "*"],
        &["CONFIG", "GET", "requirepass"],
        &["INFO"],
        &["FLUSHALL"],
        &["EVAL", "return 1", "0"],
        &["ACL", "LIST"],
    ] {
        assert!(denied(&mut conn, forbidden), "{forbidden:?} was allowed");
    }
    // A script the user loads runs with the user's rights, no more.
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg("return redis.call('SET', 'other', 'x')")
        .query(&mut conn)
        .expect("SCRIPT LOAD is allowed");
    assert!(denied(&mut conn, &["EVALSHA", &sha, "0"]));
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg("return redis.call('FLUSHALL')")
        .query(&mut conn)
        .unwrap();
    assert!(denied(&mut conn, &["EVALSHA", &sha, "0"]));
    assert_eq!(s.query::<Option<String>>(&["GET", "other"]), None);
}

#[test]
fn the_rules_of_stats_and_list_let_them_read_and_a_run_is_refused_changing_nothing() {
    let (servers, urls, rules) =
        servers_with_user(1, false, "pool", &["acl-rules", "stats", "list"]);
    let s = &servers[0];
    assert!(
        !rules.contains("+zadd") && !rules.contains("+hincrby"),
        "{rules}"
    );
    // The pool is made by an administrator.
    ok(
        &["--redis", &urls[0], "-N", "pool", "init", "--max", "2"],
        &[("REDISCLI_AUTH", ADMIN_PASSWORD)],
    );
    ok(&global(&urls, "pool", &["stats"]), &AS_USER);
    ok(
        &global(&urls, "pool", &["list", "--format", "table"]),
        &AS_USER,
    );
    // lock --info names a node that denies the user as refused, not as down.
    let info = crate::security::common::run_yaraus(
        &global(&urls, "pool", &["lock", "--info", "job"]),
        &AS_USER,
        LIMIT,
    );
    assert_eq!(info.code, Some(69), "{}", info.stderr);
    assert!(
        info.stdout.contains(r#""state": "refused""#),
        "{}",
        info.stdout
    );
    let before = s.snapshot();
    // (--redis-replicas: past the replica count, to the script itself.)
    let run = ["run", "--redis-replicas", "0", "--", "true"];
    let err = fails(&global(&urls, "pool", &run), &AS_USER, 69);
    assert!(
        err.contains("denies this user") && err.contains("acl-rules"),
        "{err}"
    );
    assert_eq!(s.snapshot(), before, "a refused run changed the pool");
}

/// `list --using` finds the leased ids by a script and counts of its own:
/// the rules of `list` alone must allow them.
#[test]
fn the_rules_of_list_alone_let_it_list_the_leased_ids() {
    let (servers, urls, _) = servers_with_user(1, false, "pool", &["acl-rules", "list"]);
    let s = &servers[0];
    ok(
        &["--redis", &urls[0], "-N", "pool", "init", "--max", "4"],
        &[("REDISCLI_AUTH", ADMIN_PASSWORD)],
    );
    let (secs, _): (u64, u64) = s.query(&["TIME"]);
    let _: i64 = s.query(&["ZADD", "pool:ids", "XX", &(secs + 600).to_string(), "A3"]);
    let using = ok(&global(&urls, "pool", &["list", "--using"]), &AS_USER);
    let rows: serde_json::Value = serde_json::from_str(&using.stdout).expect("list JSON");
    assert_eq!(rows[0]["id"], 3, "{rows}");
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows}");
    // A pool in the Go tool's layout records no range: `list` scans it.
    let _: i64 = s.query(&["HDEL", "pool:stats", "min", "max"]);
    let all = ok(&global(&urls, "pool", &["list"]), &AS_USER);
    let rows: serde_json::Value = serde_json::from_str(&all.stdout).expect("list JSON");
    assert_eq!(rows.as_array().map(Vec::len), Some(4), "{rows}");
}

/// A user made from the rules of a yaraus without sharded pools (no layout
/// record, no shards, no `GET`, no `SCAN`) keeps running the pool subcommands on a
/// pool that is not sharded: the layout it may not read is taken as none.
#[test]
fn a_user_from_rules_without_shards_keeps_using_a_pool_that_is_not_sharded() {
    let (servers, urls, _) = servers_with_user(
        1,
        false,
        "pool",
        &["acl-rules", "init", "run", "stats", "list"],
    );
    let s = &servers[0];
    s.cmd(&[
        "ACL",
        "SETUSER",
        "app",
        "-get",
        "-scan",
        "resetkeys",
        "~pool:ids",
        "~pool:clients",
        "~pool:stats",
        "~pool:clock",
        "~pool:queue:pool:ids",
        "~pool:ids:building:*",
    ]);
    let stats = init_run_once_and_stats(&urls);
    assert!(stats.contains("\"client_get_id_success\": 1"), "{stats}");
    ok(&global(&urls, "pool", &["list", "--using"]), &AS_USER);
}

/// As the user: `init --max 3`, one `run` whose command is given id 1,
/// then `stats`' output.
fn init_run_once_and_stats(urls: &[String]) -> String {
    ok(&global(urls, "pool", &["init", "--max", "3"]), &AS_USER);
    let run = [
        &["run"][..],
        &FAST,
        &["--", "sh", "-c", "echo $YARAUS_WORKER_ID"],
    ]
    .concat();
    let out = ok(&global(urls, "pool", &run), &AS_USER);
    assert_eq!(out.stdout.trim(), "1");
    ok(&global(urls, "pool", &["stats"]), &AS_USER).stdout
}
