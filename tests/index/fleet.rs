//! A fleet of `yaraus index` replicas against one real redis-server, and the
//! transition checker.
//!
//! Every replica runs the same probe: a perl script that appends `start` and
//! (on SIGTERM) `stop` lines with a `CLOCK_MONOTONIC` timestamp, its tag (which
//! replica), index, replicas and pid to one shared file. Appends of one
//! short line are atomic, and the clock is the machine's, so the file orders
//! every child's life on one time line. A child that is SIGKILLed writes no
//! `stop`: the test notes when it saw the process gone ([`Fleet::reaped`]),
//! which is later than its real death, so the checker only errs on the side
//! of a violation.

use crate::index::common::process::{Run, yaraus_in};
use crate::index::common::scratch::Scratch;
use crate::index::common::{EVENT, RedisServer, wait_until};
use nix::time::{ClockId, clock_gettime};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const PROBE: &str = r#"#!/usr/bin/perl
# probe LOG TAG INDEX REPLICAS: a child of yaraus index that logs its life.
use strict; use warnings;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);
my ($log, $tag, $index, $replicas) = @ARGV;
sub record {
    open(my $f, '>>', $log) or die "$log: $!";
    syswrite($f, sprintf("%s %.6f %s %s %s %d\n",
        $_[0], clock_gettime(CLOCK_MONOTONIC), $tag, $index, $replicas, $$));
    close($f);
}
$SIG{TERM} = sub { record('stop'); exit 0; };
die "YARAUS_INDEX=$ENV{YARAUS_INDEX} but <index> was $index\n" if $ENV{YARAUS_INDEX} ne $index;
die "YARAUS_RANK is not index + 1\n" if $ENV{YARAUS_RANK} != $index + 1;
record('start');
sleep 1 while 1;
"#;

/// One start or stop of a child.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub start: bool,
    pub t: f64,
    pub tag: String,
    pub index: u64,
    pub replicas: u64,
    pub pid: i32,
}

/// A child's pair, and whose it is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Alive {
    pub index: u64,
    pub replicas: u64,
    pub tag: String,
}

pub struct Fleet {
    pub server: RedisServer,
    pub scratch: Scratch,
    pub name: String,
    pub replicas: Vec<(String, Run)>,
    /// Children seen gone without a `stop` line: pid → when.
    reaped: BTreeMap<i32, f64>,
}

