//! An exhaustive explorer of the shared lock (`yaraus lock -s`) and of the
//! semaphore (`--limit`) on one master: every interleaving of a few
//! readers' and writers' (or a semaphore's members') requests, the server
//! applying them, their replies, and time passing, up to a bound.
//!
//! # What is modelled
//!
//! The lock's one key as `shared.lua`, `shared_acquire.lua`, `acquire.lua`
//! (one master, `incr` mode), `semaphore_acquire.lua`,
//! `semaphore_extend.lua` and the release scripts leave it: missing, a
//! string (the exclusive holder, with its `PX` expiry), or a sorted set of
//! shared places (or a semaphore's places) and waiting writers' marks
//! scored by their expiry. With `count_fence`, also the fencing counter
//! beside it, which every acquisition that takes a place counts up (the
//! exhaustive checks leave it off: it grows without bound, and no check
//! reads it; the conformance walks, which are finite, compare it with the
//! server's). A script is one atomic step at the server's time
//! of that step; its reply reaches the client later (any number of ticks).
//! A client's deadline is measured from *before* its request (the request's
//! start plus the ttl), and a holder counts as holding only before that
//! deadline: at the deadline its command has been killed (the watchdog),
//! whether or not it heard of a loss. A client may also stay still for any
//! number of ticks (a SIGSTOP) at any point.
//!
//! # What is checked
//!
//! No instant at which an exclusive holder holds beside anyone else
//! (`Violation::Overlap`), nor more members hold a semaphore than its limit
//! (`Violation::OverLimit`). The model also counts the most holders at once,
//! so a model that is safe because nobody ever holds shows it, and two
//! broken variants must be caught: a shared holder admitted beside an
//! exclusive one, and deadlines measured from the reply instead of the
//! request (for the lock and for the semaphore).

use crate::explorer;

use explorer::{System, check, say};
use std::fmt::Write as _;

pub const CLIENTS: usize = 3;
/// Ticks a place or the exclusive lock lives (`--ttl`).
pub const TTL: u8 = 3;
/// Ticks a waiting writer's mark lives.
pub const MARK_TTL: u8 = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    Reader,
    Writer,
    /// One of the members of a semaphore of `Model::limit` places (a
    /// model of members only: a semaphore's key is never a string).
    Member,
}

/// What a client is doing. Every time is kept relative to now (`age`:
/// ticks since a request was sent, at most the ttl, after which its
/// deadline has passed; `left`: ticks before a deadline), so the states are
/// finite without a bound on time, and every run, however long, is covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    Idle,
    /// An acquire request sent `age` ticks ago, not yet applied.
    Acquiring {
        age: u8,
    },
    /// Applied; the reply (taken or not) is on its way.
    Acquired {
        age: u8,
        taken: bool,
    },
    /// Holding until `left` ticks from now (0: its command has been killed).
    Holding {
        left: u8,
    },
    /// An extension sent `age` ticks ago while holding for `left` more.
    Extending {
        age: u8,
        left: u8,
    },
    Extended {
        age: u8,
        left: u8,
        ok: bool,
    },
    /// A release on its way (the command has ended).
    Releasing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Entry {
    None,
    /// A shared place, for this many more ticks of server time.
    Place(u8),
    /// A waiting writer's mark, for this many more ticks.
    Mark(u8),
}

