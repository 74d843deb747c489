//! Commands on a pseudo-terminal, driven as a user would type, with
//! script(1) of util-linux.
//!
//! A terminal test on a machine without script(1), bash or a pty fails
//! ([`require_pty`], [`require_bash`]): it cannot stand in for the terminal
//! it did not have.

use std::io::Write;
use std::process::{ChildStdin, Stdio};

use super::process::Run;
use super::scratch::Scratch;
use super::spawn::{command, without_yaraus_env};
use super::tools::require_test_tool;

/// Fails the test unless script(1) of util-linux is installed and can give
/// a command a pseudo-terminal here (some sandboxes have no ptys).
pub fn require_pty() {
    require_test_tool(
        "script",
        "bsdutils",
        "script(1) of util-linux gives the terminal tests a pseudo-terminal",
    );
    let status = command("script")
        .args(["-q", "-e", "-c", "test -t 0", "/dev/null"])
        .env("SHELL", "/bin/sh")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    assert!(
        status.as_ref().is_ok_and(|s| s.success()),
        "script(1) could not give a command a pseudo-terminal ({status:?}): the terminal \
         tests need one (is /dev/pts mounted, /dev/ptmx there?)"
    );
}

/// Fails the test unless bash is there (the job-control tests drive an
/// interactive bash).
pub fn require_bash() {
    require_test_tool(
        "bash",
        "bash",
        "the job-control tests type into an interactive bash",
    );
}

/// The body of a child that writes its pid to `$D/pid`, reads a line from
/// the terminal into `$D/line` (`got: LINE`), and exits 6.
pub const READS_A_LINE: &str = r#"echo $$ > "$D/pid"
read line
echo "got: $line" > "$D/line"
exit 6
"#;

/// `args` as one shell command line.
pub fn shell_words<S: AsRef<str>>(args: &[S]) -> String {
    args.iter()
        .map(|a| format!("'{}'", a.as_ref().replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The shell command line that runs the yaraus under test: `yaraus run
/// --redis URL OPTS -- COMMAND`.
pub fn yaraus_run_line(url: &str, opts: &[&str], command: &[&str]) -> String {
    let args: Vec<&str> = [env!("CARGO_BIN_EXE_yaraus"), "run", "--redis", url]
        .into_iter()
        .chain(opts.iter().copied())
        .chain(["--"])
        .chain(command.iter().copied())
        .collect();
    shell_words(&args)
}

/// What a user types into the terminal of [`on_a_pty`].
pub struct Keyboard(ChildStdin);

impl Keyboard {
    /// Types `text` (`b"\x03"` is Ctrl-C, `b"\x1a"` Ctrl-Z).
    pub fn type_in(&mut self, text: impl AsRef<[u8]>) {
        self.0
            .write_all(text.as_ref())
            .expect("type into the terminal");
        self.0.flush().expect("type into the terminal");
    }
}

/// Runs `command_line` on a new pseudo-terminal, in its foreground, with
/// script(1); what is typed on the returned keyboard is what a user types.
/// script -e exits with the command's status.
pub fn on_a_pty(scratch: &Scratch, command_line: &str) -> (Run, Keyboard) {
    require_pty();
    let mut cmd = command("script");
    cmd.args(["-q", "-e", "-c", command_line, "/dev/null"])
        .env("SHELL", "/bin/sh")
        .env("D", scratch.dir())
        .current_dir(scratch.dir())
        .stdin(Stdio::piped());
    without_yaraus_env(&mut cmd);
    let mut run = Run::spawn(cmd, scratch);
    let tty = run.take_stdin().expect("stdin pipe");
    (run, Keyboard(tty))
}
