//! A mistyped option must not become the command after Redis was written:
//! before `--`, an unknown option (or a first command word starting with
//! `-`) is exit 2 with one line naming it, and Redis is unchanged; after
//! `--`, words starting with `-` go to the command as they are.

use super::*;

#[test]
fn an_unknown_option_before_the_command_is_a_usage_error_and_redis_is_unchanged() {
    let s = server_with_pool();
    let url = s.url_ns("t");
    let before = s.snapshot();
    // Options that make a wrongly accepted line fail fast rather than hang.
    let run = ["run", "--no-safeguards", "--delay", "0", "-w", "0"];
    let lock = ["lock", "typo", "-n"];
    let index = ["index", "typo", "-w", "0", "--interval", "1s"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            [&run[..], &["--dealy", "0", "--", "./x"]].concat(),
            "--dealy",
        ),
        ([&run[..], &["-x", "./x"]].concat(), "-x"),
        ([&run[..], &["--dealy", "0", "./x"]].concat(), "--dealy"),
        (
            [&lock[..], &["--wiat", "5s", "--", "./x"]].concat(),
            "--wiat",
        ),
        ([&lock[..], &["-S", "--", "./x"]].concat(), "-S"),
        ([&lock[..], &["--ttl", "5s", "-z", "./x"]].concat(), "-z"),
        ([&index[..], &["--bogus", "--", "./x"]].concat(), "--bogus"),
        ([&index[..], &["-k", "./x"]].concat(), "-k"),
    ];
    for (rest, name) in cases {
        let args = at(&url, &rest);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = yaraus(&argv);
        check_usage_error(&args, &out, &[name]);
        assert_eq!(s.snapshot(), before, "yaraus {args:?} changed Redis");
    }
}

#[test]
fn words_after_the_command_or_after_the_double_dash_go_to_the_command() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    let print = r#"printf '%s|' "$@""#;
    for rest in [
        vec![
            "lock", "x", "-n", "--", "sh", "-c", print, "sh", "-a", "--b",
        ],
        vec!["lock", "x", "-n", "sh", "-c", print, "sh", "-a", "--b"],
        vec![
            "lock", "x", "-n", "--", "sh", "-c", print, "sh", "--", "-a", "--b",
        ],
    ] {
        let args = at(&url, &rest);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = yaraus(&argv);
        assert_eq!(out.code, Some(0), "yaraus {args:?}: {out:#?}");
        let expected = if rest.contains(&"--") && rest.iter().filter(|a| **a == "--").count() == 2 {
            "--|-a|--b|"
        } else {
            "-a|--b|"
        };
        assert_eq!(out.stdout, expected, "yaraus {args:?}: {out:#?}");
    }
}
