//! A signal that was ignored when yaraus started stays ignored, for yaraus
//! and for its command, as under flock(1) or a plain `exec`: `nohup` ignores
//! SIGHUP, and a background job of a non-interactive shell (`cmd &` in a
//! script) SIGINT and SIGQUIT. A hang-up must not end a `nohup yaraus lock`
//! that waits, nor reach the command through yaraus.
//!
//! The waiter here is started the way those shells start it: `sh -c 'trap ""
//! HUP INT; exec yaraus …'` (a disposition of "ignore" survives exec).

use crate::common;

use common::RedisServer;
use common::process::{Run, lock_cmd};
use common::scratch::Scratch;
use nix::sys::signal::Signal;
use std::process::Command;

/// `cmd` (built by [`lock_cmd`]), started with SIGHUP and SIGINT ignored,
/// as `nohup cmd &` in a script starts it.
fn with_hup_and_int_ignored(cmd: &Command, scratch: &Scratch) -> Command {
    let mut sh = common::command("sh");
    sh.arg("-c")
        .arg(r#"trap '' HUP INT; exec "$@""#)
        .arg("sh")
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .current_dir(scratch.dir())
        .stdin(std::process::Stdio::null());
    for (name, value) in cmd.get_envs() {
        match value {
            Some(v) => sh.env(name, v),
            None => sh.env_remove(name),
        };
    }
    sh
}

/// Bit of `sig` in a /proc signal mask.
fn bit(sig: Signal) -> u64 {
    1 << (sig as u64 - 1)
}

/// The mask named `field` (`SigIgn`, `SigCgt`) in a /proc status text.
fn mask(status: &str, field: &str) -> u64 {
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in {status}"));
    u64::from_str_radix(line.trim(), 16).unwrap()
}

#[test]
fn signals_ignored_at_start_stay_ignored_for_yaraus_and_its_command() {
    let server = RedisServer::start();
    let url = server.url();
    let scratch = Scratch::new();
    let held = r#"touch "$D/held"; while [ ! -e "$D/go" ]; do sleep 0.01; done"#;
    let mut holder = Run::spawn(
        lock_cmd(
            &url,
            &scratch,
            "inherited",
            &["--ttl", "30s"],
            &["sh", "-c", held],
        ),
        &scratch,
    );
    common::wait_until("the holder's command to start", common::EVENT, || {
        scratch.exists("held")
    });

    // grep is the command itself: it reports the dispositions it was given.
    let waiter_cmd = lock_cmd(
        &url,
        &scratch,
        "inherited",
        &["-w", "60s"],
        &["grep", "^SigIgn:", "/proc/self/status"],
    );
    let mut waiter = Run::spawn(with_hup_and_int_ignored(&waiter_cmd, &scratch), &scratch);
    waiter.wait_log("waiting for");

    // yaraus has installed its handlers by now: it catches the rest of what
    // it forwards, and left these two ignored.
    let status = std::fs::read_to_string(format!("/proc/{}/status", waiter.pid())).unwrap();
    let (ignored, caught) = (mask(&status, "SigIgn"), mask(&status, "SigCgt"));
    for sig in [Signal::SIGHUP, Signal::SIGINT] {
        assert_ne!(ignored & bit(sig), 0, "yaraus no longer ignores {sig}");
        assert_eq!(
            caught & bit(sig),
            0,
            "yaraus catches {sig}, ignored at its start"
        );
    }
    assert_ne!(
        caught & bit(Signal::SIGTERM),
        0,
        "yaraus does not catch SIGTERM"
    );

    // A hang-up and a Ctrl-C meant for others do not end the wait.
    waiter.signal(Signal::SIGHUP);
    waiter.signal(Signal::SIGINT);
    scratch.touch("go");
    assert_eq!(holder.wait(), 0, "{}", holder.log());
    assert_eq!(waiter.wait(), 0, "{}", waiter.log());

    let command_ignored = mask(&waiter.output(), "SigIgn");
    for sig in [Signal::SIGHUP, Signal::SIGINT] {
        assert_ne!(
            command_ignored & bit(sig),
            0,
            "the command does not inherit {sig} ignored"
        );
    }
    assert_eq!(
        command_ignored & bit(Signal::SIGTERM),
        0,
        "the command inherits SIGTERM ignored"
    );
}
