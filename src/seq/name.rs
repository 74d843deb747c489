//! Sequence names and where their counters live. A name is checked once,
//! here, by everything that takes one (the command line, `seq serve`'s
//! commands): it ends up in log lines, `INFO`, metric labels and errors.

use crate::error::{Error, Result};

/// Where the sequences of a namespace live: one counter per name,
/// `NAMESPACE:seq:NAME`, on every node.
#[derive(Clone, Debug)]
pub struct SeqKeys {
    namespace: String,
}

impl SeqKeys {
    pub fn new(namespace: &str) -> SeqKeys {
        SeqKeys {
            namespace: namespace.to_string(),
        }
    }

    /// The namespace the keys are in.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The counter key of sequence `name`, which must pass [`check_name`].
    pub fn counter(&self, name: &str) -> Result<String> {
        check_name(name)?;
        Ok(format!("{}:seq:{name}", self.namespace))
    }
}

/// Longest sequence name, in bytes.
pub const MAX_NAME: usize = 512;

/// Whether `name` may name a sequence: 1 to [`MAX_NAME`] bytes of text
/// without a control character (Unicode's Cc: U+0000–U+001F,
/// U+007F–U+009F). A name ends up in log lines, `INFO` lines, metric
/// labels and error messages, where a line break or an escape sequence
/// would forge or garble what an operator reads (docs/seq.md, "Sequence
/// names"). The error names the problem, never the name.
pub fn check_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::Usage("the sequence name must not be empty".into()));
    }
    if name.len() > MAX_NAME {
        return Err(Error::Usage(format!(
            "the sequence name is longer than {MAX_NAME} bytes"
        )));
    }
    match name.char_indices().find(|(_, c)| c.is_control()) {
        Some((at, c)) => Err(Error::Usage(format!(
            "the sequence name must not contain control characters (U+0000-U+001F, \
             U+007F-U+009F): U+{:04X} at byte {at}",
            u32::from(c)
        ))),
        None => Ok(()),
    }
}
