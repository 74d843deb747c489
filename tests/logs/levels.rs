//! Which lines are written: `-v` and `--log-level` (or `YARAUS_LOG_LEVEL`)
//! add the debug lines (each renewal), `-q` keeps only warnings and errors;
//! a bad value is one line and the usage exit code, with Redis untouched.

use super::*;
use common::pool::stat;
use common::{EVENT, wait_until};

/// The lines of a `yaraus run` in JSON with `opts` and `env`, whose command
/// ends only once the test has seen two renewals in Redis: the first one's
/// line is then surely logged (a renewal is sent only after the previous
/// one is done with).
fn past_two_renewals(opts: &[&str], env: &[(&str, &str)]) -> Vec<Value> {
    let (server, scratch) = fresh_pool(1, 1);
    let child = scratch.script("child.sh", "until [ -e \"$D/go\" ]; do sleep 0.02; done\n");
    let mut cmd = yaraus_in(&scratch, &JSON);
    cmd.args(opts)
        .args(["run", "--redis", &server.url_ns(NS)])
        .args(timings("2s", "300ms"))
        .args(["--replacement", "", "--", "sh", &child])
        .envs(env.iter().copied());
    let mut run = Run::spawn(cmd, &scratch);
    wait_until("two renewals", EVENT, || {
        stat(&server, "extend_ttl_success") >= 2
    });
    scratch.touch("go");
    assert_eq!(run.wait(), 0, "{}", run.log());
    objects(&run.log())
}

fn at(lines: &[Value], level: &str) -> usize {
    lines.iter().filter(|l| l["level"] == level).count()
}

#[test]
fn v_and_log_level_debug_show_each_renewal_and_the_default_does_not() {
    for (opts, env) in [
        (vec!["-v"], vec![]),
        (vec!["--log-level", "debug"], vec![]),
        (vec![], vec![("YARAUS_LOG_LEVEL", "debug")]),
    ] {
        let lines = past_two_renewals(&opts, &env);
        let renewed: Vec<&Value> = lines
            .iter()
            .filter(|l| l["message"].as_str().unwrap().contains("id 1: renewed in "))
            .collect();
        assert!(!renewed.is_empty(), "{opts:?} {env:?}: {lines:#?}");
        for line in renewed {
            assert_eq!((&line["level"], &line["id"]), (&"debug".into(), &1.into()));
        }
    }
    let lines = past_two_renewals(&[], &[]);
    assert_eq!(at(&lines, "debug"), 0, "{lines:#?}");
    find(&lines, "starting...");
}

#[test]
fn quiet_keeps_the_warnings_and_log_level_error_keeps_nothing_of_a_good_run() {
    let lines = past_two_renewals(&["-q"], &[]);
    assert_eq!(at(&lines, "info") + at(&lines, "debug"), 0, "{lines:#?}");
    assert_eq!(find(&lines, "safeguards are off")["level"], "warn");
    let lines = past_two_renewals(&["--log-level", "error"], &[]);
    assert!(lines.is_empty(), "{lines:#?}");
}

#[test]
fn a_bad_level_or_format_is_one_line_and_exit_2_and_redis_is_unchanged() {
    let server = RedisServer::start();
    let url = server.url_ns("t");
    let before = server.snapshot();
    for (opts, env, names) in [
        (vec!["--log-format", "xml"], vec![], "--log-format"),
        (vec!["--log-level", "loud"], vec![], "--log-level"),
        (vec![], vec![("YARAUS_LOG_LEVEL", "loud")], "--log-level"),
        (vec![], vec![("YARAUS_LOG_FORMAT", "yaml")], "--log-format"),
        (vec!["-q", "-v"], vec![], "--quiet"),
    ] {
        let args: Vec<&str> = opts
            .iter()
            .copied()
            .chain(["--redis", &url, "init", "--max", "5"])
            .collect();
        let out = common::run_yaraus(&args, &env, COMMAND_TIMEOUT);
        assert_eq!(out.code, Some(2), "{args:?} {env:?}: {out:#?}");
        assert_eq!(out.stdout, "", "{out:#?}");
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?} {env:?}: {out:#?}");
        assert!(lines[0].starts_with("yaraus: "), "{out:#?}");
        assert!(lines[0].contains(names), "{names}: {out:#?}");
    }
    assert_eq!(server.snapshot(), before);
}
