//! `--log-format text` when a message carries a name someone else chose: a
//! newline in it is written `\n` (as JSON writes it), so one event stays
//! one line and nothing can pass for a line of its own.

use super::*;
use common::lock::masters;

/// A sequence name whose newline, written raw, would start a line that
/// reads as another event.
const NAME: &str = "x\n2026-01-01T00:00:00.000Z forged event";

#[test]
fn a_newline_in_a_sequence_name_stays_inside_its_text_line() {
    let servers = masters(3, true);
    let urls: Vec<String> = servers.iter().map(|s| s.url()).collect();
    let mut args = vec!["--log-format", "text", "seq", "next", NAME];
    for url in &urls {
        args.extend(["--redis", url]);
    }
    let next = || common::run_ok(&args, &[], COMMAND_TIMEOUT);
    next();
    // A node without the counter: the next call quarantines it and warns,
    // naming the key, hence the name.
    servers[0].cmd(&["DEL", &format!("yaraus:seq:{NAME}")]);
    let out = next();
    let lines: Vec<&str> = out.stderr.lines().collect();
    let warnings: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("does not hold the counter"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    assert!(
        warnings[0].contains("yaraus:seq:x\\n2026-01-01T00:00:00.000Z forged event "),
        "{}",
        out.stderr
    );
    for line in lines {
        let (time, _) = line.split_once(' ').unwrap_or_default();
        assert!(humantime::parse_rfc3339(time).is_ok(), "{line:?}");
        assert!(
            !line.starts_with("2026-01-01T00:00:00.000Z"),
            "forged: {line:?}"
        );
    }
}
