//! The one way a test starts a process: [`command`]. yaraus, redis-server,
//! the shells, script(1), redis-cli and every other helper come from it (a
//! `harness_selftest` test fails on a `Command::new` anywhere else in
//! `tests/`), so that what a child inherits from whoever started
//! `cargo test` is decided here, once.
//!
//! Why: an ignored signal stays ignored across fork and exec, and so does a
//! blocked one. `nohup` ignores SIGHUP; a background job of a
//! non-interactive shell ignores SIGINT and SIGQUIT. Inherited by yaraus
//! and its child, those choices of the caller's shell would decide the
//! outcome of the tests about signals, which must only depend on yaraus.
//! So between fork and exec every child gets the default disposition of
//! every signal and an empty signal mask, as if started from an
//! interactive shell.
//!
//! [`spawn_tied`] adds, for the servers, a SIGKILL when the test process
//! dies, so that a killed test run leaves no redis-server behind.

use std::ffi::OsStr;
use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::thread;

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, SigmaskHow, Signal, sigaction};

/// `Command::new(program)` whose child starts with every signal at its
/// default disposition and none blocked, whatever this test process
/// inherited.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(program);
    // SAFETY: the closure runs in the child between fork and exec. It
    // allocates nothing and takes no lock: it only calls sigaction(2) and
    // sigprocmask(2), which are async-signal-safe.
    unsafe {
        cmd.pre_exec(default_signals);
    }
    cmd
}

/// Sets every signal that can be caught (all of 1..=31 but SIGKILL and
/// SIGSTOP, whose disposition cannot change) to SIG_DFL, and empties the
/// signal mask. Runs between fork and exec: see [`command`].
fn default_signals() -> io::Result<()> {
    let default = SigAction::new(SigHandler::SigDfl, SaFlags::empty(), SigSet::empty());
    for sig in Signal::iterator() {
        if matches!(sig, Signal::SIGKILL | Signal::SIGSTOP) {
            continue;
        }
        // SAFETY: SIG_DFL installs no handler, so no Rust code can run
        // in a signal context because of it.
        unsafe { sigaction(sig, &default) }?;
    }
    nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
    Ok(())
}

/// Removes every `YARAUS_*` variable of the caller's environment from
/// `cmd`, so that a developer's settings do not leak into the tests.
pub fn without_yaraus_env(cmd: &mut Command) -> &mut Command {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("YARAUS_") {
            cmd.env_remove(name);
        }
    }
    cmd
}

/// The `yaraus` binary under test, from [`command`], without the caller's
/// `YARAUS_*` variables.
pub fn yaraus() -> Command {
    let mut cmd = command(env!("CARGO_BIN_EXE_yaraus"));
    without_yaraus_env(&mut cmd);
    cmd
}

/// Spawns `cmd` so that the child is SIGKILLed if this test process dies
/// (PR_SET_PDEATHSIG), leaving no stray redis-server behind a killed test
/// run. Linux ties that signal to the forking *thread*, so every spawn
/// happens on one thread that lives as long as the process.
pub(super) fn spawn_tied(mut cmd: Command) -> io::Result<Child> {
    type Job = (Command, mpsc::Sender<io::Result<Child>>);
    static SPAWNER: OnceLock<mpsc::Sender<Job>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        thread::Builder::new()
            .name("harness-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("start the spawner thread");
        tx
    });
    #[cfg(target_os = "linux")]
    {
        // SAFETY: the closure runs between fork and exec and only makes one
        // async-signal-safe system call (prctl).
        unsafe {
            cmd.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(io::Error::from)
            });
        }
    }
    let (reply_tx, reply_rx) = mpsc::channel();
    spawner
        .send((cmd, reply_tx))
        .expect("spawner thread is gone");
    reply_rx.recv().expect("spawner thread is gone")
}
