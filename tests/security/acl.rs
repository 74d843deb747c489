//! A Redis user made from `yaraus acl-rules` output: every subcommand it was
//! made for works as that user, Redis refuses it everything else, and a
//! command the operator chose not to grant (`INFO`, `CONFIG GET`) gives the
//! documented message and exit status, with nothing changed in Redis.

use super::common::RedisServer;
use super::{ADMIN_PASSWORD, FAST, USER_PASSWORD, bare_url, fails, ok, server};

const USER: &str = "app";

/// The environment that gives yaraus the user's password.
const AS_USER: [(&str, &str); 1] = [("YARAUS_REDIS_PASSWORD", USER_PASSWORD)];

/// Creates the user from the rules of `rules_args` on every server.
fn create_user(servers: &[&RedisServer], rules_args: &[&str]) -> String {
    super::common::create_acl_user(servers, rules_args, USER_PASSWORD)
}

/// `n` servers (with `fsync`, persisting every write), and on each the user
/// made from `yaraus --redis URL… -N NS --redis-user app ACL_ARGS`; returns
/// them, their URLs and the rules line.
fn servers_with_user(
    n: usize,
    fsync: bool,
    ns: &str,
    acl_args: &[&str],
) -> (Vec<RedisServer>, Vec<String>, String) {
    let servers: Vec<RedisServer> = (0..n).map(|_| server(fsync)).collect();
    let urls: Vec<String> = servers.iter().map(bare_url).collect();
    let rules = create_user(
        &servers.iter().collect::<Vec<_>>(),
        &global(&urls, ns, acl_args),
    );
    (servers, urls, rules)
}

/// A connection of the user, to try what yaraus never does.
fn as_user(server: &RedisServer) -> redis::Connection {
    let info = server.connection_info();
    let settings = info
        .redis_settings()
        .clone()
        .set_username(USER)
        .set_password(USER_PASSWORD);
    redis::Client::open(info.set_redis_settings(settings))
        .and_then(|c| c.get_connection())
        .expect("connect as the ACL user")
}

fn denied(conn: &mut redis::Connection, args: &[&str]) -> bool {
    let (name, rest) = args.split_first().unwrap();
    match redis::cmd(name).arg(rest).query::<redis::Value>(conn) {
        Err(e) => e.code() == Some("NOPERM") || e.to_string().contains("can't"),
        Ok(_) => false,
    }
}

