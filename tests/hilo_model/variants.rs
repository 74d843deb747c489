//! The departures from the protocol, and the faults beyond its assumption,
//! that break it: each exploration must find two windows over the same ids,
//! and prints a shortest run to them. A checker that found nothing here
//! would be checking nothing.
//!
//! * (b) no RAISE phase (the blog post's design: a shard learns the hwm
//!   only when it gets a window) and (c) creating on a shard as soon as it
//!   raised both need a restart: the shard that knew the hwm restarts, and
//!   no other shard knew it yet. Without a restart, both are safe here:
//!   the fences alone keep two runs from both creating on one shard.
//! * (e) two restarts of two shards, one after the other (never both
//!   down at once), lose the hwm: "at most one shard lost at a time" is
//!   not the assumption the protocol needs.
//! * (f) one shard restarted empty loses the hwm.
//!
//! (a) CREATE without its fence check and (d) FENCE taking any token turn
//! out safe, and RAISE without its fence check breaks with a restart:
//! `findings.rs`.

use crate::hilo_model::explorer::check;
use crate::hilo_model::findings::{bounded, safe};
use crate::hilo_model::model::{Event, Model, Rules};

/// Explores `m`, asserts a violation, and returns the run to it.
fn breaks(name: &str, m: &Model) -> Vec<Event> {
    let o = check(name, m);
    let (_, run) = o.violation.expect("a violation");
    run
}

fn restarts(run: &[Event]) -> usize {
    run.iter()
        .filter(|e| matches!(e, Event::Restart(_)))
        .count()
}

#[test]
fn b_without_the_raise_phase_a_restart_breaks_it() {
    let m = bounded(Rules::NoRaise, 2, 2, 1);
    let run = breaks("(b) no raise, 2 shards, 2 runs, 1 restart", &m);
    assert_eq!(restarts(&run), 1);
    safe(
        "(b) no raise, no restart",
        &bounded(Rules::NoRaise, 2, 2, 0),
        4,
    );
}

#[test]
fn c_creating_before_every_shard_raised_breaks_it() {
    let m = bounded(Rules::CreateAfterOwnRaise, 2, 2, 1);
    let run = breaks(
        "(c) create after its own raise, 2 shards, 2 runs, 1 restart",
        &m,
    );
    assert_eq!(restarts(&run), 1);
    let m = bounded(Rules::CreateAfterOwnRaise, 2, 2, 0);
    safe("(c) create after its own raise, no restart", &m, 4);
}

#[test]
fn e_two_restarts_of_two_shards_break_it() {
    let m = bounded(Rules::Protocol, 2, 2, 2);
    let run = breaks("(e) protocol, 2 shards, 2 runs, 2 restarts", &m);
    assert_eq!(restarts(&run), 2);
}

#[test]
fn f_one_shard_restarted_empty_breaks_it() {
    let m = bounded(Rules::Protocol, 1, 2, 1);
    let run = breaks("(f) protocol, 1 shard, 2 runs, 1 restart", &m);
    assert_eq!(restarts(&run), 1);
}
