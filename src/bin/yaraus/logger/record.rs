//! How one log line is written: as text (a timestamp and the message, the
//! format yaraus has always had, as the Go yaraus logs) or as one JSON
//! object (time, level, message and the fields of [`super::set_context`]
//! and of the line itself).
//!
//! Text stays exactly as it was, byte for byte, so that nothing that reads it
//! today breaks: it shows neither the level nor the fields. Only a control
//! character in a message is written escaped (`\n`, `\r`, `\t`, else
//! `\u{1b}`), as JSON escapes it: a message carries what others chose (a
//! sequence or lock name, a URL), and a raw newline there would write a
//! line that reads as an event of its own, an escape sequence would drive
//! the terminal. So one event is one line, whatever its input. JSON is for a log
//! shipper (journald to Loki, Vector, Fluent Bit), which should not have to
//! parse prose to find which id, lock or node a line is about: every line is
//! one object, the fields flat beside `time`, `level` and `message`, so that
//! `jq 'select(.level == "warn")'` or a label extraction needs no nesting.
//! The three kinds of line (an event, the notice of dropped lines, the final
//! error) are written here and only here, so the two formats cannot drift.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::time::SystemTime;

pub use serde_json::Value;

/// How much a line matters; a line is written when its level is at most
/// the process's ([`super::set_level`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// What ends the process (the final error).
    Error,
    /// What the user must see even with `--quiet`: a claim lost, a server
    /// out of reach, a setting changed.
    Warn,
    /// Events of normal operation: an id leased, a command started.
    Info,
    /// What an operator looking into a problem wants: each renewal.
    Debug,
    /// Finer still.
    Trace,
}

impl Level {
    /// Every level, from the most important.
    pub const ALL: [Level; 5] = [
        Level::Error,
        Level::Warn,
        Level::Info,
        Level::Debug,
        Level::Trace,
    ];

    /// The name in a JSON line and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warn => "warn",
            Level::Info => "info",
            Level::Debug => "debug",
            Level::Trace => "trace",
        }
    }

    /// `steps` levels more detailed, at most [`Level::Trace`].
    pub fn more(self, steps: u8) -> Level {
        let at = Level::ALL.iter().position(|l| *l == self).unwrap_or(0);
        Level::ALL[(at + usize::from(steps)).min(Level::ALL.len() - 1)]
    }
}

/// How lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `TIMESTAMP message`; the final error `yaraus: message`.
    Text,
    /// One JSON object a line.
    Json,
}

/// A named value of a line: the subcommand, an id, a lock's name, a node.
pub type Field = (Cow<'static, str>, Value);

/// What the lines of one logger share: their format and the process-wide
/// fields that every JSON line carries.
#[derive(Clone, Copy)]
pub(super) struct Style {
    pub format: Format,
    /// The fields set once known (subcommand, id, client id), read at each
    /// line so that a line carries those set before it.
    pub context: fn() -> Vec<Field>,
}

impl Style {
    /// One event.
    pub fn line(
        &self,
        out: &mut String,
        now: SystemTime,
        level: Level,
        msg: std::fmt::Arguments<'_>,
        fields: &[Field],
    ) {
        match self.format {
            Format::Text => {
                let _ = write!(out, "{} ", humantime::format_rfc3339_millis(now));
                let _ = write!(OneLine(out), "{msg}");
                out.push('\n');
            }
            Format::Json => self.json(out, now, level, &msg.to_string(), fields),
        }
    }

    /// The notice that `gap` lines were dropped where it stands.
    pub fn notice(&self, out: &mut String, now: SystemTime, gap: u64) {
        let lines = if gap == 1 { "line" } else { "lines" };
        let what = format!("{gap} log {lines} dropped: stderr was not being read");
        match self.format {
            Format::Text => {
                let _ = writeln!(out, "{} ({what})", humantime::format_rfc3339_millis(now));
            }
            Format::Json => self.json(
                out,
                now,
                Level::Warn,
                &what,
                &[("dropped".into(), gap.into())],
            ),
        }
    }

    /// The error that ends the process: in text the one-line `yaraus: …`
    /// contract (no timestamp), in JSON a line of level error.
    pub fn final_error(
        &self,
        out: &mut String,
        now: SystemTime,
        msg: std::fmt::Arguments<'_>,
        fields: &[Field],
    ) {
        match self.format {
            Format::Text => {
                out.push_str("yaraus: ");
                let _ = write!(OneLine(out), "{msg}");
                out.push('\n');
            }
            Format::Json => self.json(out, now, Level::Error, &msg.to_string(), fields),
        }
    }

    /// The object, the line's own fields after the context's and in place
    /// of any of the same name: one key, one value.
    fn json(&self, out: &mut String, now: SystemTime, level: Level, msg: &str, fields: &[Field]) {
        let time = humantime::format_rfc3339_millis(now).to_string();
        out.push_str("{\"time\":");
        push_json(out, &Value::from(time));
        out.push_str(",\"level\":");
        push_json(out, &Value::from(level.name()));
        out.push_str(",\"message\":");
        push_json(out, &Value::from(msg));
        let context = (self.context)();
        let shadowed = |key: &str| fields.iter().any(|(k, _)| k == key);
        let own = context.iter().filter(|(k, _)| !shadowed(k));
        for (key, value) in own.chain(fields) {
            if matches!(key.as_ref(), "time" | "level" | "message") {
                continue;
            }
            out.push(',');
            push_json(out, &Value::from(key.as_ref()));
            out.push(':');
            push_json(out, value);
        }
        out.push_str("}\n");
    }
}

/// Appends to a text line with its control characters escaped.
struct OneLine<'a>(&'a mut String);

