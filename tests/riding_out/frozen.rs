//! A SIGSTOPped server: it accepts connections (the kernel does) and
//! answers nothing. `run -w 3s`, `lock -w 3s` and `seq next --wait 3s` end
//! with 69 once their bound has passed, however their requests were timed
//! (each attempt is cut off at the bound). The test checks that they
//! ended, and how: never how fast (the overshoot is measured by hand, see
//! the note).

use super::*;

/// `yaraus ARGS` against the frozen `server`: its exit status and stderr.
fn against_frozen(server: &RedisServer, args: &[&str]) -> (Option<i32>, String) {
    let url = server.url_ns(NS);
    let mut all = vec!["--redis", &url];
    all.extend(args);
    let out = run_yaraus(&all, &[], ENDS_WITHIN);
    (out.code, out.stderr)
}

#[test]
fn commands_against_a_frozen_server_end_at_their_bound_with_69() {
    let server = durable_server();
    common::pool::init_pool(&server, 1, 1);
    server.sigstop();
    let cases: [&[&str]; 3] = [
        &["run", "-w", "3s", "--delay", "0", "--", "true"],
        &["lock", "-w", "3s", "nightly", "--", "true"],
        &["seq", "next", "orders", "--wait", "3s", "--allow-volatile"],
    ];
    for args in cases {
        let (code, stderr) = against_frozen(&server, args);
        assert_eq!(code, Some(69), "{args:?}: {stderr}");
        let last = stderr.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("yaraus: ") && last.ends_with("gave up after waiting 3s"),
            "{args:?}: {stderr}"
        );
    }
    server.sigcont();
}
