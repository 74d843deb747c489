//! yaraus as a one-shot command: run to its end with a deadline, its exit
//! code and both outputs returned ([`run_yaraus`], [`run_ok`]), and the ACL
//! user a test creates from what `yaraus acl-rules` prints.

use std::time::Duration;

use super::server::RedisServer;
use super::spawn::yaraus;

/// What a finished yaraus said.
#[derive(Debug)]
pub struct Output {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// [`run_yaraus`], expecting exit 0 (the failure shows both outputs).
pub fn run_ok(args: &[&str], env: &[(&str, &str)], timeout: Duration) -> Output {
    let out = run_yaraus(args, env, timeout);
    assert_eq!(
        out.code,
        Some(0),
        "yaraus {args:?}\nstdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
    out
}

/// Prints the rules of `rules_args` (global options, `acl-rules`, its
/// arguments), creates that user on every server of `servers` with
/// `password` added, and returns the `ACL SETUSER` line.
pub fn create_acl_user(servers: &[&RedisServer], rules_args: &[&str], password: &str) -> String {
    let out = run_ok(rules_args, &[], Duration::from_secs(60));
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("ACL SETUSER "))
        .unwrap_or_else(|| panic!("no ACL SETUSER line in:\n{}", out.stdout))
        .to_string();
    let password = format!(">{password}");
    for s in servers {
        let mut args: Vec<&str> = line.split_whitespace().collect();
        args.push(&password);
        assert_eq!(s.query::<String>(&args), "OK");
    }
    line
}

/// Runs yaraus with `args` and `env` to completion; SIGKILLs it and panics
/// if it has not finished within `timeout`.
pub fn run_yaraus(args: &[&str], env: &[(&str, &str)], timeout: Duration) -> Output {
    let child = yaraus()
        .args(args)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn yaraus");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(out) => {
            let out = out.expect("wait for yaraus");
            Output {
                code: out.status.code(),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            }
        }
        Err(_) => {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            panic!("yaraus {args:?} did not finish within {timeout:?}");
        }
    }
}
