//! The child's command line, environment and log.

use super::*;

#[test]
fn placeholder_is_replaced_in_every_argument_and_ids_are_in_the_env() {
    let (server, scratch) = fresh_pool(100, 200);
    let print = r#"printf '%s\n' "$0" "$@" > "$D/args"; env | grep '^YARAUS_' | sort > "$D/env""#;
    let (code, run) = run_to_end(
        &server.url_ns(NS),
        &scratch,
        FAST,
        &[
            "sh",
            "-c",
            print,
            "x<>",
            "a<>b",
            "<>",
            "<><>",
            "plain",
            "<",
            "-worker-id=<>",
        ],
    );
    assert_eq!(code, 0, "{}", run.log());
    let (client, id) = run.lease().unwrap();
    assert_eq!(id, 100);
    assert_eq!(
        scratch.lines("args"),
        [
            "x100",
            "a100b",
            "100",
            "100100",
            "plain",
            "<",
            "-worker-id=100"
        ]
    );
    assert_eq!(
        scratch.lines("env"),
        [
            format!("YARAUS_CLIENT_ID={client}"),
            "YARAUS_WORKER_ID=100".to_string()
        ]
    );
    assert_released(&server, 100, &client);
}

#[test]
fn a_custom_replacement_leaves_the_default_placeholder_alone() {
    let (server, scratch) = fresh_pool(7, 7);
    let (code, run) = run_to_end(
        &server.url_ns(NS),
        &scratch,
        &with(FAST, &["--replacement", "@ID@"]),
        &[
            "sh",
            "-c",
            r#"printf '%s\n' "$@" > "$D/args""#,
            "sh",
            "<>",
            "n=@ID@",
            "@ID@@ID@",
            "@ID",
        ],
    );
    assert_eq!(code, 0, "{}", run.log());
    assert_eq!(scratch.lines("args"), ["<>", "n=7", "77", "@ID"]);
}

#[test]
fn logs_one_timestamped_line_per_event_and_quiet_silences_them() {
    let (server, scratch) = fresh_pool(1, 1);
    let url = server.url_ns(NS);
    // Values that pass the safeguards: no warning.
    let opts = safe_timings("1s", "300ms", "500ms");
    // A command that takes the id (`test 1`): one without `<>` is warned of.
    let command = ["test", "<>"];
    let (code, run) = run_to_end(&url, &scratch, &opts, &command);
    assert_eq!(code, 0);
    let log = run.log();
    let events: Vec<&str> = log
        .lines()
        .map(|l| {
            // 2026-01-02T03:04:05.678Z message
            let (stamp, msg) = l.split_once(' ').unwrap_or_else(|| panic!("{l}"));
            assert!(
                stamp.len() == 24 && stamp.as_bytes()[10] == b'T' && stamp.ends_with('Z'),
                "no timestamp: {l}"
            );
            msg
        })
        .collect();
    let (client, id) = run.lease().unwrap();
    assert_eq!(
        events,
        [
            "getting new id...".to_string(),
            format!("client id: {client}, id: {id}"),
            "sleep 500ms for making sure that the previous holder has stopped".to_string(),
            "starting...".to_string(),
            format!("releasing id {id}..."),
        ]
    );

    let (code, run) = run_to_end(&url, &scratch, &with(&opts, &["--quiet"]), &command);
    assert_eq!(code, 0);
    assert_eq!(run.log(), "");
}

#[test]
fn unsafe_timings_are_raised_with_a_warning_unless_safeguards_are_off() {
    let (server, scratch) = fresh_pool(1, 1);
    let url = server.url_ns(NS);
    let opts = [
        "--interval",
        "2s",
        "--expire",
        "500ms",
        "--kill-after",
        "100ms",
        "--delay",
        "0",
    ];
    let (code, run) = run_to_end(&url, &scratch, &opts, &["true"]);
    assert_eq!(code, 0, "{}", run.log());
    let log = run.log();
    assert_eq!(log.matches("WARNING").count(), 3, "{log}");
    // expire 1s, interval 500ms, so delay ≥ 2 × 500ms + 100ms.
    assert!(log.contains("sleep 1.1s for making sure"), "{log}");

    let (code, run) = run_to_end(
        &url,
        &scratch,
        &with(&opts, &["--no-safeguards"]),
        &["true"],
    );
    assert_eq!(code, 0, "{}", run.log());
    let log = run.log();
    assert!(!log.contains("WARNING"), "{log}");
    assert!(log.contains("safeguards are off"), "{log}");
    assert!(!log.contains("sleep "), "--delay 0 kept: {log}");
}
