//! Commands on a pseudo-terminal, driven as a user would type, with
//! script(1) of util-linux.

use std::process::{ChildStdin, Command, Stdio};

use super::process::Run;
use super::scratch::Scratch;

/// Whether script(1) of util-linux can give a command a pseudo-terminal
/// here (it is missing from some systems, and some sandboxes have no ptys).
pub fn pty_available() -> bool {
    Command::new("script")
        .args(["-q", "-e", "-c", "test -t 0", "/dev/null"])
        .env("SHELL", "/bin/sh")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether bash is there too (for the job-control tests).
pub fn bash_available() -> bool {
    Command::new("bash")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// `args` as one shell command line.
pub fn shell_words<S: AsRef<str>>(args: &[S]) -> String {
    args.iter()
        .map(|a| format!("'{}'", a.as_ref().replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `command_line` on a new pseudo-terminal, in its foreground, with
/// script(1); what is written to the returned pipe is what a user types.
/// script -e exits with the command's status.
pub fn on_a_pty(scratch: &Scratch, command_line: &str) -> (Run, ChildStdin) {
    let mut cmd = Command::new("script");
    cmd.args(["-q", "-e", "-c", command_line, "/dev/null"])
        .env("SHELL", "/bin/sh")
        .env("D", scratch.dir())
        .current_dir(scratch.dir())
        .stdin(Stdio::piped());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("YARAUS_") {
            cmd.env_remove(name);
        }
    }
    let mut run = Run::spawn(cmd, scratch);
    let tty = run.take_stdin().expect("stdin pipe");
    (run, tty)
}
