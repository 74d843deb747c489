//! What a survey finds wrong, and the exit status it adds up to.

use crate::error::{EXIT_TEMPFAIL, EXIT_UNAVAILABLE};
use serde::Serialize;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Available, but one more loss away from trouble; heals by itself, or
    /// with an action named in the finding that needs no decision.
    Degraded,
    /// Lost on a majority, or a majority out of reach: a person decides.
    Lost,
}

impl Level {
    /// The exit status of a survey whose worst finding is this.
    pub fn exit_code(self) -> i32 {
        match self {
            Level::Degraded => EXIT_TEMPFAIL,
            Level::Lost => EXIT_UNAVAILABLE,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Level::Degraded => "degraded",
            Level::Lost => "lost",
        }
    }
}

/// One thing that is not as it should be, said so that a person knows what
/// happens next or what to decide.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub level: Level,
    /// The thing: a node's URL, a key.
    pub subject: String,
    /// One word for what is wrong, stable across looks (`missing`,
    /// `quarantined`, `out_of_reach`, …): for scripts, and for a wait that
    /// says a thing once.
    pub state: &'static str,
    /// What is wrong, and what to do or what happens by itself.
    pub text: String,
}

impl Finding {
    pub fn degraded(
        subject: impl Into<String>,
        state: &'static str,
        text: impl Into<String>,
    ) -> Finding {
        Finding {
            level: Level::Degraded,
            subject: subject.into(),
            state,
            text: text.into(),
        }
    }

    pub fn lost(
        subject: impl Into<String>,
        state: &'static str,
        text: impl Into<String>,
    ) -> Finding {
        Finding {
            level: Level::Lost,
            subject: subject.into(),
            state,
            text: text.into(),
        }
    }
}

/// The exit status of a list of findings: 0 when there is none.
pub fn exit_code(findings: &[Finding]) -> i32 {
    findings
        .iter()
        .map(|f| f.level)
        .max()
        .map_or(0, Level::exit_code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_finding_decides_the_status() {
        assert_eq!(exit_code(&[]), 0);
        let d = Finding::degraded("a", "missing", "x");
        let l = Finding::lost("b", "lost", "y");
        assert_eq!(exit_code(std::slice::from_ref(&d)), 75);
        assert_eq!(exit_code(&[d, l]), 69);
    }
}
