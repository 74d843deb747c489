//! Reading what our Lua scripts return.
//!
//! A script of ours answers with an array whose first item is a code and
//! whose other items depend on it (each `.lua` file says which, in its
//! header). These helpers take such a reply apart and turn anything else into
//! an [`Error::Redis`] that names the server, so that a server (or a future
//! script) answering something this yaraus does not know is reported, never
//! misread.

use crate::error::{Error, Result};

/// The items of a script's array reply; anything else is an error.
pub fn items(label: &str, reply: redis::Value) -> Result<Vec<redis::Value>> {
    match reply {
        redis::Value::Array(items) if !items.is_empty() => Ok(items),
        other => Err(Error::Redis(format!(
            "Redis at {label} gave an unexpected reply to a yaraus script: {other:?}"
        ))),
    }
}

/// Item `i` of a script's reply, converted to `T`.
pub fn field<T: redis::FromRedisValue>(label: &str, items: &[redis::Value], i: usize) -> Result<T> {
    let value = items.get(i).ok_or_else(|| {
        Error::Redis(format!(
            "Redis at {label} gave a short reply to a yaraus script ({} items)",
            items.len()
        ))
    })?;
    redis::from_redis_value_ref(value).map_err(|e| {
        Error::Redis(format!(
            "Redis at {label} gave an unexpected reply to a yaraus script: {e}"
        ))
    })
}

/// A reply code this yaraus does not know.
pub fn unknown_code(label: &str, code: i64) -> Error {
    Error::Redis(format!(
        "Redis at {label} answered a yaraus script with code {code}, which this yaraus does \
         not know"
    ))
}

/// One node's answer to one of our scripts: its code (item 0) and the
/// items after it, with the node's label for messages.
pub struct Answer {
    pub label: std::sync::Arc<str>,
    pub code: i64,
    items: Vec<redis::Value>,
}

impl Answer {
    /// Takes a script's reply apart (an array whose first item is a code).
    pub fn new(label: std::sync::Arc<str>, reply: redis::Value) -> Result<Answer> {
        let items = items(&label, reply)?;
        let code = field::<i64>(&label, &items, 0)?;
        Ok(Answer { label, code, items })
    }

    /// How many items, the code included.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Never true: a reply has its code.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Item `i` as text.
    pub fn text(&self, i: usize) -> Result<String> {
        field(&self.label, &self.items, i)
    }

    /// Item `i` as a counter.
    pub fn counter(&self, i: usize) -> Result<u64> {
        counter(&self.label, &self.text(i)?)
    }

    /// The error for a code the caller does not know.
    pub fn unknown(&self) -> Error {
        unknown_code(&self.label, self.code)
    }
}

/// A counter as the scripts return it: decimal text of a `u64` (Lua's own
/// numbers are doubles, exact only up to 2^53).
pub fn counter(label: &str, text: &str) -> Result<u64> {
    text.parse().map_err(|_| {
        Error::Redis(format!(
            "Redis at {label} returned '{text}' for a counter, which is not a 64-bit value"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_parse_exactly() {
        assert_eq!(counter("x", "18446744073709551615").unwrap(), u64::MAX);
        assert_eq!(
            counter("x", "9007199254740993").unwrap(),
            9_007_199_254_740_993
        );
        assert!(counter("x", "1e3").is_err());
    }

    #[test]
    fn anything_but_an_array_is_an_error_naming_the_server() {
        let e = items("redis://h:1", redis::Value::Nil).unwrap_err();
        assert!(e.to_string().contains("redis://h:1"), "{e}");
        let e = field::<i64>("redis://h:1", &[redis::Value::Int(1)], 3).unwrap_err();
        assert!(e.to_string().contains("short reply"), "{e}");
    }
}
