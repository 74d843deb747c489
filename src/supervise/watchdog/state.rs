//! The watchdog's state, as three small enums rather than a row of flags:
//! where the command is in its life ([`Command`]), how far stopping its tree
//! has gone ([`Stopping`]) and whether yaraus is still there ([`Link`]).
//!
//! They are separate because they move independently: a command that exits
//! while its tree is being terminated leaves the terminating going on for
//! what it left behind; a lost claim (`Terminate`, `Kill`) may come whether
//! the command runs or has ended; yaraus may die at any point of either.
//! Each enum holds only what its phase has (the pid while the command runs,
//! the SIGKILL instant while terminating), so no field is read in a phase
//! where it means nothing.

use crate::base::BootInstant;
use nix::unistd::Pid;

/// Where the command is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Command {
    /// yaraus has not asked for one yet.
    NotStarted,
    /// Started and not reaped yet; `pid` also names its process group. The
    /// deadline is watched only in this phase.
    Running {
        pid: Pid,
        /// yaraus is stopping itself with the stopped command (job
        /// control): at the deadline it is SIGKILLed where it stands, never
        /// continued.
        suspended: bool,
    },
    /// Reaped, or never started (it failed to, or its time had come when
    /// the order arrived); whatever is left of its tree is waited for.
    /// `group` is its process group, if it ever ran.
    Ended { group: Option<Pid> },
    /// Ended, nothing of its tree is left, and yaraus was told: the next
    /// command may start.
    Gone { group: Option<Pid> },
}

impl Command {
    /// The command's process group, kept after it was reaped: the tree is
    /// signalled group-wise where a process is still in it.
    pub(super) fn group(self) -> Option<Pid> {
        match self {
            Command::NotStarted => None,
            Command::Running { pid, .. } => Some(pid),
            Command::Ended { group } | Command::Gone { group } => group,
        }
    }

    /// The command's pid while it runs (is not reaped).
    pub(super) fn running(self) -> Option<Pid> {
        match self {
            Command::Running { pid, .. } => Some(pid),
            _ => None,
        }
    }

    /// One command at a time: a new one only before the first or once the
    /// last one's whole tree is gone (`index` starts one per assignment).
    pub(super) fn may_start(self) -> bool {
        matches!(self, Command::NotStarted | Command::Gone { .. })
    }
}

/// How far stopping the command's tree has gone. It only moves forward
/// until the next command starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stopping {
    /// Nothing sent.
    No,
    /// SIGTERM (and SIGCONT) went out; SIGKILL follows at `kill_at`.
    Terminating { kill_at: BootInstant },
    /// SIGKILL went out; every descendant found from now on gets one too.
    Killing,
}

/// Whether yaraus is still there to give orders and read reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Link {
    /// yaraus gives orders.
    Open,
    /// yaraus said nothing is left to guard: exit once that is so.
    StoodDown,
    /// yaraus's end closed (it died, however): everything was SIGKILLed,
    /// nothing is reported any more, and the watchdog exits once nothing
    /// is left.
    Orphaned,
}

impl Link {
    /// Whether the watchdog may exit as soon as no child is left.
    pub(super) fn released(self) -> bool {
        self != Link::Open
    }
}

/// What one wait found ready.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ready {
    /// yaraus's socket: an order, its end closing, or room for reports.
    pub(super) link: bool,
    pub(super) sigchld: bool,
    pub(super) timer: bool,
}

impl Ready {
    /// What a failing poll (it cannot, short of a kernel bug) counts as: the
    /// deadline and the reaping still go on.
    pub(super) const POLL_FAILED: Ready = Ready {
        link: false,
        sigchld: true,
        timer: true,
    };
}
