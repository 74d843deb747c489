//! `--log-format text` when a message carries a name someone else chose: a
//! newline in it is written `\n` (as JSON writes it), so one event stays
//! one line and nothing can pass for a line of its own. (A sequence name
//! with a control character is refused at the door; a lock name is any
//! Redis key, as in redis-py, so it is what reaches the log raw.)

use super::*;

/// A lock name whose newline, written raw, would start a line that reads
/// as another event.
const NAME: &str = "x\n2026-01-01T00:00:00.000Z forged event";

#[test]
fn a_newline_in_a_lock_name_stays_inside_its_text_line() {
    let server = RedisServer::start();
    let url = server.url();
    let args = [
        "--log-format",
        "text",
        "-v",
        "--redis",
        &url,
        "lock",
        NAME,
        "--",
        "true",
    ];
    let out = common::run_ok(&args, &[], COMMAND_TIMEOUT);
    let lines: Vec<&str> = out.stderr.lines().collect();
    let naming: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("x\\n2026-01-01T00:00:00.000Z forged event"))
        .collect();
    assert!(!naming.is_empty(), "{}", out.stderr);
    for line in lines {
        let (time, _) = line.split_once(' ').unwrap_or_default();
        assert!(humantime::parse_rfc3339(time).is_ok(), "{line:?}");
        assert!(
            !line.starts_with("2026-01-01T00:00:00.000Z"),
            "forged: {line:?}"
        );
    }
}
