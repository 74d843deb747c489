//! Structured logs, against real redis-servers and real
//! processes: with `--log-format json` every line yaraus writes on stderr is
//! one JSON object (time, level, message and the fields of what the line is
//! about), the final error included; the level options choose the lines; a
//! full stderr drops lines and says how many, in JSON too.
//!
//! * `mod.rs` (here): several subcommands in JSON, their failures included,
//!   each line parsed and checked against what the test did.
//! * `levels.rs`: `-v`, `--log-level`, `-q` and bad values.
//! * `blocked.rs`: a stderr nobody reads, in JSON.
//! * `text.rs`: a newline in a name, in text: still one line an event.

use crate::common;

mod blocked;
mod levels;
mod text;

use common::pool::{NS, fresh_pool};
use common::process::{Run, timings, yaraus_in};
use common::{Output, RedisServer};
use serde_json::Value;
use std::time::Duration;

/// No case may take longer than this; a hang fails the test.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

const JSON: [&str; 2] = ["--log-format", "json"];

/// `yaraus --log-format json ARGS` to its end.
fn json_run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let args: Vec<&str> = JSON.iter().chain(args).copied().collect();
    common::run_yaraus(&args, env, COMMAND_TIMEOUT)
}

/// Every line of `stderr`, each parsed as one JSON object with a time
/// (RFC 3339), a level and a message; panics naming the line otherwise.
fn objects(stderr: &str) -> Vec<Value> {
    stderr.lines().map(object).collect()
}

fn object(line: &str) -> Value {
    let value: Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
    let time = value["time"]
        .as_str()
        .unwrap_or_else(|| panic!("no time: {line}"));
    assert!(
        humantime::parse_rfc3339(time).is_ok(),
        "time {time:?}: {line}"
    );
    let level = value["level"]
        .as_str()
        .unwrap_or_else(|| panic!("no level: {line}"));
    assert!(
        ["error", "warn", "info", "debug", "trace"].contains(&level),
        "level {level:?}: {line}"
    );
    assert!(value["message"].is_string(), "no message: {line}");
    value
}

/// The one object whose message contains `needle`.
fn find<'a>(lines: &'a [Value], needle: &str) -> &'a Value {
    let found: Vec<&Value> = lines
        .iter()
        .filter(|l| l["message"].as_str().unwrap().contains(needle))
        .collect();
    assert_eq!(found.len(), 1, "{needle:?} in {lines:#?}");
    found[0]
}

/// The last line: the final error of a failing yaraus, with its exit code.
fn final_error(out: &Output, code: i32) -> Value {
    assert_eq!(out.code, Some(code), "{out:#?}");
    let lines = objects(&out.stderr);
    let last = lines.last().unwrap_or_else(|| panic!("no line: {out:#?}"));
    assert_eq!(last["level"], "error", "{out:#?}");
    assert_eq!(last["exit_code"], code, "{out:#?}");
    last.clone()
}

#[test]
fn run_in_json_names_its_id_and_client_id_on_every_line_once_leased() {
    let (server, scratch) = fresh_pool(7, 7);
    let url = server.url_ns(NS);
    // No <> in the command: a warning, said once the id is known.
    let mut cmd = yaraus_in(&scratch, &JSON);
    cmd.args(["run", "--redis", &url])
        .args(timings("2s", "300ms"))
        .args(["--", "sh", "-c", "exit 3"]);
    let mut run = Run::spawn(cmd, &scratch);
    assert_eq!(run.wait(), 3, "the command's own status");
    let lines = objects(&run.log());
    assert!(lines.iter().all(|l| l["subcommand"] == "run"), "{lines:#?}");
    let leased = find(&lines, "client id: ");
    assert_eq!(leased["level"], "info");
    assert_eq!(leased["id"], 7);
    let client = leased["client_id"].as_str().unwrap();
    assert_eq!(
        leased["message"],
        format!("client id: {client}, id: 7"),
        "the fields say what the text says"
    );
    let warning = find(&lines, "has no <>");
    assert_eq!(warning["level"], "warn");
    assert_eq!(
        (&warning["id"], &warning["client_id"]),
        (&leased["id"], &leased["client_id"])
    );
    // Before the lease there is no id to name.
    assert!(find(&lines, "getting new id")["id"].is_null());
}

