//! The runs chosen beside the prefix: each ends with a transition whose
//! state a shorter run reaches without it, so that the prefix (one run to
//! each state) may never take it, though a script that got it wrong ends
//! elsewhere. They come from the model itself: the shortest runs its
//! explorer finds to each broken variant's violation and to each
//! documented cost, and a few runs in its own words for the queue's
//! bookkeeping.

use yaraus_models::explorer::{System, explore, replay};
use yaraus_models::wake_model::model::{Event, Model, Wake};

/// The chosen runs of `m`, each cut where it stops being a run of `m`.
pub fn chosen(m: &Model) -> Vec<Vec<Event>> {
    let mut runs: Vec<Vec<Event>> = variants(m)
        .iter()
        .filter_map(|v| explore(v).violation)
        .map(|(_, run)| possible(m, &run))
        .collect();
    runs.extend(bookkeeping(m));
    runs
}

/// Waking one, the broken wake-ups (a dead head not skipped; the shared
/// channel as well), which differ from the protocol at one release; and the
/// costs the model documents (a woken waiter dies, a stopped head, an
/// expired lease), each where `m` allows the fault.
fn variants(m: &Model) -> Vec<Model> {
    let protocol = Model {
        woken_may_die: false,
        stops: false,
        expiry: false,
        polls: false,
        drops: false,
        unwoken: true,
        ..*m
    };
    let mut variants = Vec::new();
    if m.wake == Wake::One {
        variants.extend([Wake::HeadOnly, Wake::OneThenAll].map(|wake| Model { wake, ..protocol }));
    }
    for (allowed, cost) in [
        (
            m.woken_may_die,
            Model {
                woken_may_die: true,
                ..protocol
            },
        ),
        (
            m.stops,
            Model {
                stops: true,
                ..protocol
            },
        ),
        (
            m.expiry,
            Model {
                expiry: true,
                ..protocol
            },
        ),
    ] {
        if allowed {
            variants.push(cost);
        }
    }
    variants
}

/// The longest start of `run` that `m` can take.
fn possible(m: &Model, run: &[Event]) -> Vec<Event> {
    let mut s = m.initial();
    let mut taken = Vec::new();
    for &e in run {
        match m.apply(&s, e, None) {
            Some(next) => {
                s = next;
                taken.push(e);
            }
            None => break,
        }
    }
    taken
}

/// The queue's bookkeeping where a place outlives its waiter's listening,
/// with every place held and waiter `c` (the first without one) queued:
/// a poll after an expiry takes a place and leaves the queue; a waiter
/// whose subscription closed subscribes again with the same place and is
/// woken on it; a waiter queued again after the queue vanished is back at
/// its own score. Waking all, nobody queues.
fn bookkeeping(m: &Model) -> Vec<Vec<Event>> {
    let c = usize::from(m.cap);
    if m.wake != Wake::One || c >= m.n {
        return Vec::new();
    }
    let mut queued: Vec<String> = (0..c)
        .map(|w| format!("w{w}'s first attempt takes"))
        .collect();
    queued.extend([
        format!("w{c}'s first attempt is refused"),
        format!("w{c} subscribes"),
        format!("w{c}'s second attempt is refused and queued"),
    ]);
    let then = |more: &[String]| -> Vec<String> { queued.iter().chain(more).cloned().collect() };
    let mut runs = Vec::new();
    if m.expiry && m.polls {
        runs.push(then(&[
            "w0's lease expires".into(),
            format!("w{c} polls: its attempt takes"),
            format!("w{c} releases"),
        ]));
    }
    if m.drops {
        runs.push(then(&[
            format!("w{c}'s subscription closes"),
            format!("w{c}'s first attempt is refused"),
            format!("w{c} subscribes"),
            format!("w0 releases, pops w{c}: woken alone"),
            format!("w{c}'s second attempt takes"),
        ]));
    }
    if m.vanish && m.polls {
        runs.push(then(&[
            "the queue key vanishes".into(),
            format!("w{c} polls: its attempt is refused and queued"),
            format!("w0 releases, pops w{c}: woken alone"),
        ]));
    }
    runs.iter()
        .map(|words| {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            match replay(m, &words) {
                Ok((run, _)) => run,
                Err(stuck) => panic!(
                    "{}: no step fits {:?}; possible: {:?}",
                    m.rules(),
                    words[stuck.step - 1],
                    stuck.possible
                ),
            }
        })
        .collect()
}
