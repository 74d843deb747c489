//! The shared log of the children, read back as *lives*, and the checker
//! that fails on two lives of the same worker id or lock that overlap.
//!
//! Every child appends one line per event to one file opened with
//! `O_APPEND`, one `write(2)` per line, so lines never interleave:
//!
//! ```text
//! start RES NS PID CLIENT     the child holds RES from NS on
//! beat  RES NS PID CLIENT     still running (every few ms)
//! stop  RES NS PID CLIENT     it stops now (SIGTERM, or the end of the run)
//! ```
//!
//! `RES` is `id:N` (a `yaraus run` child, N its `$YARAUS_WORKER_ID`) or
//! `lock:NAME`; `NS` is `CLOCK_MONOTONIC` in nanoseconds, one clock for every
//! process of the machine and for the test itself; `CLIENT` is the index of
//! the client loop that started the yaraus that started the child.
//!
//! A life runs from its `start` to its `stop`, or, for a child that never
//! wrote one (SIGKILLed), to its last `beat`. The children do nothing but
//! write these lines, so the lines *are* everything a child did while it
//! believed it held RES: a SIGKILLed child's real life went on for at most
//! one beat period after its last line, during which it did nothing anyone
//! could observe. That is the sense in which a life under-approximates the
//! process's existence by at most one beat period, and why the checker needs
//! no margin.
//!
//! Two lives overlap when each starts strictly before the other ends; lives
//! that touch (one's end is the other's start) do not.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// One child's hold of one resource, as its lines tell it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Life {
    pub res: String,
    pub pid: i32,
    pub client: usize,
    /// Monotonic ns of its `start` line.
    pub start: u64,
    /// Monotonic ns of its `stop` line, or of its last line so far.
    pub end: u64,
    /// Whether it wrote `stop` (false: killed, or still running).
    pub stopped: bool,
}

impl fmt::Display for Life {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} held by pid {} (client {}) from {} to {} ns ({:.1} ms, {})",
            self.res,
            self.pid,
            self.client,
            self.start,
            self.end,
            (self.end - self.start) as f64 / 1e6,
            if self.stopped {
                "wrote stop"
            } else {
                "no stop line: last beat"
            }
        )
    }
}

/// Two lives of one resource that overlap.
#[derive(Clone, Debug)]
pub struct Overlap {
    pub first: Life,
    pub second: Life,
}

impl fmt::Display for Overlap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let by = self.first.end.min(self.second.end) - self.second.start;
        write!(
            f,
            "OVERLAP of {:.1} ms on {}:\n  {}\n  {}",
            by as f64 / 1e6,
            self.first.res,
            self.first,
            self.second
        )
    }
}

/// Lives built line by line (the whole log at the end, or a growing log).
#[derive(Default)]
pub struct Lives {
    open: HashMap<i32, Life>,
    closed: Vec<Life>,
    lines: usize,
}

impl Lives {
    /// Every life of a complete log text. Panics on a malformed line.
    pub fn parse(text: &str) -> Vec<Life> {
        let mut lives = Lives::default();
        for line in text.lines() {
            lives.feed(line);
        }
        lives.all()
    }

    /// Takes one line. Panics on a line that is not of the format (a
    /// checker that guessed would not be one).
    pub fn feed(&mut self, line: &str) {
        self.lines += 1;
        let bad = |why: &str| -> ! { panic!("child log line {}: {why}: {line:?}", self.lines) };
        let fields: Vec<&str> = line.split(' ').collect();
        let [event, res, ns, pid, client] = fields[..] else {
            bad("not 5 fields")
        };
        let (Ok(ns), Ok(pid), Ok(client)) = (ns.parse(), pid.parse(), client.parse()) else {
            bad("bad number")
        };
        match event {
            "start" => {
                // A pid used again: its previous life ended at its last line.
                if let Some(old) = self.open.remove(&pid) {
                    self.closed.push(old);
                }
                self.open.insert(
                    pid,
                    Life {
                        res: res.to_string(),
                        pid,
                        client,
                        start: ns,
                        end: ns,
                        stopped: false,
                    },
                );
            }
            "beat" | "stop" => {
                let Some(life) = self.open.get_mut(&pid) else {
                    bad("no start line for this pid before")
                };
                if life.res != res {
                    bad("another resource than at its start");
                }
                life.end = life.end.max(ns);
                if event == "stop" {
                    let mut life = self.open.remove(&pid).expect("open");
                    life.stopped = true;
                    self.closed.push(life);
                }
            }
            _ => bad("unknown event"),
        }
    }

    /// The lives without a `stop` line so far.
    pub fn open(&self) -> impl Iterator<Item = &Life> {
        self.open.values()
    }

    /// The latest life of `pid`, ended or not.
    pub fn life_of(&self, pid: i32) -> Option<&Life> {
        self.open
            .get(&pid)
            .or_else(|| self.closed.iter().rev().find(|l| l.pid == pid))
    }

    /// Every life, ended or not, in order of start.
    pub fn all(&self) -> Vec<Life> {
        let mut all: Vec<Life> = self
            .closed
            .iter()
            .chain(self.open.values())
            .cloned()
            .collect();
        all.sort_by_key(|l| (l.start, l.pid));
        all
    }
}

