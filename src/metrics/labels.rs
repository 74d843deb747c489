//! Label values as the exposition formats want them, and how many
//! sequences get series of their own.
//!
//! Escaping: `prometheus-client` writes a label value between its quotes
//! exactly as given, so a sequence name with a `"` made `/metrics`
//! unparsable (every scrape failed until a restart), and one with a newline
//! wrote lines of its own choosing into the page. A label here is a
//! [`LabelValue`], which escapes `\`, `"` and a newline as both the
//! Prometheus text format and OpenMetrics define (the same three escapes in
//! both), so any string, a client's sequence name or a shard's address,
//! stays inside its quotes. Nothing else needs escaping there: both formats
//! take any other UTF-8 between the quotes as it is.
//!
//! The bound: a client names sequences, and each name with series of its
//! own is three series for as long as they exist. So a name's series are
//! removed when its sequencer retires (it was idle, and forgets its counters
//! too), and at most [`MAX_SEQUENCE_SERIES`] names have series at once; the
//! rounds of names beyond them are counted under `sequence=""`, a name that
//! cannot collide with a real one (seq serve refuses the empty name). A name
//! gets series of its own at its first round while there is room, and
//! keeps them until it retires, so its counts never move between series
//! while it is served. The bound is well below seq serve's 10,000 sequences:
//! a scrape stays small, and a dashboard of a thousand lines is already
//! more than anyone reads one by one.

use prometheus_client::encoding::{EncodeLabelValue, LabelValueEncoder};
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::{Mutex, PoisonError};

/// Most sequences with series of their own at once.
pub const MAX_SEQUENCE_SERIES: usize = 1_000;

/// A label value, escaped when encoded.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LabelValue(String);

impl LabelValue {
    pub fn new(value: &str) -> LabelValue {
        LabelValue(value.to_string())
    }
}

impl EncodeLabelValue for LabelValue {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> std::fmt::Result {
        encoder.write_str(&escape_label_value(&self.0))
    }
}

/// `value` as it goes between a label's quotes in both text formats:
/// `\`, `"` and a newline escaped, everything else as it is. Also for the
/// pages written by hand (`yaraus stats --format prometheus`).
pub fn escape_label_value(value: &str) -> Cow<'_, str> {
    if !value.contains(['\\', '"', '\n']) {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len() + 8);
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The labels of a per-sequence or per-shard series: one name, one value.
pub type Labels = [(&'static str, LabelValue); 1];

/// The names that have series of their own now.
#[derive(Default)]
pub struct Sequences(Mutex<HashSet<String>>);

impl Sequences {
    fn names(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The labels `name`'s rounds are counted under: its own while it has
    /// series or there is room for them, the empty name beyond the bound.
    pub fn labels(&self, name: &str) -> Labels {
        let mut names = self.names();
        let own = names.contains(name)
            || (names.len() < MAX_SEQUENCE_SERIES && names.insert(name.to_string()));
        [("sequence", LabelValue::new(if own { name } else { "" }))]
    }

    /// `name` retired: the labels of its series to remove, if it had any.
    pub fn forget(&self, name: &str) -> Option<Labels> {
        self.names()
            .remove(name)
            .then(|| [("sequence", LabelValue::new(name))])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::encoding::text::encode;
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::family::Family;
    use prometheus_client::registry::Registry;

    fn rendered(value: &str) -> String {
        let family = Family::<Labels, Counter>::default();
        family
            .get_or_create(&[("sequence", LabelValue::new(value))])
            .inc();
        let mut registry = Registry::default();
        registry.register("rounds", "Rounds", family);
        let mut out = String::new();
        encode(&mut out, &registry).unwrap();
        out.lines()
            .find(|l| l.starts_with("rounds_total"))
            .unwrap()
            .to_string()
    }

    #[test]
    fn quotes_backslashes_and_newlines_are_escaped_and_the_rest_kept() {
        assert_eq!(rendered("orders"), r#"rounds_total{sequence="orders"} 1"#);
        assert_eq!(
            rendered("q\"u\\o\nte\r\tÄ"),
            "rounds_total{sequence=\"q\\\"u\\\\o\\nte\r\tÄ\"} 1"
        );
        let forged = "x\"} 1\nfake{a=\"1\"} 3\n# EOF\n#";
        assert_eq!(
            rendered(forged),
            r#"rounds_total{sequence="x\"} 1\nfake{a=\"1\"} 3\n# EOF\n#"} 1"#
        );
    }

    #[test]
    fn names_beyond_the_bound_share_the_empty_name_until_one_retires() {
        let sequences = Sequences::default();
        let value = |labels: Labels| labels[0].1.0.clone();
        for n in 0..MAX_SEQUENCE_SERIES {
            assert_eq!(value(sequences.labels(&n.to_string())), n.to_string());
        }
        assert_eq!(value(sequences.labels("late")), "");
        // A name with series keeps them.
        assert_eq!(value(sequences.labels("7")), "7");
        assert!(sequences.forget("late").is_none());
        assert_eq!(value(sequences.forget("7").unwrap()), "7");
        assert_eq!(value(sequences.labels("late")), "late");
        assert_eq!(value(sequences.labels("later")), "");
    }
}
