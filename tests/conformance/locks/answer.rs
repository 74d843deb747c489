//! The scripts' answers in the model's words: what the model expects of a
//! request, and a script's reply read the same way (times in ticks).

use super::{FENCE_START, Names, TICK_MS};
use redis::Value;
use yaraus_models::rwlock_model::{Entry, Key, Model, Phase, Role, State};

#[derive(Debug, PartialEq)]
pub enum Answer {
    /// A place (or the lock) taken, with its fencing token.
    Taken { fence: u64 },
    /// Refused: client `by` holds the lock for `left` more ticks.
    Held { by: usize, left: u8, fence: u64 },
    /// Refused: `holders` shared holders (or a semaphore's members) have
    /// it, the first of them for `first` more ticks.
    Shared {
        holders: usize,
        first: u8,
        fence: u64,
    },
    /// Refused: a writer waits (its mark lives `left` more ticks) beside
    /// `holders` shared holders.
    WriterWaiting {
        left: u8,
        holders: usize,
        fence: u64,
    },
    /// An extension: still ours, or gone (every other reply, as the code
    /// counts it).
    Extended(bool),
    /// A release: whether it freed a live hold.
    Released(bool),
    /// A reply the model has no words for (an error, another shape).
    Strange(String),
}

/// What the model says the script of client `c`'s request answers, taking
/// `before` to `after`.
pub fn expected(model: &Model, before: &State, c: usize, after: &State) -> Answer {
    match (before.clients[c], after.clients[c]) {
        (Phase::Acquiring { .. }, Phase::Acquired { taken: true, .. }) => Answer::Taken {
            fence: FENCE_START + u64::from(after.fence),
        },
        (Phase::Acquiring { .. }, Phase::Acquired { taken: false, .. }) => refusal(
            model.roles[c],
            before.key,
            FENCE_START + u64::from(before.fence),
        ),
        (Phase::Extending { .. }, Phase::Extended { ok, .. }) => Answer::Extended(ok),
        (Phase::Releasing, _) => Answer::Released(match before.key {
            Key::Exclusive { owner, .. } => owner as usize == c,
            Key::Shared(entries) => matches!(entries[c], Entry::Place(_)),
            Key::Missing => false,
        }),
        (from, to) => unreachable!("c{c}'s request took it from {from:?} to {to:?}"),
    }
}

fn refusal(role: Role, key: Key, fence: u64) -> Answer {
    let entries = match key {
        Key::Exclusive { owner, left } => {
            return Answer::Held {
                by: owner as usize,
                left,
                fence,
            };
        }
        Key::Shared(entries) => entries,
        Key::Missing => unreachable!("the model refuses nobody a missing key"),
    };
    let places: Vec<u8> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Place(left) => Some(*left),
            _ => None,
        })
        .collect();
    let first = |lefts: &[u8]| *lefts.iter().min().expect("a refusal names whom");
    if role == Role::Reader {
        let marks: Vec<u8> = entries
            .iter()
            .filter_map(|e| match e {
                Entry::Mark(left) => Some(*left),
                _ => None,
            })
            .collect();
        return Answer::WriterWaiting {
            left: first(&marks),
            holders: places.len(),
            fence,
        };
    }
    Answer::Shared {
        holders: places.len(),
        first: first(&places),
        fence,
    }
}

/// A time left in ms, in the model's ticks (a part of a tick is one).
pub fn ticks(ms: i64) -> u8 {
    u8::try_from((ms.max(0) as u64).div_ceil(TICK_MS)).unwrap_or(u8::MAX)
}

/// An acquire script's reply (acquire.lua, shared_acquire.lua,
/// semaphore_acquire.lua: the same shapes).
pub fn acquire(reply: redis::RedisResult<Value>, names: &Names) -> Answer {
    let strange = |why: &str| Answer::Strange(format!("{why}: {reply:?}"));
    let Some(items) = items(&reply) else {
        return strange("not an array");
    };
    let (code, fence) = (int(&items[0]), items.get(2).and_then(counter));
    let refused = items.get(3).and_then(counter);
    match (code, items.len(), fence) {
        // Taken, and voted: one master counts the token (INCR).
        (Some(1), 3, Some(fence)) if int(&items[1]) == Some(1) => Answer::Taken { fence },
        (Some(0), 4 | 5, _) => {
            let (Some(holder), Some(ms), Some(fence)) = (text(&items[1]), int(&items[2]), refused)
            else {
                return strange("a refusal of another shape");
            };
            let left = ticks(ms);
            let holders = items.get(4).and_then(int).map(|n| n as usize);
            match (holders, names.member(&holder)) {
                (None, Some((by, false))) => Answer::Held { by, left, fence },
                (Some(holders), _) if holder.is_empty() => Answer::Shared {
                    holders,
                    first: left,
                    fence,
                },
                (Some(holders), Some((_, true))) => Answer::WriterWaiting {
                    left,
                    holders,
                    fence,
                },
                _ => strange("refused by nobody of this run"),
            }
        }
        _ => strange("another reply"),
    }
}

/// An extend script's reply: `{1}` is ours; every other code the code
/// counts as gone (extend.rs).
pub fn extend(reply: redis::RedisResult<Value>) -> Answer {
    match items(&reply).and_then(|items| int(&items[0])) {
        Some(1) => Answer::Extended(true),
        Some(0 | 2 | 3 | 4) => Answer::Extended(false),
        _ => Answer::Strange(format!("{reply:?}")),
    }
}

/// release.lua's `{freed, lacks}` (the counter is always there: `lacks`
/// must be 0) or semaphore_release.lua's `1`/`0`.
pub fn release(reply: redis::RedisResult<Value>) -> Answer {
    let freed = match &reply {
        Ok(Value::Int(n)) => Some(*n),
        Ok(_) => match items(&reply).as_deref() {
            Some([freed, lacks]) if int(lacks) == Some(0) => int(freed),
            _ => None,
        },
        Err(_) => None,
    };
    match freed {
        Some(n @ (0 | 1)) => Answer::Released(n == 1),
        _ => Answer::Strange(format!("{reply:?}")),
    }
}

fn items(reply: &redis::RedisResult<Value>) -> Option<Vec<Value>> {
    let items: Vec<Value> = redis::from_redis_value_ref(reply.as_ref().ok()?).ok()?;
    (!items.is_empty()).then_some(items)
}

pub fn int(v: &Value) -> Option<i64> {
    redis::from_redis_value_ref(v).ok()
}

pub fn text(v: &Value) -> Option<String> {
    redis::from_redis_value_ref(v).ok()
}

/// A fencing counter as a script returns it (decimal text).
pub fn counter(v: &Value) -> Option<u64> {
    text(v)?.parse().ok()
}
