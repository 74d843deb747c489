//! A second pass over every reachable state and step of a model, for what
//! a per-state check cannot say: that every run ends (the progress
//! measure), and how many messages one release sends.

use crate::wake_model::explorer::{System, all_states};
use crate::wake_model::model::{Event, Model, rank};

/// What the pass found.
#[derive(Debug, Default)]
pub struct Survey {
    pub states: usize,
    /// States where no protocol step is possible: where runs end.
    pub quiescent: usize,
    /// States with a free place and a waiting waiter (where
    /// `Violation::Unwoken` has something to check).
    pub contested: usize,
    /// The most messages one release sent.
    pub most_per_release: u32,
    /// The most messages one release sent when a listening waiter's place
    /// was in the queue.
    pub most_per_release_queued: u32,
}

/// Surveys every reachable state of `m`; fails, naming the step, when a
/// protocol step does not lower [`rank`], or a poll neither lowers it nor
/// changes only the queue.
pub fn survey(m: &Model) -> Result<Survey, String> {
    let states = all_states(m);
    let mut found = Survey {
        states: states.len(),
        ..Survey::default()
    };
    let mut events = Vec::new();
    for s in &states {
        if m.quiescent(s) {
            found.quiescent += 1;
        }
        if m.free(s) > 0 && m.waiting(s) > 0 {
            found.contested += 1;
        }
        m.candidates(s, &mut events);
        for &e in &events {
            let Some(next) = m.apply(s, e, None) else {
                continue;
            };
            let lowers = rank(&next) < rank(s);
            let progress = match e {
                Event::Step(_) => lowers,
                Event::Poll(_) => lowers || next.waiters == s.waiters,
                // Faults: finitely many in a run, by assumption.
                _ => true,
            };
            if !progress {
                return Err(format!(
                    "{e:?} from {s:?} to {next:?} does not lower the rank"
                ));
            }
            let Event::Step(w) = e else {
                continue;
            };
            if m.holds(s, w) {
                let sent = rank(&next).1 - rank(s).1;
                found.most_per_release = found.most_per_release.max(sent);
                if m.listener_queued(s) {
                    found.most_per_release_queued = found.most_per_release_queued.max(sent);
                }
            }
        }
    }
    Ok(found)
}
