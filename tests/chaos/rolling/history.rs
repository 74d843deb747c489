//! Histories of calls and their checks: every call of a client loop is
//! recorded (when it began and ended, on this process's monotonic clock,
//! and what it got), then checked for a value handed out twice and, where
//! the values are ordered, for real-time order.

use std::collections::HashSet;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One call: when it began and ended, and what it got (None: it failed).
#[derive(Clone, Debug)]
pub struct Call {
    pub start: Instant,
    pub end: Instant,
    pub got: Option<(u64, u64)>,
}

pub type History = Arc<Mutex<Vec<Call>>>;

/// Runs yaraus once; `Some(parsed stdout)` on exit 0.
pub fn call(args: &[String], parse: impl Fn(&str) -> Option<(u64, u64)>) -> Option<(u64, u64)> {
    let out = crate::chaos::common::yaraus()
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("run yaraus");
    out.status
        .success()
        .then(|| parse(&String::from_utf8_lossy(&out.stdout)))
        .flatten()
}

/// A client loop recording into `history` until `stop`.
pub fn client(
    stop: &Arc<AtomicBool>,
    history: &History,
    mut once: impl FnMut() -> Option<(u64, u64)> + Send + 'static,
) -> std::thread::JoinHandle<()> {
    let (stop, history) = (Arc::clone(stop), Arc::clone(history));
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let start = Instant::now();
            let got = once();
            let end = Instant::now();
            history.lock().unwrap().push(Call { start, end, got });
            if got.is_none() {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    })
}

/// One number: a range of one.
pub fn single(text: &str) -> Option<(u64, u64)> {
    let v = text.trim().parse().ok()?;
    Some((v, v))
}

/// `FIRST LAST`: a range.
pub fn pair(text: &str) -> Option<(u64, u64)> {
    let mut words = text.split_whitespace().map(|w| w.parse().ok());
    Some((words.next()??, words.next()??))
}

/// Asserts no value twice across `calls` (each a range) and, with
/// `ordered`, that a call that ended before another began got less.
/// Returns how many calls were answered.
pub fn check(what: &str, calls: &[Call], ordered: bool) -> usize {
    let got: Vec<&Call> = calls.iter().filter(|c| c.got.is_some()).collect();
    let mut seen = HashSet::new();
    for c in &got {
        let (first, last) = c.got.unwrap();
        for v in first..=last {
            assert!(seen.insert(v), "{what}: {v} handed out twice");
        }
    }
    if ordered {
        let mut by_end = got.clone();
        by_end.sort_by_key(|c| c.end);
        let mut by_start = got.clone();
        by_start.sort_by_key(|c| c.start);
        // For each call, the largest value of the calls that ended before it began.
        let (mut i, mut highest) = (0, None::<u64>);
        for c in by_start {
            while i < by_end.len() && by_end[i].end < c.start {
                highest = highest.max(Some(by_end[i].got.unwrap().1));
                i += 1;
            }
            if let Some(h) = highest {
                assert!(
                    c.got.unwrap().0 > h,
                    "{what}: {} began after {h} was handed out, but is not above it",
                    c.got.unwrap().0
                );
            }
        }
    }
    got.len()
}
