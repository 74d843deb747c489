//! How ids travel between Rust and the hilo scripts: as 20-digit
//! zero-padded decimal text, because ids are 64-bit and Lua's numbers are
//! not, while padded text compares, in Lua and in a sorted set, as the
//! numbers do. And what a reply that does not fit this means: another
//! program writing the sequence's keys.

use crate::error::{Error, Result};
use crate::store::reply::Answer;

/// An id as the scripts carry it: 20 digits, zero-padded.
pub fn wire(id: u64) -> String {
    format!("{id:020}")
}

/// A 20-digit text a script returned (or an empty one: absent).
pub(super) fn parse_id(answer: &Answer, i: usize) -> Result<Option<u64>> {
    let text = answer.text(i)?;
    if text.is_empty() {
        return Ok(None);
    }
    answer.counter(i).map(Some)
}

/// The error of a script's reply code this module does not know, or of an
/// id it returned out of order.
pub(super) fn garbled(label: &str, what: &str) -> Error {
    Error::Redis(format!(
        "Redis at {label} returned {what} for a hilo script; is another program writing \
         the sequence's keys?"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_travel_as_padded_text_that_sorts_as_numbers() {
        assert_eq!(wire(0), "00000000000000000000");
        assert_eq!(wire(u64::MAX), "18446744073709551615");
        let mut ids = [u64::MAX, 9_007_199_254_740_993, 10, 9, 1 << 53];
        let mut texts: Vec<String> = ids.iter().map(|&i| wire(i)).collect();
        ids.sort();
        texts.sort();
        assert_eq!(texts, ids.iter().map(|&i| wire(i)).collect::<Vec<_>>());
    }
}
