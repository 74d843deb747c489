//! The logging options every subcommand shares: how much (`--log-level`,
//! `-v`, `-q`) and in what form (`--log-format`) yaraus writes to stderr.
//!
//! They are global options, like the connection options, with variables in
//! the same style (`YARAUS_LOG_LEVEL`, `YARAUS_LOG_FORMAT`) so that a
//! systemd unit or a container sets them once in its environment. Stdout
//! (ids, reports, tokens) is never logging and none of them changes it.

use crate::logger::{Format, Level};
use clap::{ArgAction, Args, ValueEnum};

/// The heading of the logging options in `--help`.
const LOGGING: &str = "Logging options";

#[derive(Args, Debug, Clone)]
pub struct LogArgs {
    /// Print only errors and warnings (as --log-level warn, and over it).
    #[arg(long, short, global = true, help_heading = LOGGING)]
    pub quiet: bool,

    /// More log lines: each -v one level more (info, then debug, then trace).
    ///
    /// More log lines: each -v one level more than --log-level (info: debug, then trace). For
    /// lock, whose lock taken is silent as flock's is, the first -v says what went well (the
    /// lock taken, COMMAND started, the lock released), and -vv adds the debug lines.
    #[arg(long, short, global = true, action = ArgAction::Count, conflicts_with = "quiet", help_heading = LOGGING)]
    pub verbose: u8,

    /// The most detailed log lines written on stderr. [default: info]
    ///
    /// The most detailed log lines written on stderr: error (only the error that ends yaraus),
    /// warn (what changes what yaraus does, as -q), info (events of normal operation), debug
    /// (each renewal, each attempt: what an operator looking into a problem wants), trace.
    /// [default: info]
    #[arg(long, env = "YARAUS_LOG_LEVEL", global = true, value_enum, value_name = "LEVEL", help_heading = LOGGING, hide_env_values = true, hide_short_help = true)]
    pub log_level: Option<LogLevel>,

    /// How log lines are written on stderr: text or json (one object a line).
    ///
    /// How log lines are written on stderr: text (a UTC timestamp and the message; the error
    /// that ends yaraus as one line "yaraus: ...") or json (every line, that error included, one
    /// JSON object with time, level, message and the fields known: subcommand, id (run), lock,
    /// index, sequence, client_id, node (a line about one Redis node), exit_code (the final
    /// error); a notice of lines dropped while stderr was not read has a numeric "dropped").
    #[arg(long, env = "YARAUS_LOG_FORMAT", global = true, value_enum, value_name = "FORMAT", default_value_t = LogFormat::Text, help_heading = LOGGING, hide_env_values = true, hide_short_help = true)]
    pub log_format: LogFormat,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    /// Only the error that ends yaraus.
    Error,
    /// Also what changes what yaraus does (as -q).
    Warn,
    /// Also events of normal operation.
    Info,
    /// Also each renewal and attempt.
    Debug,
    /// Everything.
    Trace,
}

impl From<LogLevel> for Level {
    fn from(level: LogLevel) -> Level {
        match level {
            LogLevel::Error => Level::Error,
            LogLevel::Warn => Level::Warn,
            LogLevel::Info => Level::Info,
            LogLevel::Debug => Level::Debug,
            LogLevel::Trace => Level::Trace,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// A UTC timestamp and the message, a line an event.
    Text,
    /// One JSON object a line.
    Json,
}

impl From<LogFormat> for Format {
    fn from(format: LogFormat) -> Format {
        match format {
            LogFormat::Text => Format::Text,
            LogFormat::Json => Format::Json,
        }
    }
}

impl LogArgs {
    /// The level: --log-level (default info), each -v one more (in lock the
    /// first -v is lock's own, [`LogArgs::lock_verbose`]), -q at most warn.
    pub fn level(&self, lock: bool) -> Level {
        let steps = if lock {
            self.verbose.saturating_sub(1)
        } else {
            self.verbose
        };
        let level = self.log_level.map_or(Level::Info, Level::from).more(steps);
        if self.quiet {
            level.min(Level::Warn)
        } else {
            level
        }
    }

    /// Whether lock is to say what went well: -v, or a level asked for by
    /// name (which is then honoured as given, not silenced after the lock
    /// is taken).
    pub fn lock_verbose(&self) -> bool {
        self.verbose > 0 || self.log_level.is_some()
    }
}