/// The lock's key on the server; what has expired is gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    Missing,
    /// The exclusive holder (a client's index), for `left` more ticks.
    Exclusive {
        owner: u8,
        left: u8,
    },
    /// The sorted set: per client, its place or its mark.
    Shared([Entry; CLIENTS]),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct State {
    pub key: Key,
    pub clients: [Phase; CLIENTS],
    /// Places taken so far: what the fencing counter has been counted up
    /// by (0 unless `Model::count_fence`).
    pub fence: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    Tick,
    /// The client sends its next request.
    Send(u8),
    /// The server runs the client's request.
    Apply(u8),
    /// The client reads the reply.
    Reply(u8),
    /// The holder's command ends: it gives the lock back.
    Finish(u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Violation {
    Overlap,
    OverLimit,
}

/// The rules, with the two broken variants the checker must catch.
pub struct Model {
    pub roles: [Role; CLIENTS],
    /// The places of a semaphore (its members' model only).
    pub limit: u8,
    /// Count the fencing counter in the state.
    pub count_fence: bool,
    /// Broken: a reader joins even where an exclusive holder has the key.
    pub reader_ignores_writer: bool,
    /// Broken: a deadline counted from the reply, not from the request.
    pub deadline_from_reply: bool,
}

impl Model {
    pub fn new(roles: [Role; CLIENTS]) -> Model {
        assert!(
            !roles.contains(&Role::Member),
            "a semaphore's members are a model of their own (Model::semaphore)"
        );
        Model {
            roles,
            limit: 0,
            count_fence: false,
            reader_ignores_writer: false,
            deadline_from_reply: false,
        }
    }

    /// The members of a semaphore of `limit` places.
    pub fn semaphore(limit: u8) -> Model {
        Model {
            roles: [Role::Member; CLIENTS],
            limit,
            ..Model::new([Role::Reader; CLIENTS])
        }
    }

    /// The acquire script of client `c`: (key after, taken).
    fn acquire(&self, key: Key, c: usize) -> (Key, bool) {
        let owner = c as u8;
        match (self.roles[c], key) {
            (Role::Writer, Key::Missing) => (Key::Exclusive { owner, left: TTL }, true),
            (Role::Writer, Key::Shared(mut entries)) => {
                if entries.iter().any(|e| matches!(e, Entry::Place(_))) {
                    entries[c] = Entry::Mark(MARK_TTL);
                    (Key::Shared(entries), false)
                } else {
                    (Key::Exclusive { owner, left: TTL }, true)
                }
            }
            (Role::Writer, Key::Exclusive { .. }) => (key, false),
            (Role::Member, Key::Shared(mut entries)) => {
                let places = entries.iter().filter(|e| matches!(e, Entry::Place(_)));
                if places.count() >= self.limit as usize {
                    return (key, false);
                }
                entries[c] = Entry::Place(TTL);
                (Key::Shared(entries), true)
            }
            (Role::Member, Key::Missing) => {
                let mut entries = [Entry::None; CLIENTS];
                entries[c] = Entry::Place(TTL);
                (Key::Shared(entries), true)
            }
            (Role::Member, Key::Exclusive { .. }) => unreachable!("a semaphore is a sorted set"),
            (Role::Reader, Key::Exclusive { .. }) if !self.reader_ignores_writer => (key, false),
            (Role::Reader, _) => {
                let mut entries = match key {
                    Key::Shared(entries) => entries,
                    _ => [Entry::None; CLIENTS],
                };
                if entries.iter().any(|e| matches!(e, Entry::Mark(_))) {
                    return (key, false);
                }
                entries[c] = Entry::Place(TTL);
                (Key::Shared(entries), true)
            }
        }
    }

    /// The extend scripts: (key after, still ours).
    fn extend(&self, key: Key, c: usize) -> (Key, bool) {
        match key {
            Key::Exclusive { owner, .. } if owner as usize == c => {
                (Key::Exclusive { owner, left: TTL }, true)
            }
            Key::Shared(mut entries) if matches!(entries[c], Entry::Place(_)) => {
                entries[c] = Entry::Place(TTL);
                (Key::Shared(entries), true)
            }
            _ => (key, false),
        }
    }

    /// The release scripts: compare-and-delete, or ZREM of our place.
    fn release(&self, key: Key, c: usize) -> Key {
        match key {
            Key::Exclusive { owner, .. } if owner as usize == c => Key::Missing,
            Key::Shared(mut entries) if matches!(entries[c], Entry::Place(_)) => {
                entries[c] = Entry::None;
                shared(entries)
            }
            _ => key,
        }
    }

    /// The clients holding now: before their deadline, extending or not.
    fn holding(&self, s: &State) -> Vec<usize> {
        (0..CLIENTS)
            .filter(|&c| match s.clients[c] {
                Phase::Holding { left }
                | Phase::Extending { left, .. }
                | Phase::Extended { left, .. } => left > 0,
                _ => false,
            })
            .collect()
    }

    /// Ticks left before a deadline counted from a request sent `age`
    /// ticks ago (or, broken, from now).
    fn deadline(&self, age: u8) -> u8 {
        if self.deadline_from_reply {
            TTL
        } else {
            TTL - age
        }
    }
}

/// A sorted set that has lost its last entry is gone.
fn shared(entries: [Entry; CLIENTS]) -> Key {
    if entries.iter().all(|e| *e == Entry::None) {
        Key::Missing
    } else {
        Key::Shared(entries)
    }
}

/// One tick of every clock: expiries come closer, requests age.
fn tick(s: &State) -> State {
    let down = |t: u8| t.saturating_sub(1);
    let up = |t: u8| (t + 1).min(TTL);
    let key = match s.key {
        Key::Exclusive { left: 1, .. } => Key::Missing,
        Key::Exclusive { owner, left } => Key::Exclusive {
            owner,
            left: down(left),
        },
        Key::Shared(mut entries) => {
            for e in &mut entries {
                *e = match *e {
                    Entry::Place(1) | Entry::Mark(1) => Entry::None,
                    Entry::Place(t) => Entry::Place(down(t)),
                    Entry::Mark(t) => Entry::Mark(down(t)),
                    Entry::None => Entry::None,
                };
            }
            shared(entries)
        }
        Key::Missing => Key::Missing,
    };
    let mut clients = s.clients;
    for phase in &mut clients {
        *phase = match *phase {
            Phase::Acquiring { age } => Phase::Acquiring { age: up(age) },
            Phase::Acquired { age, taken } => Phase::Acquired {
                age: up(age),
                taken,
            },
            Phase::Holding { left } => Phase::Holding { left: down(left) },
            Phase::Extending { age, left } => Phase::Extending {
                age: up(age),
                left: down(left),
            },
            Phase::Extended { age, left, ok } => Phase::Extended {
                age: up(age),
                left: down(left),
                ok,
            },
            p => p,
        };
    }
    State {
        key,
        clients,
        fence: s.fence,
    }
}

impl System for Model {
    type State = State;
    type Event = Event;
    type Violation = Violation;

    fn rules(&self) -> String {
        format!(
            "{:?}{}, ttl {TTL}, mark {MARK_TTL}{}{}",
            self.roles,
            if self.limit > 0 {
                format!(", limit {}", self.limit)
            } else {
                String::new()
            },
            if self.reader_ignores_writer {
                ", BROKEN: readers ignore the writer"
            } else {
                ""
            },
            if self.deadline_from_reply {
                ", BROKEN: deadlines from the reply"
            } else {
                ""
            }
        )
    }

    fn initial(&self) -> State {
        State {
            key: Key::Missing,
            clients: [Phase::Idle; CLIENTS],
            fence: 0,
        }
    }

    fn candidates(&self, _s: &State, out: &mut Vec<Event>) {
        out.clear();
        out.push(Event::Tick);
        for c in 0..CLIENTS as u8 {
            out.extend([
                Event::Send(c),
                Event::Apply(c),
                Event::Reply(c),
                Event::Finish(c),
            ]);
        }
    }

    fn apply(&self, s: &State, e: Event, log: Option<&mut String>) -> Option<State> {
        let mut n = *s;
        let describe = log.is_some();
        let words = match e {
            Event::Tick => {
                n = tick(s);
                say!(describe, "a tick passes")
            }
            Event::Send(c) => {
                let phase = &mut n.clients[c as usize];
                *phase = match *phase {
                    Phase::Idle => Phase::Acquiring { age: 0 },
                    // Holding: extend while valid.
                    Phase::Holding { left } if left > 0 => Phase::Extending { age: 0, left },
                    _ => return None,
                };
                say!(describe, "c{c} sends {:?}", *phase)
            }
            Event::Apply(c) => {
                let i = c as usize;
                let phase = match s.clients[i] {
                    Phase::Acquiring { age } => {
                        let (key, taken) = self.acquire(s.key, i);
                        n.key = key;
                        if taken && self.count_fence {
                            n.fence += 1;
                        }
                        Phase::Acquired { age, taken }
                    }
                    Phase::Extending { age, left } => {
                        let (key, ok) = self.extend(s.key, i);
                        n.key = key;
                        Phase::Extended { age, left, ok }
                    }
                    Phase::Releasing => {
                        n.key = self.release(s.key, i);
                        Phase::Idle
                    }
                    _ => return None,
                };
                n.clients[i] = phase;
                say!(describe, "the server runs c{c}'s request: {phase:?}")
            }
            Event::Reply(c) => {
                let i = c as usize;
                let phase = match s.clients[i] {
                    Phase::Acquired { age, taken: true } => Phase::Holding {
                        left: self.deadline(age),
                    },
                    Phase::Acquired { taken: false, .. } => Phase::Idle,
                    Phase::Extended {
                        age,
                        left,
                        ok: true,
                    } => Phase::Holding {
                        left: left.max(self.deadline(age)),
                    },
                    // Lost: its command is killed; it gives the place back.
                    Phase::Extended { ok: false, .. } => Phase::Releasing,
                    _ => return None,
                };
                n.clients[i] = phase;
                say!(describe, "c{c} reads its reply: {phase:?}")
            }
            Event::Finish(c) => {
                let phase = &mut n.clients[c as usize];
                if !matches!(phase, Phase::Holding { .. }) {
                    return None;
                }
                *phase = Phase::Releasing;
                say!(describe, "c{c}'s command ends (or was killed); it releases")
            }
        };
        if let Some(log) = log {
            log.push_str(&words);
        }
        Some(n)
    }

    fn violation(&self, s: &State) -> Option<Violation> {
        let holding = self.holding(s);
        if self.roles.contains(&Role::Member) {
            return (holding.len() > self.limit as usize).then_some(Violation::OverLimit);
        }
        let writer = holding.iter().any(|&c| self.roles[c] == Role::Writer);
        (writer && holding.len() > 1).then_some(Violation::Overlap)
    }

    fn counted(&self, s: &State) -> u32 {
        self.holding(s).len() as u32
    }

    fn counted_name(&self) -> &'static str {
        "holders at once"
    }

    fn limit(&self) -> usize {
        20_000_000
    }

    fn start(&self) -> String {
        format!("{:?}, the lock missing", self.roles)
    }

    fn show(&self, s: &State) -> String {
        let mut out = format!("{:?}", s.key);
        if self.count_fence {
            let _ = write!(out, " fence+{}", s.fence);
        }
        for (c, phase) in s.clients.iter().enumerate() {
            let _ = write!(out, " c{c}:{phase:?}");
        }
        out
    }
}

use Role::{Reader, Writer};

#[test]
fn a_semaphore_never_holds_more_than_its_limit_and_fills_up() {
    let m = Model::semaphore(2);
    let o = check("semaphore, limit 2", &m);
    explorer::assert_safe("semaphore, limit 2", &m, &o);
    assert_eq!(o.most, 2, "the semaphore never had two members at once");
}

#[test]
fn a_semaphore_with_deadlines_counted_from_the_reply_is_caught() {
    let mut m = Model::semaphore(2);
    m.deadline_from_reply = true;
    let o = check("broken: semaphore deadlines from the reply", &m);
    assert_eq!(o.violation.map(|(v, _)| v), Some(Violation::OverLimit));
}

#[test]
fn two_readers_and_a_writer_never_overlap_and_the_readers_share() {
    let m = Model::new([Reader, Reader, Writer]);
    let o = check("2 readers, 1 writer", &m);
    explorer::assert_safe("2 readers, 1 writer", &m, &o);
    assert_eq!(o.most, 2, "the readers never held together");
}

#[test]
fn a_reader_and_two_writers_never_overlap() {
    let m = Model::new([Reader, Writer, Writer]);
    let o = check("1 reader, 2 writers", &m);
    explorer::assert_safe("1 reader, 2 writers", &m, &o);
    assert_eq!(o.most, 1);
}

#[test]
fn a_reader_admitted_beside_a_writer_is_caught() {
    let mut m = Model::new([Reader, Reader, Writer]);
    m.reader_ignores_writer = true;
    let o = check("broken: readers ignore the writer", &m);
    assert_eq!(o.violation.map(|(v, _)| v), Some(Violation::Overlap));
}

#[test]
fn deadlines_counted_from_the_reply_are_caught() {
    let mut m = Model::new([Reader, Writer, Writer]);
    m.deadline_from_reply = true;
    let o = check("broken: deadlines from the reply", &m);
    assert_eq!(o.violation.map(|(v, _)| v), Some(Violation::Overlap));
}
