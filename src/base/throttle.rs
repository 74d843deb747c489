//! A warning that can come many times a second, written at most once per
//! interval with the count of those suppressed.
//!
//! A listener out of file descriptors fails every accept, ten times a
//! second with its pause: the same line each time, which says nothing new
//! after the first, fills the journal, and takes the room in the log queue
//! that the lines that matter (a claim lost) need. Suppressed lines are
//! counted and the count is told on the next line written, as the kernel's
//! "callbacks suppressed" does: nothing is hidden, it is only summed.

use std::fmt;
use std::time::{Duration, Instant};

/// One kind of line, written at most once per `every`.
pub struct Throttle {
    every: Duration,
    last: Option<Instant>,
    suppressed: u64,
}

/// How many lines were suppressed before this one; shown as a suffix of
/// the line (nothing when none were).
#[derive(Debug, PartialEq, Eq)]
pub struct Suppressed(u64);

impl fmt::Display for Suppressed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => Ok(()),
            n => write!(f, " (and {n} more since the last such line)"),
        }
    }
}

impl Throttle {
    pub const fn new(every: Duration) -> Throttle {
        Throttle {
            every,
            last: None,
            suppressed: 0,
        }
    }

    /// At `now`, whether to write the line: with the count suppressed
    /// since the last one written, or `None` to suppress this one.
    pub fn admit(&mut self, now: Instant) -> Option<Suppressed> {
        if self
            .last
            .is_some_and(|t| now.duration_since(t) < self.every)
        {
            self.suppressed += 1;
            return None;
        }
        self.last = Some(now);
        Some(Suppressed(std::mem::take(&mut self.suppressed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_interval_then_the_count_suppressed() {
        let start = Instant::now();
        let at = |ms| start + Duration::from_millis(ms);
        let mut t = Throttle::new(Duration::from_secs(10));
        assert_eq!(t.admit(at(0)), Some(Suppressed(0)));
        assert_eq!(t.admit(at(100)), None);
        assert_eq!(t.admit(at(9_999)), None);
        let next = t.admit(at(10_000)).unwrap();
        assert_eq!(next, Suppressed(2));
        assert_eq!(next.to_string(), " (and 2 more since the last such line)");
        assert_eq!(Suppressed(0).to_string(), "");
        assert_eq!(t.admit(at(30_000)), Some(Suppressed(0)));
    }
}
