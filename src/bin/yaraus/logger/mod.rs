//! The binary's logger: one line per event on stderr, timestamped, as the
//! Go yaraus logs, or one JSON object per event for a log shipper; and no
//! log call ever makes its caller wait.
//!
//! The library logs through the `log` facade and installs nothing; this is
//! the [`log::Log`] the binary installs at start-up ([`install`]). Its
//! settings are process-wide, set once by the binary: the level
//! (`--log-level`, `-v`, `--quiet`: errors and warnings only, which is
//! `log`'s own max level, so a line above it costs one atomic load and is
//! never formatted), the format (`--log-format text|json`), and the context
//! every JSON line carries (the subcommand, then the id, lock or client id
//! once known). A line's own key-values (`log::warn!(node = label; "...")`)
//! become fields of its JSON object. Only yaraus's own lines are written:
//! the libraries below (redis-rs) log through the same facade, and their
//! debug lines are not what `-v` promises.
//!
//! The writing itself is `queue.rs`'s: a bounded queue and a thread of its
//! own, so that a full stderr drops lines (counted, and told where they
//! were) instead of stalling the deadline that kills a command whose claim
//! is lost. The writer thread is started by the first line written, not at
//! start-up: a run that logs nothing (`--quiet`, `completions`) never has
//! one, and until its first line the process has no thread that logging
//! added (the watchdog is forked from a single-threaded process, and
//! logs nothing after the fork: it is never a writer of this queue).
//!
//! `std::process::exit` does not wait for other threads, so the binary calls
//! [`flush`] before it: with a working stderr the last lines come out, and
//! with a blocked one the exit is late by a bounded time, not forever.

mod queue;
mod record;

pub use record::{Field, Format, Level, Value};

use queue::Logger;
use record::Style;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

/// Lines waiting for the writer. Enough for a burst of warnings while stderr
/// is slow, small enough that a stuck stderr holds little memory.
const CAPACITY: usize = 256;

static FORMAT: OnceLock<Format> = OnceLock::new();

static CONTEXT: Mutex<Vec<Field>> = Mutex::new(Vec::new());

static STDERR: OnceLock<Logger> = OnceLock::new();

/// The logger `log`'s macros reach.
static FACADE: Facade = Facade;

/// Installs the logger, lines up to `level` written (later calls change
/// only the level).
pub fn install(level: Level) {
    let _ = log::set_logger(&FACADE);
    set_level(level);
}

/// Lines up to `level` are written from now on.
pub fn set_level(level: Level) {
    log::set_max_level(filter(level));
}

/// The most detailed level written.
pub fn level() -> Level {
    Level::ALL
        .into_iter()
        .rev()
        .find(|l| filter(*l) <= log::max_level())
        .unwrap_or(Level::Error)
}

/// Whether info lines are hidden (`--quiet`): for a warning that `--quiet`
/// also hides (advice rather than a change in what the tool does).
pub fn is_quiet() -> bool {
    !log::log_enabled!(log::Level::Info)
}

/// The format of every line; once, before the first line (later calls and
/// calls after a line was written change nothing: a stream has one format).
pub fn set_format(format: Format) {
    let _ = FORMAT.set(format);
}

/// Sets the process-wide field `key` (replacing its value if it has one),
/// carried by every JSON line from now on: the subcommand at start, an id
/// or a lock's name once it is known.
pub fn set_context(key: &'static str, value: impl Into<Value>) {
    let value = value.into();
    let mut context = CONTEXT.lock().unwrap_or_else(PoisonError::into_inner);
    match context.iter_mut().find(|(k, _)| k == key) {
        Some(field) => field.1 = value,
        None => context.push((key.into(), value)),
    }
}

fn context() -> Vec<Field> {
    CONTEXT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

fn filter(level: Level) -> log::LevelFilter {
    match level {
        Level::Error => log::LevelFilter::Error,
        Level::Warn => log::LevelFilter::Warn,
        Level::Info => log::LevelFilter::Info,
        Level::Debug => log::LevelFilter::Debug,
        Level::Trace => log::LevelFilter::Trace,
    }
}

fn level_of(level: log::Level) -> Level {
    match level {
        log::Level::Error => Level::Error,
        log::Level::Warn => Level::Warn,
        log::Level::Info => Level::Info,
        log::Level::Debug => Level::Debug,
        log::Level::Trace => Level::Trace,
    }
}

/// The `log::Log` of the binary: yaraus's own lines (library and binary,
/// both `yaraus::…` targets), into the queue.
struct Facade;

impl log::Log for Facade {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
            && metadata.target().split("::").next() == Some("yaraus")
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let mut fields = Fields(Vec::new());
        let _ = record.key_values().visit(&mut fields);
        stderr().line(level_of(record.level()), *record.args(), &fields.0);
    }

    /// Waits a little for the lines queued so far (a stop of the process
    /// is about to stop the writer thread too).
    fn flush(&self) {
        flush(Duration::from_millis(100));
    }
}

/// A line's key-values, as fields of its JSON object.
struct Fields(Vec<Field>);

impl<'kvs> log::kv::VisitSource<'kvs> for Fields {
    fn visit_pair(
        &mut self,
        key: log::kv::Key<'kvs>,
        value: log::kv::Value<'kvs>,
    ) -> Result<(), log::kv::Error> {
        let value = match value.to_i64() {
            Some(n) => Value::from(n),
            None => Value::from(value.to_string()),
        };
        self.0.push((key.as_str().to_string().into(), value));
        Ok(())
    }
}

/// How long the exit waits for queued lines: long enough for a working
/// stderr, short enough that a blocked one costs only a late exit.
pub const EXIT_FLUSH: Duration = Duration::from_secs(1);

/// The final error: in text `yaraus: …` without a timestamp (the one-line
/// contract of every failure), in JSON a line of level error with the
/// `exit_code`; queued like any line and then flushed within `timeout`: a
/// blocked stderr delays the exit by that much, never forever.
pub fn final_error(msg: std::fmt::Arguments<'_>, exit_code: i32, timeout: Duration) {
    stderr().final_error(msg, &[("exit_code".into(), exit_code.into())]);
    flush(timeout);
}

/// Waits until every line logged so far is written, or `timeout` has passed;
/// true if they all were. A process that never logged has nothing to wait
/// for, and no writer thread is started for it.
pub fn flush(timeout: Duration) -> bool {
    STDERR.get().is_none_or(|logger| logger.flush(timeout))
}

fn stderr() -> &'static Logger {
    // Stderr is unbuffered: each line is one write_all of the whole line,
    // which keeps it whole when processes share a terminal or a log file.
    STDERR.get_or_init(|| {
        let style = Style {
            format: *FORMAT.get_or_init(|| Format::Text),
            context,
        };
        Logger::new(std::io::stderr(), CAPACITY, style)
    })
}