pub fn monotonic() -> f64 {
    let t = clock_gettime(ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC");
    t.tv_sec() as f64 + t.tv_nsec() as f64 / 1e9
}

impl Fleet {
    pub fn new(name: &str) -> Fleet {
        let scratch = Scratch::new();
        scratch.script("probe.pl", PROBE);
        Fleet {
            server: RedisServer::start(),
            scratch,
            name: name.into(),
            replicas: Vec::new(),
            reaped: BTreeMap::new(),
        }
    }

    /// Starts a replica tagged `tag` with `--skew`, under `prefix` (a
    /// command such as faketime, or nothing).
    pub fn add(&mut self, tag: &str, skew: &str, prefix: &[(&str, &str)]) {
        let url = self.server.url();
        let log = self.scratch.arg("children.log");
        let probe = self.scratch.arg("probe.pl");
        let args = [
            "--redis",
            &url,
            "index",
            &self.name,
            "--interval",
            "1s",
            "--kill-after",
            "200ms",
            "--skew",
            skew,
            "--",
            "perl",
            &probe,
            &log,
            tag,
            "<index>",
            "<replicas>",
        ];
        let mut cmd = yaraus_in(&self.scratch, &args);
        cmd.envs(prefix.iter().copied());
        let mut run = Run::spawn(cmd, &self.scratch);
        run.name = format!("replica {tag}");
        self.replicas.push((tag.to_string(), run));
    }

    pub fn replica(&self, tag: &str) -> &Run {
        &self.replicas.iter().find(|(t, _)| t == tag).expect("tag").1
    }

    /// Every start and stop so far, in time order (with the reaped ones).
    pub fn events(&self) -> Vec<Event> {
        let mut events: Vec<Event> = self
            .scratch
            .lines("children.log")
            .iter()
            .map(|l| parse(l))
            .collect();
        let starts: Vec<Event> = events.iter().filter(|e| e.start).cloned().collect();
        for (pid, t) in &self.reaped {
            if let Some(start) = starts.iter().find(|e| e.pid == *pid) {
                if !events.iter().any(|e| !e.start && e.pid == *pid) {
                    events.push(Event {
                        start: false,
                        t: *t,
                        ..start.clone()
                    });
                }
            }
        }
        events.sort_by(|a, b| a.t.total_cmp(&b.t));
        events
    }

    /// The children alive now, as the log tells.
    pub fn alive(&self) -> BTreeSet<Alive> {
        let mut alive = BTreeMap::new();
        for e in self.events() {
            if e.start {
                alive.insert(e.pid, e);
            } else {
                alive.remove(&e.pid);
            }
        }
        alive
            .into_values()
            .map(|e| Alive {
                index: e.index,
                replicas: e.replicas,
                tag: e.tag,
            })
            .collect()
    }

    /// Waits until exactly `n` children run, with indexes `0..n` of `n`.
    pub fn wait_converged(&self, n: u64) -> BTreeSet<Alive> {
        let mut alive = BTreeSet::new();
        wait_until(
            &format!("children with indexes 0..{n} of {n}"),
            EVENT * 2,
            || {
                alive = self.alive();
                let pairs: BTreeSet<(u64, u64)> =
                    alive.iter().map(|a| (a.index, a.replicas)).collect();
                alive.len() as u64 == n && pairs == (0..n).map(|i| (i, n)).collect()
            },
        );
        alive
    }

    /// How many children were started for `tag` after `since`.
    pub fn starts_since(&self, tag: &str, since: f64) -> usize {
        self.events()
            .iter()
            .filter(|e| e.start && e.tag == tag && e.t > since)
            .count()
    }

    /// SIGKILLs the yaraus of `tag`; waits until its child is gone and
    /// notes when.
    pub fn sigkill(&mut self, tag: &str) {
        let pids: Vec<i32> = self
            .events()
            .iter()
            .filter(|e| e.start && e.tag == tag)
            .map(|e| e.pid)
            .collect();
        let child = *pids.last().expect("the replica's child started");
        self.replica(tag).signal(nix::sys::signal::Signal::SIGKILL);
        wait_until(
            &format!("the child {child} of replica {tag} to die"),
            EVENT,
            || gone(child),
        );
        self.reaped.insert(child, monotonic());
    }

    /// The checker: whenever a child started, every other child alive had
    /// the same replica count and another index.
    pub fn check(&self) {
        let events = self.events();
        let mut alive: BTreeMap<i32, &Event> = BTreeMap::new();
        for e in &events {
            if !e.start {
                alive.remove(&e.pid);
                continue;
            }
            for other in alive.values() {
                assert!(
                    other.replicas == e.replicas && other.index != e.index,
                    "{} started with index {} of {} at {:.3} while {} still ran index {} of {}\n\
                     every event:\n{}",
                    e.tag,
                    e.index,
                    e.replicas,
                    e.t,
                    other.tag,
                    other.index,
                    other.replicas,
                    events
                        .iter()
                        .map(|e| format!("{e:?}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                );
            }
            alive.insert(e.pid, e);
        }
    }
}

fn parse(line: &str) -> Event {
    let f: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(f.len(), 6, "a probe line: {line:?}");
    Event {
        start: f[0] == "start",
        t: f[1].parse().expect("time"),
        tag: f[2].to_string(),
        index: f[3].parse().expect("index"),
        replicas: f[4].parse().expect("replicas"),
        pid: f[5].parse().expect("pid"),
    }
}

/// The process is gone or a zombie (dead, not yet reaped).
pub fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// How long a test may wait for a fleet to settle: a few intervals.
pub const SETTLE: Duration = Duration::from_secs(10);