/// Waits until `waiter` (woken, with a fallback poll of 30 s) exits,
/// within `EVENT`, and asserts it succeeded; kills it otherwise.
fn woken_within_event(mut waiter: std::process::Child, what: &str) {
    use super::common::{EVENT, wait_until};
    let woken = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_until(what, EVENT, || waiter.try_wait().unwrap().is_some())
    }));
    if woken.is_err() {
        let _ = waiter.kill();
    }
    let output = waiter.wait_with_output().unwrap();
    assert!(
        woken.is_ok() && output.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Starts yaraus as the user on `urls`, namespace `ns`, with `args` and
/// `env`; stderr is kept for the message of a failure.
fn spawn_as_user(urls: &[String], args: &[&str], env: &[(&str, &str)]) -> std::process::Child {
    super::common::yaraus()
        .args(global(urls, "ns", args))
        .envs(AS_USER)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// `--redis URL… -N NS --redis-user app`, then `rest`.
fn global<'a>(urls: &'a [String], ns: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = Vec::new();
    for u in urls {
        args.extend(["--redis", u.as_str()]);
    }
    args.extend(["-N", ns, "--redis-user", USER]);
    args.extend(rest);
    args
}

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

    ok(&global(&urls, "pool", &["init", "--max", "3"]), &AS_USER);
    let run = [
        &["run"][..],
        &FAST,
        &["--", "sh", "-c", "echo $YARAUS_WORKER_ID"],
    ]
    .concat();
    let out = ok(&global(&urls, "pool", &run), &AS_USER);
    assert_eq!(out.stdout.trim(), "1");
    let stats = ok(&global(&urls, "pool", &["stats"]), &AS_USER);
    let stats: serde_json::Value = serde_json::from_str(&stats.stdout).expect("stats JSON");
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
    let info = super::common::run_yaraus(
        &global(&urls, "pool", &["lock", "--info", "job"]),
        &AS_USER,
        super::LIMIT,
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
    let token = |out: super::common::Output| out.stdout.trim().parse::<u64>().unwrap();
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

#[test]
fn a_waiter_restricted_by_acl_rules_is_woken_by_a_release() {
    use super::common::{EVENT, wait_until};
    let (servers, urls, rules) = servers_with_user(
        1,
        false,
        "ns",
        &["acl-rules", "--lock-prefix", "locks:", "lock"],
    );
    assert!(
        rules.contains("&ns:wake:locks:*") && rules.contains("+subscribe"),
        "{rules}"
    );
    let one = &servers[0];
    let mut conn = as_user(one);
    assert!(
        denied(&mut conn, &["PUBLISH", "ns:wake:other", ""]),
        "a channel outside the locks' wake channels"
    );
    let dir = tempfile::tempdir().unwrap();
    let (started, go) = (dir.path().join("started"), dir.path().join("go"));
    let spawn = |args: &[&str], env: &[(&str, &str)]| spawn_as_user(&urls, args, env);
    let holder_script = super::common::process::holds_until_go(&started, &go);
    let mut holder = spawn(
        &["lock", "--prefix", "locks:", "job", "-c", &holder_script],
        &[],
    );
    wait_until("the holder's command", EVENT, || started.exists());
    // A fallback poll of 30 s (the test knob): only a wake-up ends the
    // wait within EVENT.
    let waiter = spawn(
        &["lock", "--prefix", "locks:", "job", "--", "true"],
        &[("YARAUS_TEST_LOCK_POLL_MS", "30000")],
    );
    wait_until("the waiter to subscribe as the user", EVENT, || {
        let (_, n): (String, i64) = one.query(&["PUBSUB", "NUMSUB", "ns:wake:locks:job"]);
        n >= 1
    });
    std::fs::write(&go, "").unwrap();
    assert!(holder.wait().unwrap().success());
    woken_within_event(waiter, "the waiter, woken, to take the lock");
}

#[test]
fn a_run_restricted_by_acl_rules_is_woken_by_a_release() {
    use super::common::{EVENT, wait_until};
    let (servers, urls, rules) = servers_with_user(1, false, "ns", &["acl-rules", "init", "run"]);
    assert!(
        rules.contains("&ns:wake:ns:ids ") && rules.contains("+subscribe"),
        "the pool's one channel: {rules}"
    );
    let one = &servers[0];
    assert!(
        denied(&mut as_user(one), &["PUBLISH", "ns:wake:ns:idsX", ""]),
        "a channel beside the pool's"
    );
    let dir = tempfile::tempdir().unwrap();
    let (started, go) = (dir.path().join("started"), dir.path().join("go"));
    let spawn = |args: &[&str], env: &[(&str, &str)]| spawn_as_user(&urls, args, env);
    let init = spawn(&["init", "--min", "1", "--max", "1"], &[]);
    assert!(init.wait_with_output().unwrap().status.success());
    let fast = ["run", "--no-safeguards", "--delay", "0", "--"];
    let script = super::common::process::holds_until_go(&started, &go);
    let holder = spawn(&[&fast[..], &["sh", "-c", &script]].concat(), &[]);
    wait_until("the holder's command", EVENT, || started.exists());
    // A fallback poll of 30 s (the test knob): only a wake-up ends the
    // wait within EVENT.
    let waiter = spawn(
        &[&fast[..], &["true"]].concat(),
        &[("YARAUS_TEST_RUN_POLL_MS", "30000")],
    );
    wait_until("the waiting run to subscribe as the user", EVENT, || {
        let (_, n): (String, i64) = one.query(&["PUBSUB", "NUMSUB", "ns:wake:ns:ids"]);
        n >= 1
    });
    std::fs::write(&go, "").unwrap();
    assert!(holder.wait_with_output().unwrap().status.success());
    woken_within_event(waiter, "the waiting run, woken, to lease the id");
}

/// Makes the user on `servers` again from `rules` as a yaraus without
/// queues of waiters printed them: no queue keys, no waiters' own channels
/// beside the pool's (`&NS:wake:NS:ids:*`).
fn as_before_queues(servers: &[RedisServer], rules: &str) -> String {
    let old: Vec<&str> = rules
        .split_whitespace()
        .filter(|t| !t.contains(":queue:") && !t.ends_with(":ids:*"))
        .collect();
    let password = format!(">{USER_PASSWORD}");
    for s in servers {
        let mut args = old.clone();
        args.push(&password);
        assert_eq!(s.query::<String>(&args), "OK");
    }
    old.join(" ")
}

#[test]
fn a_user_made_from_the_rules_before_queues_still_waits_is_woken_and_releases() {
    use super::common::{EVENT, wait_until};
    let (servers, urls, rules) = servers_with_user(
        1,
        false,
        "ns",
        &[
            "acl-rules",
            "--lock-prefix",
            "locks:",
            "init",
            "run",
            "lock",
        ],
    );
    let old = as_before_queues(&servers, &rules);
    assert!(
        !old.contains("queue") && old.contains("&ns:wake:ns:ids"),
        "{old}"
    );
    let one = &servers[0];
    assert!(denied(&mut as_user(one), &["ZCARD", "ns:queue:locks:job"]));
    let dir = tempfile::tempdir().unwrap();
    let (started, go) = (dir.path().join("started"), dir.path().join("go"));
    let spawn = |args: &[&str], env: &[(&str, &str)]| spawn_as_user(&urls, args, env);
    let init = spawn(&["init", "--min", "1", "--max", "1"], &[]);
    assert!(init.wait_with_output().unwrap().status.success());
    let holds = super::common::process::holds_until_go(&started, &go);
    let fast = ["run", "--no-safeguards", "--delay", "0", "--"];
    // A lock and a run, each held while another waits with a fallback poll
    // of 30 s (the test knobs): only a wake-up ends the wait within EVENT.
    // (holder, waiter, its poll knob, the channel it listens on)
    type Case<'a> = (Vec<&'a str>, Vec<&'a str>, (&'a str, &'a str), &'a str);
    let cases: [Case; 2] = [
        (
            vec!["lock", "--prefix", "locks:", "job", "-c", &holds],
            vec!["lock", "--prefix", "locks:", "job", "--", "true"],
            ("YARAUS_TEST_LOCK_POLL_MS", "30000"),
            "ns:wake:locks:job",
        ),
        (
            [&fast[..], &["sh", "-c", &holds]].concat(),
            [&fast[..], &["true"]].concat(),
            ("YARAUS_TEST_RUN_POLL_MS", "30000"),
            "ns:wake:ns:ids",
        ),
    ];
    for (holding, waiting, knob, channel) in cases {
        let _ = std::fs::remove_file(&go);
        let _ = std::fs::remove_file(&started);
        let holder = spawn(&holding, &[]);
        wait_until("the holder's command", EVENT, || started.exists());
        let waiter = spawn(&waiting, &[knob]);
        wait_until("the waiter to subscribe as the user", EVENT, || {
            let (_, n): (String, i64) = one.query(&["PUBSUB", "NUMSUB", channel]);
            n >= 1
        });
        std::fs::write(&go, "").unwrap();
        // The release named the queue, was refused by the ACL, and freed
        // without it, saying so once.
        let released = holder.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&released.stderr).into_owned();
        assert!(released.status.success(), "{said}");
        assert!(
            said.contains("denies this user the queue of waiters"),
            "{said}"
        );
        woken_within_event(
            waiter,
            &format!("the waiter on {channel}, woken, to take its claim"),
        );
    }
}