impl std::fmt::Write for OneLine<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let mut rest = s;
        while let Some(at) = rest.find(char::is_control) {
            self.0.push_str(&rest[..at]);
            let c = rest[at..].chars().next().unwrap_or_default();
            match c {
                '\n' => self.0.push_str("\\n"),
                '\r' => self.0.push_str("\\r"),
                '\t' => self.0.push_str("\\t"),
                c => write!(self.0, "\\u{{{:x}}}", u32::from(c))?,
            }
            rest = &rest[at + c.len_utf8()..];
        }
        self.0.push_str(rest);
        Ok(())
    }
}

fn push_json(out: &mut String, value: &Value) {
    // Serialising a Value into a String cannot fail.
    let _ = write!(out, "{value}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123)
    }

    fn context() -> Vec<Field> {
        vec![("subcommand".into(), "run".into()), ("id".into(), 7.into())]
    }

    const TEXT: Style = Style {
        format: Format::Text,
        context,
    };
    const JSON: Style = Style {
        format: Format::Json,
        context,
    };

    #[test]
    fn text_is_the_timestamp_and_the_message_and_nothing_else() {
        let mut out = String::new();
        TEXT.line(&mut out, at(), Level::Warn, format_args!("a \"b\""), &[]);
        TEXT.notice(&mut out, at(), 1);
        TEXT.notice(&mut out, at(), 3);
        TEXT.final_error(&mut out, at(), format_args!("gone"), &[]);
        assert_eq!(
            out,
            "2023-11-14T22:13:20.123Z a \"b\"\n\
             2023-11-14T22:13:20.123Z (1 log line dropped: stderr was not being read)\n\
             2023-11-14T22:13:20.123Z (3 log lines dropped: stderr was not being read)\n\
             yaraus: gone\n"
        );
    }

    #[test]
    fn a_control_character_in_a_text_message_is_escaped_and_the_rest_kept() {
        let mut out = String::new();
        let name = "x\"} 1\nforged 3\r\t\u{1b}[31m\u{85}é\\n";
        TEXT.line(
            &mut out,
            at(),
            Level::Warn,
            format_args!("seq {name} failed\n"),
            &[],
        );
        TEXT.final_error(&mut out, at(), format_args!("gone\n{name}"), &[]);
        assert_eq!(
            out,
            "2023-11-14T22:13:20.123Z seq x\"} 1\\nforged 3\\r\\t\\u{1b}[31m\\u{85}é\\n failed\\n\n\
             yaraus: gone\\nx\"} 1\\nforged 3\\r\\t\\u{1b}[31m\\u{85}é\\n\n"
        );
    }

    #[test]
    fn json_is_one_object_a_line_with_the_context_and_the_line_s_own_fields() {
        let mut out = String::new();
        let fields = [("id".into(), 8.into()), ("node".into(), "a\nb".into())];
        JSON.line(&mut out, at(), Level::Info, format_args!("x\ny"), &fields);
        JSON.notice(&mut out, at(), 4);
        JSON.final_error(&mut out, at(), format_args!("gone"), &[]);
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            lines[0],
            serde_json::json!({"time": "2023-11-14T22:13:20.123Z", "level": "info",
                "message": "x\ny", "subcommand": "run", "id": 8, "node": "a\nb"})
        );
        assert_eq!(out.lines().next().unwrap().matches("\"id\"").count(), 1);
        assert_eq!(lines[1]["level"], "warn");
        assert_eq!(lines[1]["dropped"], 4);
        assert_eq!(lines[2]["level"], "error");
        assert_eq!(lines[2]["message"], "gone");
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn more_is_bounded_by_trace() {
        assert_eq!(Level::Info.more(0), Level::Info);
        assert_eq!(Level::Info.more(1), Level::Debug);
        assert_eq!(Level::Warn.more(9), Level::Trace);
    }
}
