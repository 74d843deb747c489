//! Reading what our Lua scripts return: one reader, [`Answer`].
//!
//! A script of ours answers with an array whose items each `.lua` file
//! names in its header; most begin with a code, and the items after it
//! depend on the code. An [`Answer`] takes such a reply apart, item by item,
//! and turns anything else into an [`Error::Redis`] that names the server,
//! so that a server (or a future script) answering something this yaraus
//! does not know is reported, never misread.

use crate::error::{Error, Result};
use std::sync::Arc;

/// One node's answer to one of our scripts, with the node's label for
/// messages.
#[derive(Debug)]
pub struct Answer {
    pub label: Arc<str>,
    items: Vec<redis::Value>,
}

impl Answer {
    /// Takes a script's reply apart: a non-empty array, or an error.
    pub fn new(label: Arc<str>, reply: redis::Value) -> Result<Answer> {
        match reply {
            redis::Value::Array(items) if !items.is_empty() => Ok(Answer { label, items }),
            other => Err(Error::Redis(format!(
                "Redis at {label} gave an unexpected reply to a yaraus script: {other:?}"
            ))),
        }
    }

    /// Item 0 as the reply's code.
    pub fn code(&self) -> Result<i64> {
        self.get(0)
    }

    /// How many items, the code included.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Never true: a reply has an item.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Item `i`, converted to `T`.
    pub fn get<T: redis::FromRedisValue>(&self, i: usize) -> Result<T> {
        let value = self.items.get(i).ok_or_else(|| {
            Error::Redis(format!(
                "Redis at {} gave a short reply to a yaraus script ({} items)",
                self.label,
                self.items.len()
            ))
        })?;
        redis::from_redis_value_ref(value).map_err(|e| {
            Error::Redis(format!(
                "Redis at {} gave an unexpected reply to a yaraus script: {e}",
                self.label
            ))
        })
    }

    /// Item `i` as text.
    pub fn text(&self, i: usize) -> Result<String> {
        self.get(i)
    }

    /// Item `i` as a counter: decimal text of a `u64` (Lua's own numbers
    /// are doubles, exact only up to 2^53).
    pub fn counter(&self, i: usize) -> Result<u64> {
        let text = self.text(i)?;
        text.parse().map_err(|_| {
            Error::Redis(format!(
                "Redis at {} returned '{text}' for a counter, which is not a 64-bit value",
                self.label
            ))
        })
    }

    /// Item `i` if the reply has it.
    pub fn optional<T: redis::FromRedisValue>(&self, i: usize) -> Result<Option<T>> {
        (i < self.items.len()).then(|| self.get(i)).transpose()
    }

    /// The error for a code the caller does not know (or for a reply
    /// without a code).
    pub fn unknown(&self) -> Error {
        match self.code() {
            Ok(code) => Error::Redis(format!(
                "Redis at {} answered a yaraus script with code {code}, which this yaraus \
                 does not know",
                self.label
            )),
            Err(e) => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(items: Vec<redis::Value>) -> Answer {
        Answer::new(Arc::from("redis://h:1"), redis::Value::Array(items)).unwrap()
    }

    fn text(s: &str) -> redis::Value {
        redis::Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn counters_parse_exactly() {
        let a = answer(vec![
            redis::Value::Int(1),
            text("18446744073709551615"),
            text("9007199254740993"),
            text("1e3"),
        ]);
        assert_eq!(a.counter(1).unwrap(), u64::MAX);
        assert_eq!(a.counter(2).unwrap(), 9_007_199_254_740_993);
        assert!(a.counter(3).is_err());
    }

    #[test]
    fn anything_but_an_array_is_an_error_naming_the_server() {
        let e = Answer::new(Arc::from("redis://h:1"), redis::Value::Nil).unwrap_err();
        assert!(e.to_string().contains("redis://h:1"), "{e}");
        let a = answer(vec![redis::Value::Int(7)]);
        let e = a.get::<i64>(3).unwrap_err();
        assert!(e.to_string().contains("short reply"), "{e}");
        assert_eq!(a.optional::<i64>(3).unwrap(), None);
        assert!(a.unknown().to_string().contains("code 7"));
    }
}
