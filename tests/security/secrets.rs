//! The password, however it is given (URL on the command line, URL in
//! `YARAUS_REDIS`, `--redis-password-file`, `YARAUS_REDIS_PASSWORD`,
//! `REDISCLI_AUTH`), reaches no child's environment, no process list when it
//! was not put there, and no output; a password file others may read is
//! refused before anything is asked of Redis.

use super::common::RedisServer;
use super::common::process::{Run, parent_of, yaraus_in};
use super::common::scratch::Scratch;
use super::{ADMIN_PASSWORD, FAST, bare_url, fails, ok, server};
use std::os::unix::fs::PermissionsExt;

/// A password file of `mode` in `scratch`; returns its path.
fn password_file(scratch: &Scratch, mode: u32, password: &str) -> String {
    let path = scratch.path("redis-password");
    std::fs::write(&path, format!("{password}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    scratch.arg("redis-password")
}

/// One way of giving yaraus the password: extra arguments before the
/// subcommand, and variables.
struct Way {
    name: &'static str,
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
}

fn ways(s: &RedisServer, scratch: &Scratch) -> Vec<Way> {
    let bare = bare_url(s);
    let with_password = format!("{bare}?pass={ADMIN_PASSWORD}");
    let file = password_file(scratch, 0o600, ADMIN_PASSWORD);
    let way = |name, args: &[&str], env: &[(&'static str, &str)]| Way {
        name,
        args: args.iter().map(|a| a.to_string()).collect(),
        env: env.iter().map(|(k, v)| (*k, v.to_string())).collect(),
    };
    vec![
        way("URL on the command line", &["--redis", &with_password], &[]),
        way(
            "URL in YARAUS_REDIS",
            &[],
            &[("YARAUS_REDIS", &with_password)],
        ),
        way(
            "--redis-password-file",
            &["--redis", &bare, "--redis-password-file", &file],
            &[],
        ),
        way(
            "YARAUS_REDIS_PASSWORD_FILE",
            &["--redis", &bare],
            &[("YARAUS_REDIS_PASSWORD_FILE", &file)],
        ),
        way(
            "YARAUS_REDIS_PASSWORD",
            &["--redis", &bare],
            &[("YARAUS_REDIS_PASSWORD", ADMIN_PASSWORD)],
        ),
        way(
            "REDISCLI_AUTH",
            &["--redis", &bare],
            &[("REDISCLI_AUTH", ADMIN_PASSWORD)],
        ),
    ]
}

/// Runs `yaraus WAY SUBCOMMAND…` whose child writes its environment to
/// `dump`; returns the finished run.
fn run_dumping(scratch: &Scratch, way: &Way, subcommand: &[&str], dump: &str) -> Run {
    let mut args: Vec<&str> = way.args.iter().map(String::as_str).collect();
    args.extend(subcommand);
    let script = format!("env > \"$D/{dump}\"");
    args.extend(["--", "sh", "-c", &script]);
    let mut cmd = yaraus_in(scratch, &args);
    cmd.envs(way.env.iter().map(|(k, v)| (k, v)));
    let mut run = Run::spawn(cmd, scratch);
    assert_eq!(run.wait(), 0, "{}: {}", way.name, run.log());
    run
}

#[test]
fn no_way_of_giving_the_password_lets_it_reach_the_child() {
    let s = server(false);
    let scratch = Scratch::new();
    for way in ways(&s, &scratch) {
        let init: Vec<&str> = way.args.iter().map(String::as_str).collect();
        let mut cmd = yaraus_in(&scratch, &[&init[..], &["init", "--max", "3"]].concat());
        cmd.envs(way.env.iter().map(|(k, v)| (k, v)));
        let mut init = Run::spawn(cmd, &scratch);
        assert_eq!(init.wait(), 0, "{}: {}", way.name, init.log());

        let run = run_dumping(&scratch, &way, &[&["run"][..], &FAST].concat(), "run.env");
        let lock = run_dumping(&scratch, &way, &["lock", "job"], "lock.env");
        let index = ["index", "web", "--interval", "200ms"];
        run_dumping(&scratch, &way, &index, "index.env");
        for (dump, wanted) in [
            ("run.env", "YARAUS_WORKER_ID="),
            ("lock.env", "YARAUS_FENCING_TOKEN="),
            ("index.env", "YARAUS_INDEX="),
        ] {
            let env = scratch.read(dump).expect("the child wrote its environment");
            assert!(env.contains(wanted), "{}: {dump}:\n{env}", way.name);
            assert!(
                !env.contains(ADMIN_PASSWORD),
                "{}: {dump} has the password:\n{env}",
                way.name
            );
            for var in [
                "YARAUS_REDIS=",
                "YARAUS_REDIS_PASSWORD",
                "REDISCLI_AUTH",
                "redis-password",
            ] {
                assert!(!env.contains(var), "{}: {dump} has {var}:\n{env}", way.name);
            }
        }
        // Only a password that is in the process list is warned of.
        let warned = run.log().contains("is on the command line");
        assert_eq!(
            warned,
            way.name == "URL on the command line",
            "{}: {}",
            way.name,
            run.log()
        );
        assert!(!run.log().contains(ADMIN_PASSWORD) && !lock.log().contains(ADMIN_PASSWORD));
    }
}

#[test]
fn pass_env_keeps_what_it_names_and_refuses_a_name_that_is_not_removed() {
    let s = server(false);
    let scratch = Scratch::new();
    let way = Way {
        name: "REDISCLI_AUTH kept",
        args: vec!["--redis".into(), bare_url(&s)],
        env: vec![("REDISCLI_AUTH", ADMIN_PASSWORD.into())],
    };
    let mut init = yaraus_in(&scratch, &["--redis", &bare_url(&s), "init"]);
    init.env("REDISCLI_AUTH", ADMIN_PASSWORD);
    assert_eq!(Run::spawn(init, &scratch).wait(), 0);
    let run = [&["run", "--pass-env", "REDISCLI_AUTH"][..], &FAST].concat();
    run_dumping(&scratch, &way, &run, "kept.env");
    let env = scratch.read("kept.env").unwrap();
    assert!(
        env.contains(&format!("REDISCLI_AUTH={ADMIN_PASSWORD}")),
        "{env}"
    );

    let err = fails(
        &[
            "--redis",
            &bare_url(&s),
            "run",
            "--pass-env",
            "PATH",
            "--",
            "true",
        ],
        &[("REDISCLI_AUTH", ADMIN_PASSWORD)],
        2,
    );
    assert!(err.contains("--pass-env PATH"), "{err}");
}

/// The command line of `pid`, its NULs made spaces.
fn cmdline(pid: i32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&raw).replace('\0', " ")
}

#[test]
fn the_process_list_shows_no_password_that_came_from_a_file_or_the_environment() {
    let s = server(false);
    let scratch = Scratch::new();
    let bare = bare_url(&s);
    let file = password_file(&scratch, 0o600, ADMIN_PASSWORD);
    let mut init = yaraus_in(
        &scratch,
        &["--redis", &bare, "--redis-password-file", &file, "init"],
    );
    init.env_remove("REDISCLI_AUTH");
    assert_eq!(Run::spawn(init, &scratch).wait(), 0);
    let with_password = format!("{bare}?pass={ADMIN_PASSWORD}");
    // (name, arguments, variables, whether the password is in the process list)
    type Case<'a> = (&'a str, Vec<&'a str>, Vec<(&'a str, &'a str)>, bool);
    let cases: [Case; 3] = [
        (
            "file",
            vec!["--redis", &bare, "--redis-password-file", &file],
            vec![],
            false,
        ),
        (
            "environment",
            vec!["--redis", &bare],
            vec![("YARAUS_REDIS_PASSWORD", ADMIN_PASSWORD)],
            false,
        ),
        // The contrast that shows the check can fail: the URL on argv is there.
        (
            "URL on the command line",
            vec!["--redis", &with_password],
            vec![],
            true,
        ),
    ];
    for (n, (name, args, env, listed)) in cases.into_iter().enumerate() {
        let pid_file = format!("pid{n}");
        let go = format!("go{n}");
        let script =
            format!("echo $$ > \"$D/{pid_file}\"; while [ ! -e \"$D/{go}\" ]; do sleep 0.02; done");
        let mut all = args.clone();
        all.extend(["run"]);
        all.extend(FAST);
        all.extend(["--", "sh", "-c", &script]);
        let mut cmd = yaraus_in(&scratch, &all);
        cmd.envs(env.iter().copied());
        let mut run = Run::spawn(cmd, &scratch);
        let child: i32 = scratch.wait_line(&pid_file).trim().parse().unwrap();
        let watchdog = parent_of(child).expect("the child's parent");
        let yaraus = run.pid().as_raw();
        let lists = [yaraus, watchdog, child]
            .iter()
            .any(|&pid| cmdline(pid).contains(ADMIN_PASSWORD));
        assert_eq!(lists, listed, "{name}: {}", cmdline(yaraus));
        let environ = std::fs::read(format!("/proc/{child}/environ")).unwrap();
        assert!(
            !String::from_utf8_lossy(&environ).contains(ADMIN_PASSWORD),
            "{name}: the child's environment has it"
        );
        scratch.touch(&go);
        assert_eq!(run.wait(), 0, "{name}: {}", run.log());
    }
}

#[test]
fn a_password_file_others_may_read_is_refused_and_nothing_changes() {
    let s = server(false);
    let scratch = Scratch::new();
    let bare = bare_url(&s);
    for mode in [0o644, 0o640, 0o606] {
        let file = password_file(&scratch, mode, ADMIN_PASSWORD);
        let err = fails(
            &["--redis", &bare, "--redis-password-file", &file, "init"],
            &[],
            2,
        );
        assert!(
            err.contains("chmod 600") && !err.contains(ADMIN_PASSWORD),
            "{err}"
        );
    }
    // A password in the URL and a file: one of them is a mistake.
    let file = password_file(&scratch, 0o600, ADMIN_PASSWORD);
    let with_password = format!("{bare}?pass={ADMIN_PASSWORD}");
    let err = fails(
        &[
            "--quiet",
            "--redis",
            &with_password,
            "--redis-password-file",
            &file,
            "init",
        ],
        &[],
        2,
    );
    assert!(
        err.contains("two passwords") && !err.contains(ADMIN_PASSWORD),
        "{err}"
    );
    assert!(s.snapshot().is_empty(), "a refused command wrote something");
}

#[test]
fn no_output_shows_the_password() {
    let s = server(false);
    let with_password = format!("{}?pass={ADMIN_PASSWORD}", bare_url(&s));
    let quiet = |rest: &[&'static str]| -> Vec<String> {
        ["--quiet", "--redis", &with_password]
            .iter()
            .chain(rest)
            .map(|a| a.to_string())
            .collect()
    };
    let mut seen = String::new();
    for args in [
        quiet(&["init", "--max", "2"]),
        quiet(&["stats"]),
        quiet(&["stats", "--format", "prometheus"]),
        quiet(&["list", "--format", "table"]),
        quiet(&["lock", "--info", "job"]),
        quiet(&["lock", "--acquire", "job"]),
        vec!["--redis".to_string(), with_password.clone(), "stats".into()],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = ok(&args, &[]);
        seen.push_str(&out.stdout);
        seen.push_str(&out.stderr);
    }
    // Errors name the URL, never with its password: a wrong one, an
    // unreachable server, a bad URL.
    let wrong = format!("{}?pass=wr0ng-pass", bare_url(&s));
    let unreachable = "redis://user:wr0ng-pass@127.0.0.1:1/0";
    let malformed = "redis://user:wr0ng-pass@host:notaport/";
    for (url, code) in [(wrong.as_str(), 69), (unreachable, 69), (malformed, 2)] {
        // One attempt: a server out of reach is otherwise waited for, and
        // said so (every line is checked for the password all the same).
        let err = fails(
            &[
                "--quiet",
                "--redis",
                url,
                "--timeout",
                "1s",
                "stats",
                "--wait",
                "0",
            ],
            &[],
            code,
        );
        assert!(!err.contains("wr0ng-pass"), "{err}");
        seen.push_str(&err);
    }
    assert!(seen.contains("***"), "the URL shows, redacted:\n{seen}");
    assert!(
        !seen.contains(ADMIN_PASSWORD),
        "the password was shown:\n{seen}"
    );
}

#[test]
fn a_user_named_without_a_password_is_never_logged_in_as_the_default_user() {
    // The default user here may do anything without a password.
    let s = RedisServer::start();
    let url = s.url();
    let _: String = s.query(&["ACL", "SETUSER", "np", "on", "nopass", "~*", "+@all"]);
    let err = fails(
        &["--redis", &url, "--redis-user", "nobody", "init"],
        &[],
        69,
    );
    assert!(err.contains("refused authentication"), "{err}");
    assert!(s.snapshot().is_empty(), "logged in as someone");
    ok(&["--redis", &url, "--redis-user", "np", "init"], &[]);
}

#[test]
fn a_percent_encoded_password_on_the_command_line_is_warned_of() {
    let s = RedisServer::start_with(super::common::ServerOptions {
        requirepass: Some("pw@with%signs".into()),
        ..Default::default()
    });
    let url = s.url();
    assert!(url.contains("%40"), "{url}");
    let out = ok(&["--redis", &url, "init"], &[]);
    assert!(
        out.stderr.contains("is on the command line"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("pw@with") && !out.stderr.contains("%40"),
        "{}",
        out.stderr
    );
}