/// Every overlap of two lives of the same resource. For each life, in order
/// of start, it is compared with the earlier life of its resource that ends
/// last: if it starts before that one ends, they overlap (so every life that
/// overlaps an earlier one is reported once, with a partner).
pub fn overlaps(lives: &[Life]) -> Vec<Overlap> {
    let mut by_res: BTreeMap<&str, Vec<&Life>> = BTreeMap::new();
    for life in lives {
        by_res.entry(&life.res).or_default().push(life);
    }
    let mut found = Vec::new();
    for group in by_res.values_mut() {
        group.sort_by_key(|l| (l.start, l.end));
        let mut latest: Option<&Life> = None;
        for &life in group.iter() {
            if let Some(prev) = latest {
                if life.start < prev.end {
                    found.push(Overlap {
                        first: prev.clone(),
                        second: life.clone(),
                    });
                }
                if life.end > prev.end {
                    latest = Some(life);
                }
            } else {
                latest = Some(life);
            }
        }
    }
    found
}

/// A log file read as it grows: only complete lines are taken.
pub struct Tail {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
    pub lives: Lives,
}

impl Tail {
    pub fn new(path: &Path) -> Tail {
        Tail {
            path: path.to_path_buf(),
            offset: 0,
            partial: Vec::new(),
            lives: Lives::default(),
        }
    }

    /// Reads what was appended since the last call.
    pub fn poll(&mut self) {
        let Ok(mut file) = File::open(&self.path) else {
            return;
        };
        file.seek(SeekFrom::Start(self.offset)).expect("seek log");
        let mut buf = Vec::new();
        file.read_to_end(&mut buf).expect("read log");
        self.offset += buf.len() as u64;
        self.partial.extend_from_slice(&buf);
        let Some(last_nl) = self.partial.iter().rposition(|&b| b == b'\n') else {
            return;
        };
        let complete: Vec<u8> = self.partial.drain(..=last_nl).collect();
        let text = String::from_utf8(complete).expect("child log is UTF-8");
        for line in text.lines() {
            self.lives.feed(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn life_lines(res: &str, pid: i32, from: u64, to: u64, stop: bool) -> String {
        let mut s = format!("start {res} {from} {pid} 0\n");
        let mut t = from + 5;
        while t < to {
            s.push_str(&format!("beat {res} {t} {pid} 0\n"));
            t += 5;
        }
        let last = if stop { "stop" } else { "beat" };
        s.push_str(&format!("{last} {res} {to} {pid} 0\n"));
        s
    }

    #[test]
    fn an_overlap_is_found_and_both_lives_are_shown() {
        let log =
            life_lines("id:1", 100, 1000, 2000, true) + &life_lines("id:1", 200, 1990, 3000, true);
        let found = overlaps(&Lives::parse(&log));
        assert_eq!(found.len(), 1, "{found:?}");
        let text = found[0].to_string();
        assert!(
            text.contains("pid 100") && text.contains("pid 200"),
            "{text}"
        );
        assert!(text.contains("OVERLAP of 0.0 ms on id:1"), "{text}");
    }

    #[test]
    fn interleaved_lines_of_overlapping_lives_are_found() {
        // Two children writing at once: their lines interleave in the file.
        let log = "start lock:a 10 1 0\nstart lock:a 12 2 1\nbeat lock:a 15 1 0\n\
                   beat lock:a 17 2 1\nstop lock:a 20 1 0\nstop lock:a 22 2 1\n";
        let found = overlaps(&Lives::parse(log));
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].first.pid, found[0].second.pid), (1, 2));
    }

    #[test]
    fn touching_lives_and_other_resources_are_accepted() {
        let log = life_lines("id:1", 100, 1000, 2000, true)
            + &life_lines("id:1", 200, 2000, 3000, false)
            + &life_lines("id:2", 300, 1500, 2500, true)
            + &life_lines("lock:x", 400, 1000, 4000, true);
        assert!(overlaps(&Lives::parse(&log)).is_empty());
    }

    #[test]
    fn a_killed_life_ends_at_its_last_beat() {
        // pid 100 was SIGKILLed after its beat at 1500; pid 200 starts at
        // 1600: no overlap. Had 100 beaten at 1700, there would be one.
        let log =
            life_lines("id:1", 100, 1000, 1500, false) + &life_lines("id:1", 200, 1600, 3000, true);
        let lives = Lives::parse(&log);
        assert!(!lives[0].stopped);
        assert_eq!(lives[0].end, 1500);
        assert!(overlaps(&lives).is_empty());
        let late = log + "beat id:1 1700 100 0\n";
        assert_eq!(overlaps(&Lives::parse(&late)).len(), 1);
    }

    #[test]
    fn a_life_inside_a_long_one_is_found_even_after_a_short_one() {
        // A long life, a short one inside it, then another inside it after
        // the short one ended: both short ones overlap the long one.
        let log = life_lines("id:1", 1, 0, 10_000, true)
            + &life_lines("id:1", 2, 100, 200, true)
            + &life_lines("id:1", 3, 300, 400, true);
        let found = overlaps(&Lives::parse(&log));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found.iter().all(|o| o.first.pid == 1));
    }

    #[test]
    fn a_reused_pid_starts_a_new_life() {
        let log = "start id:1 10 7 0\nbeat id:1 20 7 0\nstart id:2 30 7 1\nstop id:2 40 7 1\n";
        let lives = Lives::parse(log);
        assert_eq!(lives.len(), 2);
        assert_eq!((lives[0].end, lives[1].start), (20, 30));
    }

    #[test]
    #[should_panic(expected = "no start line")]
    fn a_beat_without_a_start_is_refused() {
        Lives::parse("beat id:1 10 7 0\n");
    }

    #[test]
    #[should_panic(expected = "another resource")]
    fn a_pid_that_changes_resource_is_refused() {
        Lives::parse("start id:1 10 7 0\nbeat id:2 20 7 0\n");
    }
}