#[test]
fn init_lock_and_stats_in_json_and_their_failures_as_one_object() {
    let (server, _scratch) = fresh_pool(1, 3);
    let url = server.url_ns(NS);

    let out = json_run(
        &[
            "--redis", &url, "init", "--min", "1", "--max", "2", "--force",
        ],
        &[],
    );
    assert_eq!(out.code, Some(0), "{out:#?}");
    let removing = objects(&out.stderr);
    assert_eq!(find(&removing, "removing ids 3")["subcommand"], "init");

    let out = json_run(&["--redis", &url, "lock", "-v", "job", "--", "true"], &[]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let lines = objects(&out.stderr);
    assert!(lines.len() >= 3, "{out:#?}");
    for line in &lines {
        assert_eq!(
            (&line["subcommand"], &line["lock"]),
            (&"lock".into(), &"job".into())
        );
    }
    find(&lines, "job: acquired on 1 of 1 masters");

    // A busy lock, not waited for: the final error names the lock and the code.
    server.cmd(&["SET", "busy", "theirs", "PX", "60000"]);
    let out = json_run(&["--redis", &url, "lock", "-n", "busy", "--", "true"], &[]);
    let last = final_error(&out, 75);
    assert_eq!(last["lock"], "busy");
    assert!(last["message"].as_str().unwrap().contains("busy"), "{last}");

    // Redis out of reach, one attempt.
    let out = json_run(
        &["--redis", "redis://127.0.0.1:1/", "stats", "-w", "0"],
        &[],
    );
    let last = final_error(&out, 69);
    assert_eq!(last["subcommand"], "stats");
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .contains("cannot reach Redis"),
        "{last}"
    );
    assert_eq!(out.stdout, "", "{out:#?}");

    // Stdout is not logging: the report is as it always was.
    let out = json_run(&["--redis", &url, "stats"], &[]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let report: Value = serde_json::from_str(&out.stdout).expect("stats is JSON");
    assert!(
        report.get("time").is_none() && report.get("level").is_none(),
        "{report}"
    );
}

#[test]
fn a_usage_error_is_one_json_object_when_json_was_asked_for() {
    let server = RedisServer::start();
    let before = server.snapshot();
    for (args, env) in [
        (vec!["--log-format", "json", "--bogus", "stats"], vec![]),
        (
            vec!["stats", "--format", "xml"],
            vec![("YARAUS_LOG_FORMAT", "json")],
        ),
    ] {
        let url = server.url();
        let args: Vec<&str> = args.into_iter().chain(["--redis", &url]).collect();
        let out = common::run_yaraus(&args, &env, COMMAND_TIMEOUT);
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {out:#?}");
        final_error(&out, 2);
    }
    assert_eq!(server.snapshot(), before);
}

#[test]
fn a_line_about_one_node_names_it() {
    let servers: Vec<RedisServer> = (0..3).map(|_| RedisServer::start()).collect();
    // Another program's hash at the lock's key on one master of three.
    servers[2].cmd(&["HSET", "mixed", "a", "b"]);
    let mut args = vec!["lock".to_string(), "--allow-volatile".into()];
    for s in &servers {
        args.extend(["--redis".into(), s.url()]);
    }
    args.extend(["mixed", "--", "true"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = json_run(&args, &[]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    let lines = objects(&out.stderr);
    let line = find(&lines, "the other masters make a majority");
    assert_eq!(
        (&line["level"], &line["lock"]),
        (&"warn".into(), &"mixed".into())
    );
    let node = line["node"].as_str().expect("a node field");
    assert_eq!(node, servers[2].url(), "not the third master");
    assert!(line["message"].as_str().unwrap().contains(node), "{line}");
}
