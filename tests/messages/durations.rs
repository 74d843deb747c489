//! Durations as they are typed: in messages (`1h30m`, not humantime's
//! "1h 30m"), and in what a nonsense `DURATION` is told (our forms, not
//! humantime's "expected number at 0").

use crate::messages::common::RedisServer;
use crate::messages::{TEMPFAIL, USAGE, one_line, yaraus};

#[test]
fn a_busy_lock_says_when_it_expires_as_a_duration_is_typed() {
    let s = RedisServer::start();
    s.cmd(&["SET", "job", "their-token", "PX", "5400000"]);
    let url = s.url();
    let args = ["--redis", &url, "lock", "-n", "job", "true"];
    let out = yaraus(&args);
    one_line(
        &args,
        &out,
        TEMPFAIL,
        &["expires in 1h30m unless its holder extends it;"],
    );
}

#[test]
fn a_nonsense_duration_is_told_how_to_write_one() {
    for (option, value) in [
        ("--ttl", "abc"),
        ("--ttl", "-5s"),
        ("--wait", "1e3"),
        ("--kill-after", "soon"),
    ] {
        let args = ["lock", option, value, "job", "true"];
        let out = yaraus(&args);
        let line = one_line(&args, &out, USAGE, &[value, option]);
        assert!(
            line.contains("write it like 0.5 or 2 (seconds), 1.5s, 500ms, 30m or 1h30m")
                || line.contains("a duration must be positive"),
            "{line}"
        );
        assert!(!line.contains("expected number"), "{line}");
        assert!(!line.contains("supported units"), "{line}");
    }
}
