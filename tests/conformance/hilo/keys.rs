//! Both sides in one vocabulary: the model's small numbers as the ids the
//! agent sends, the scripts' replies as [`Answer`]s, and a shard's keys
//! (read back with `status.lua`) as [`ShardKeys`].

use yaraus::hilo::HiloKeys;
use yaraus::hilo::script::Status;
use yaraus_models::hilo_model::model::{ID_LIMIT, Shard, ids};

/// Model id 0 on the servers: ids 0..32 of the model cross 10^19, where
/// the 20-digit text carries through every digit, well above 2^53, where
/// Lua's numbers stop being exact; the scripts' text arithmetic must
/// hold there as everywhere.
const BASE: u64 = 10_000_000_000_000_000_000 - 16;

/// The id the agent sends for the model's `v`.
pub fn id(v: u8) -> u64 {
    BASE + u64::from(v)
}

/// The model's hwm (0: absent) as an id.
pub fn value(v: u8) -> Option<u64> {
    (v != 0).then(|| id(v))
}

/// The fence of the run with `token`, as the agent builds it: the lock's
/// fencing token in 20 digits, ':', a nonce of the run's own.
pub fn fence_text(token: u8) -> String {
    let nonce = 0x9e37_79b9_7f4a_7c15_u64.wrapping_mul(u64::from(token));
    format!("{}:{nonce:016x}", yaraus::hilo::wire(u64::from(token)))
}

/// The model's fence (0: absent) as the text the shard holds.
pub fn text_of(token: u8) -> Option<String> {
    (token != 0).then(|| fence_text(token))
}

/// What a script answered, in its header's terms.
#[derive(Debug, PartialEq)]
pub enum Answer {
    /// fence.lua {1, hwm, open windows}: fenced (open only compared when
    /// the model keeps the windows).
    Fenced { hwm: Option<u64>, open: Option<u64> },
    /// fence.lua {2, fence}: a newer run's fence is held.
    FenceHeld(String),
    /// raise.lua {1, hwm}.
    Raised { hwm: u64 },
    /// raise.lua / create.lua {2, fence or ''}: the fence is not ours.
    NotOurs(Option<String>),
    /// create.lua {3, hwm or ''}: the window ends above the hwm.
    BelowHwm(Option<u64>),
    /// create.lua {1}.
    Created,
    /// reserve.lua {1, first, next, size} for a batch of one.
    Reserved { first: u64, next: u64 },
    /// Anything else: a reply no header describes.
    Other(Vec<String>),
}

impl Answer {
    /// The variant's name: "Fenced", "NotOurs"...
    pub fn kind(&self) -> &'static str {
        match self {
            Answer::Fenced { .. } => "Fenced",
            Answer::FenceHeld(_) => "FenceHeld",
            Answer::Raised { .. } => "Raised",
            Answer::NotOurs(_) => "NotOurs",
            Answer::BelowHwm(_) => "BelowHwm",
            Answer::Created => "Created",
            Answer::Reserved { .. } => "Reserved",
            Answer::Other(_) => "Other",
        }
    }
}

/// The reply's fields as text (integers in decimal).
fn fields(reply: &redis::Value) -> Vec<String> {
    let redis::Value::Array(items) = reply else {
        return vec![format!("{reply:?}")];
    };
    items
        .iter()
        .map(|v| match v {
            redis::Value::Int(n) => n.to_string(),
            redis::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
            other => format!("{other:?}"),
        })
        .collect()
}

fn parse(text: &str) -> Option<u64> {
    (!text.is_empty()).then(|| text.parse().expect("a 20-digit id"))
}

fn optional(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_string())
}

/// Which script a reply came from.
#[derive(Clone, Copy, Debug)]
pub enum Sent {
    Fence,
    Raise,
    Create,
    Reserve,
}

/// `sent`'s reply as an [`Answer`]. `open` says whether the fence's count
/// of open windows is compared.
pub fn answer(sent: Sent, reply: &redis::Value, open: bool) -> Answer {
    let f = fields(reply);
    let strs: Vec<&str> = f.iter().map(String::as_str).collect();
    match (sent, &strs[..]) {
        (Sent::Fence, ["1", hwm, count]) => Answer::Fenced {
            hwm: parse(hwm),
            open: open.then(|| count.parse().expect("a count")),
        },
        (Sent::Fence, ["2", held]) => Answer::FenceHeld(held.to_string()),
        (Sent::Raise, ["1", hwm]) => Answer::Raised {
            hwm: parse(hwm).expect("raise.lua replies a present hwm"),
        },
        (Sent::Raise | Sent::Create, ["2", fence]) => Answer::NotOurs(optional(fence)),
        (Sent::Create, ["1"]) => Answer::Created,
        (Sent::Create, ["3", hwm]) => Answer::BelowHwm(parse(hwm)),
        (Sent::Reserve, ["1", first, next, _size]) => Answer::Reserved {
            first: first.parse().expect("an id"),
            next: next.parse().expect("an id"),
        },
        _ => Answer::Other(f),
    }
}

/// One shard's keys for the sequence, as far as the model tracks them.
#[derive(Debug, PartialEq)]
pub struct ShardKeys {
    pub fence: Option<String>,
    pub hwm: Option<u64>,
    /// The open windows (start, end, next), lowest start first; only when
    /// the model keeps them (`Watch::Ids`).
    pub windows: Option<Vec<(u64, u64, u64)>>,
}

/// The open windows of a model shard: the ids not yet reserved, by window
/// (windows are aligned to the size; the reserver takes each one's ids
/// from its start, so what is left of one is a run up to its end).
fn windows(shard: &Shard, size: u8) -> Vec<(u64, u64, u64)> {
    (0..ID_LIMIT / size)
        .map(|j| j * size)
        .filter_map(|a| {
            let left = shard.open & ids(a, a + size);
            (left != 0).then(|| (id(a), id(a + size), id(left.trailing_zeros() as u8)))
        })
        .collect()
}

/// How many windows are open on a model shard (fence.lua's ZCARD).
pub fn open_windows(shard: &Shard, size: u8) -> u64 {
    windows(shard, size).len() as u64
}

pub fn project_shard(shard: &Shard, size: u8, watched: bool) -> ShardKeys {
    ShardKeys {
        fence: text_of(shard.fence),
        hwm: value(shard.hwm),
        windows: watched.then(|| windows(shard, size)),
    }
}

/// Shard `conn`'s keys, read with the library's own `status.lua`.
pub fn observe_shard(conn: &mut redis::Connection, keys: &HiloKeys, watched: bool) -> ShardKeys {
    let reply = Status { keys }
        .invocation()
        .invoke::<redis::Value>(conn)
        .expect("status.lua");
    let f = fields(&reply);
    if f == ["3"] {
        return ShardKeys {
            fence: None,
            hwm: None,
            windows: watched.then(Vec::new),
        };
    }
    assert!(f.len() >= 6 && f[0] == "1", "status.lua replied {f:?}");
    let open = f[6..]
        .chunks(2)
        .map(|w| {
            // A member without its window (never left by the scripts)
            // projects to an empty one, which no model window equals.
            let (end, next) = w[1].split_once(' ').unwrap_or(("0", "0"));
            let number = |t: &str| t.parse::<u64>().expect("an id");
            (number(&w[0]), number(end), number(next))
        })
        .collect();
    ShardKeys {
        fence: optional(&f[2]),
        hwm: parse(&f[1]),
        windows: watched.then_some(open),
    }
}
