//! `run` with a COMMAND that never sees the worker id in its arguments
//! warns once, as the command starts; a COMMAND that names
//! YARAUS_WORKER_ID, or an empty `--replacement`, says it is intended.

use crate::messages::common::RedisServer;
use crate::messages::common::pool::{NS, init_pool};
use crate::messages::yaraus;

const WARNING: &str = "COMMAND has no <> for the worker id, so it gets the id only in its \
                       environment, as YARAUS_WORKER_ID; if that is intended, pass \
                       --replacement '' (or name YARAUS_WORKER_ID in COMMAND)";

#[test]
fn a_command_without_the_placeholder_is_warned_of_once() {
    let s = RedisServer::start();
    init_pool(&s, 1, 4);
    let url = s.url_ns(NS);
    let run = |more: &[&str]| {
        let args = [
            &[
                "--redis",
                url.as_str(),
                "-q",
                "run",
                "--no-safeguards",
                "--delay",
                "0",
            ][..],
            more,
        ]
        .concat();
        let out = yaraus(&args);
        assert_eq!(out.code, Some(0), "yaraus {args:?}: {out:#?}");
        out.stderr
    };

    let stderr = run(&["--", "test", "-n", "x"]);
    let warned: Vec<&str> = stderr.lines().filter(|l| l.contains("<>")).collect();
    assert_eq!(warned.len(), 1, "{stderr}");
    assert!(warned[0].contains(WARNING), "{stderr}");

    let stderr = run(&["--replacement", "{id}", "--", "test", "-n", "x"]);
    assert!(
        stderr.contains("COMMAND has no {id} for the worker id"),
        "{stderr}"
    );

    for intended in [
        &["--", "test", "-n", "<>"][..],
        &["--", "sh", "-c", "test -n \"$YARAUS_WORKER_ID\""],
        &["--replacement", "", "--", "test", "-n", "x"],
        &["--replacement", "{id}", "--", "test", "-n", "{id}"],
    ] {
        let stderr = run(intended);
        assert!(
            !stderr.contains("for the worker id"),
            "{intended:?}: {stderr}"
        );
    }
}
