//! Errors that reach the user, and the exit status each one maps to.
//!
//! Every failure that yaraus reports itself ends up as one [`Error`], printed as
//! one line on stderr by the binary. The variant decides the exit status, so the
//! table in the README and the man page is this `match` and nothing else:
//!
//! | status | meaning |
//! | --- | --- |
//! | 0..=123 | the child's own exit status |
//! | 2 | usage error: bad flag, malformed URL, nonsense duration, bad range |
//! | 69 | Redis unreachable, connection timed out, authentication or a command refused (ACL) |
//! | 75 | nothing available within `--wait` (no free id, lock busy) |
//! | 124 | the claim was lost while the child ran; the child was killed |
//! | 125 | yaraus failed for another reason (pool not initialised, key of the wrong type, …) |
//! | 126 | the command was found but could not be executed |
//! | 127 | the command was not found |
//! | 128+N | the child died of signal N, or yaraus itself was stopped by signal N before the child ran |

use std::fmt;

/// Usage error: the command line or a value in it makes no sense.
pub const EXIT_USAGE: i32 = 2;
/// Redis could not be reached, or refused us (EX_UNAVAILABLE).
pub const EXIT_UNAVAILABLE: i32 = 69;
/// Nothing was available in time: no free id, lock busy (EX_TEMPFAIL).
pub const EXIT_TEMPFAIL: i32 = 75;
/// The claim was lost while the child ran, and the child was killed.
pub const EXIT_LOST: i32 = 124;
/// yaraus failed for a reason of its own before or after the child ran.
pub const EXIT_SOFTWARE: i32 = 125;
/// The command exists but could not be executed.
pub const EXIT_CANNOT_EXECUTE: i32 = 126;
/// The command was not found.
pub const EXIT_NOT_FOUND: i32 = 127;

/// The one error type of the library. Clone: one failed dial is the answer
/// to every caller that awaited it (`store/link.rs`).
#[derive(Clone, Debug)]
pub enum Error {
    /// Bad input from the command line or environment.
    Usage(String),
    /// Redis is unreachable or timed out: retrying later may succeed.
    Unavailable(String),
    /// Redis refused us in a way waiting cannot cure (a wrong password, a
    /// database that does not exist): the caller must stop, not retry.
    Refused(String),
    /// Nothing was available in time.
    Exhausted(String),
    /// The claim was lost and the child was killed.
    Lost(String),
    /// The pool or a key is not in the state the command needs.
    State(String),
    /// The child could not be started: `(status, message)`, status 126 or 127.
    Exec(i32, String),
    /// yaraus was asked to stop by signal N before the child ran.
    Interrupted(i32),
    /// Anything else Redis said that we did not expect.
    Redis(String),
    /// The output could not be written (stdout closed) or encoded.
    Output(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The exit status the binary uses for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => EXIT_USAGE,
            Error::Unavailable(_) | Error::Refused(_) => EXIT_UNAVAILABLE,
            Error::Exhausted(_) => EXIT_TEMPFAIL,
            Error::Lost(_) => EXIT_LOST,
            Error::State(_) | Error::Redis(_) | Error::Output(_) => EXIT_SOFTWARE,
            Error::Exec(code, _) => *code,
            Error::Interrupted(sig) => 128 + sig,
        }
    }

    /// True when retrying later might succeed (the server was out of reach).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Unavailable(_))
    }

    /// True for an error that ends an attempt for good: the key or a node is
    /// not in the state yaraus needs, or a server refused us. Retrying, or
    /// counting on the other masters, would only hide it.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Error::State(_) | Error::Refused(_))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m)
            | Error::Unavailable(m)
            | Error::Refused(m)
            | Error::Exhausted(m)
            | Error::Lost(m)
            | Error::State(m)
            | Error::Exec(_, m)
            | Error::Redis(m)
            | Error::Output(m) => f.write_str(m),
            Error::Interrupted(sig) => write!(f, "interrupted by signal {sig}"),
        }
    }
}

impl std::error::Error for Error {}
