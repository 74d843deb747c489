//! How the `birth` model's keys are spelled on a server, and how a
//! server's key reads back: the one place that knows both spellings.
//!
//! A mark is its node's g-th (`State::gens`), so its token is the node and
//! g (`unborn:<nn><gg>`, hex, as `read.lua` wants), and a rolled-back mark
//! also names the creation it undid (`unborn:<nn><gg>:<id>`). A creation is
//! a slot of `State::views` in the model and, in the code, the id the code
//! gives the view it was created from (`yaraus::seq::creation`, a hash of
//! the marks read): so the model's slot is spelled with the code's id, and
//! two views never share one. A prepared node is `creating:<ms>:<id>`,
//! `<ms>` the server's clock; the model's age of it is abstract time
//! (`mod.rs`), so only the id is compared.

use yaraus::seq::{NodeState, creation};
use yaraus_models::seq_model::N;
use yaraus_models::seq_model::birth::{
    IDS, MISSING, PREPARED, State, generation, holder, is_unborn, tag,
};

/// A node's key, as both sides are compared.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    Missing,
    Counter(u64),
    /// The whole mark: `unborn:<token>` or `unborn:<token>:<id>`.
    Mark(String),
    /// `creating:<ms>:<id>`: the id.
    Prepared(String),
    /// Anything else, as held.
    Other(String),
}

/// The mark token of node n's g-th mark.
pub fn token(n: usize, g: u8) -> String {
    format!("{n:02x}{g:02x}")
}

/// The model's state, to spell the keys of one step: the state after it,
/// with the views of the state before where the step forgot a creation
/// (a request of it may still be spelled). A slot is only ever filled
/// from empty, so the two never disagree on a slot both hold.
pub fn naming(before: &State, after: &State) -> State {
    let mut names = *after;
    for x in 0..IDS {
        if names.views[x] == [MISSING; N] {
            names.views[x] = before.views[x];
        }
    }
    names
}

/// The code's id of creation x: the id of the view it was created from.
/// A slot the model has forgotten (a read's history may still name it)
/// gets an id no creation has.
pub fn creation_id(s: &State, x: u8) -> String {
    let view = s.views[usize::from(x)];
    if view == [MISSING; N] {
        return format!("{:032x}", x);
    }
    let states: Vec<NodeState> = (0..N)
        .map(|n| NodeState::Lacks(mark_text(s, n, view[n])))
        .collect();
    creation(&states).unwrap_or_else(|| panic!("the view of X{} is not all marks", x + 1))
}

/// The text of node n's mark k.
pub fn mark_text(s: &State, n: usize, k: u8) -> String {
    assert!(is_unborn(k), "{k} is not a mark");
    let mark = format!("unborn:{}", token(n, generation(k)));
    match tag(k) {
        0 => mark,
        t => format!("{mark}:{}", creation_id(s, t - 1)),
    }
}

/// What node n holding k is, spelled.
pub fn key_of(s: &State, n: usize, k: u8) -> Key {
    match k {
        MISSING => Key::Missing,
        k if holder(k) => Key::Counter(u64::from(k)),
        k if is_unborn(k) => Key::Mark(mark_text(s, n, k)),
        k => Key::Prepared(creation_id(s, k - PREPARED)),
    }
}

/// What a server holds (`None` or `''`: nothing), read back.
pub fn parse(held: Option<&str>) -> Key {
    let Some(text) = held.filter(|t| !t.is_empty()) else {
        return Key::Missing;
    };
    if let Ok(v) = text.parse::<u64>()
        && v.to_string() == text
    {
        return Key::Counter(v);
    }
    if text.starts_with("unborn:") {
        return Key::Mark(text.to_string());
    }
    let parts: Vec<&str> = text.split(':').collect();
    if let ["creating", ms, id] = parts.as_slice()
        && ms.parse::<u64>().is_ok()
    {
        return Key::Prepared((*id).to_string());
    }
    Key::Other(text.to_string())
}

/// An id as a label shows it.
pub fn short(id: &str) -> &str {
    &id[..id.len().min(8)]
}
