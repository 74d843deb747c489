//! The terminal of yaraus's session, handed to the command's group while
//! yaraus is in the foreground and taken back when it stops or ends.
//!
//! A job-control shell gives the terminal to yaraus's process group; the
//! command runs in a group of its own, so yaraus passes the terminal on,
//! which lets an interactive command read it and makes Ctrl-C and Ctrl-Z
//! reach the command exactly once. yaraus started in the background
//! (`yaraus run … &`) has the terminal only once `fg` gives it, and passes it
//! on then.

use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use nix::unistd::Pid;

/// The controlling terminal of yaraus's session, on stdin.
pub struct Terminal {
    ours: Pid,
}

impl Terminal {
    /// Some when stdin is the controlling terminal of our session, whether
    /// or not we are its foreground group now.
    pub fn of_session() -> Option<Terminal> {
        let stdin = std::io::stdin();
        if !nix::unistd::isatty(&stdin).unwrap_or(false) {
            return None;
        }
        let session = nix::unistd::getsid(None).ok()?;
        match nix::sys::termios::tcgetsid(&stdin) {
            Ok(sid) if sid == session => Some(Terminal {
                ours: nix::unistd::getpgrp(),
            }),
            _ => None,
        }
    }

    /// Whether our group is the terminal's foreground group now.
    pub fn is_foreground(&self) -> bool {
        self.foreground() == Some(self.ours)
    }

    fn foreground(&self) -> Option<Pid> {
        nix::unistd::tcgetpgrp(std::io::stdin()).ok()
    }

    /// Makes `group` the foreground group.
    pub fn give_to(&self, group: Pid) {
        // From outside the foreground group, tcsetpgrp stops the caller
        // with SIGTTOU unless the calling thread blocks (or ignores) it.
        let mut ttou = SigSet::empty();
        ttou.add(Signal::SIGTTOU);
        let mut old = SigSet::empty();
        let blocked = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&ttou), Some(&mut old));
        let _ = nix::unistd::tcsetpgrp(std::io::stdin(), group);
        if blocked.is_ok() {
            let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
        }
    }

    /// Takes the terminal back from `group`, if it has it (not if the user
    /// has put us in the background since, or given it to another job).
    pub fn take_back_from(&self, group: Pid) {
        if self.foreground() == Some(group) {
            self.give_to(self.ours);
        }
    }
}
