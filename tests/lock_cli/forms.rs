//! The script forms (`--acquire`, `--extend`, `--release`, `--info`), a
//! key prefix, semaphores, and masters given by the environment.

use super::*;

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
    // The round settles on a majority; the third master's script may run
    // a moment after yaraus has printed.
    let token = env["YARAUS_LOCK_TOKEN"].clone();
    for s in &servers {
        common::wait_until(
            "every master to hold the lock and its token",
            common::EVENT,
            || get(s, "acquire").as_deref() == Some(token.as_str()),
        );
        assert_eq!(get(s, "yaraus:fencing:acquire"), Some(fencing.to_string()));
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

    let output = run(lock_cmd(&[s]).args(["--info", "--limit", "2", "sem"]));
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

    // A plain lock on a semaphore's name sees shared holders (the layout
    // of `lock -s`), and is told what they may be.
    let output = run(lock_cmd(&[s]).args(["-n", "sem", "--", "true"]));
    assert_code(&output, 75);
    assert!(
        stderr(&output).contains("held by 2 shared holders (lock -s, or a semaphore of that name"),
        "{}",
        stderr(&output)
    );
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
