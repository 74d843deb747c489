//! One line per event on stderr, timestamped, as the Go yaraus logs, or one
//! JSON object per event for a log shipper; and no log call ever makes its
//! caller wait.
//!
//! Logging is a process-wide concern of a command-line tool, so its settings
//! are process-wide switches, set once at start-up by the binary: the level
//! (`--log-level`, `-v`, `--quiet`: errors and warnings only), the format
//! (`--log-format text|json`), and the context every JSON line carries
//! (the subcommand, then the id, lock or client id once known). A line may
//! add fields of its own (the node it is about): `warn!(node = label;
//! "...")`. A line above the level costs one atomic load: its message is
//! never formatted, its fields never computed.
//!
//! The writing itself is `queue.rs`'s: a bounded queue and a thread of its
//! own, so that a full stderr drops lines (counted, and told where they
//! were) instead of stalling the deadline that kills a command whose claim
//! is lost. The writer thread is started by the first line written, not at
//! start-up: a run that logs nothing (`--quiet`, `completions`) never has
//! one, and until its first line the process has no thread that logging
//! added (the watchdog is forked from a single-threaded process).
//!
//! `std::process::exit` does not wait for other threads, so the binary calls
//! [`flush`] before it: with a working stderr the last lines come out, and
//! with a blocked one the exit is late by a bounded time, not forever.

mod queue;
mod record;
mod throttle;

pub use record::{Field, Format, Level, Value};
pub use throttle::{Held, Throttle};

use queue::Logger;
use record::Style;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

/// Lines waiting for the writer. Enough for a burst of warnings while stderr
/// is slow, small enough that a stuck stderr holds little memory.
const CAPACITY: usize = 256;

/// The most detailed level written, as its place in [`Level::ALL`].
static LEVEL: AtomicU8 = AtomicU8::new(Level::Info as u8);

static FORMAT: OnceLock<Format> = OnceLock::new();

static CONTEXT: Mutex<Vec<Field>> = Mutex::new(Vec::new());

static STDERR: OnceLock<Logger> = OnceLock::new();

/// Lines up to `level` are written from now on.
pub fn set_level(level: Level) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

/// The most detailed level written.
pub fn level() -> Level {
    Level::ALL[usize::from(LEVEL.load(Ordering::Relaxed)).min(Level::ALL.len() - 1)]
}

/// Whether a line of `level` is written.
pub fn enabled(level: Level) -> bool {
    level as u8 <= LEVEL.load(Ordering::Relaxed)
}

/// Whether info lines are hidden (`--quiet`): for a warning that `--quiet`
/// also hides (advice rather than a change in what the tool does).
pub fn is_quiet() -> bool {
    !enabled(Level::Info)
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
    match context.iter_mut().find(|(k, _)| *k == key) {
        Some(field) => field.1 = value,
        None => context.push((key, value)),
    }
}

fn context() -> Vec<Field> {
    CONTEXT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Writes one line of `level` with the line's own `fields`, if the level
/// is on; never waits. The macros ([`info!`](crate::info) and the others)
/// check the level before they format anything.
pub fn log(level: Level, msg: std::fmt::Arguments<'_>, fields: &[Field]) {
    if enabled(level) {
        stderr().line(level, msg, fields);
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
    stderr().final_error(msg, &[("exit_code", exit_code.into())]);
    flush(timeout);
}

/// Waits until every line logged so far is written, or `timeout` has passed;
/// true if they all were. A process that never logged has nothing to wait
/// for, and no writer thread is started for it.
pub fn flush(timeout: Duration) -> bool {
    STDERR.get().is_none_or(|logger| logger.flush(timeout))
}

/// How many lines were dropped because stderr was not keeping up.
pub fn dropped() -> u64 {
    STDERR.get().map_or(0, Logger::dropped)
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

/// The macros' common body: the level checked first, then the fields
/// computed and the message formatted.
#[doc(hidden)]
#[macro_export]
macro_rules! __log {
    ($level:expr, [$($key:ident = $value:expr),*], $($t:tt)*) => {
        if $crate::log::enabled($level) {
            $crate::log::log(
                $level,
                format_args!($($t)*),
                &[$((stringify!($key), $crate::log::Value::from($value))),*],
            )
        }
    };
}

/// Something the user must see even with `--quiet`; `key = value, ...;`
/// before the format adds fields to the JSON line.
#[macro_export]
macro_rules! warn {
    ($($key:ident = $value:expr),+ ; $($t:tt)*) => {
        $crate::__log!($crate::log::Level::Warn, [$($key = $value),+], $($t)*)
    };
    ($($t:tt)*) => { $crate::__log!($crate::log::Level::Warn, [], $($t)*) };
}

/// An event of normal operation; silenced by `--quiet`.
#[macro_export]
macro_rules! info {
    ($($key:ident = $value:expr),+ ; $($t:tt)*) => {
        $crate::__log!($crate::log::Level::Info, [$($key = $value),+], $($t)*)
    };
    ($($t:tt)*) => { $crate::__log!($crate::log::Level::Info, [], $($t)*) };
}

/// What an operator looking into a problem wants (`--log-level debug`, `-v`).
#[macro_export]
macro_rules! debug {
    ($($key:ident = $value:expr),+ ; $($t:tt)*) => {
        $crate::__log!($crate::log::Level::Debug, [$($key = $value),+], $($t)*)
    };
    ($($t:tt)*) => { $crate::__log!($crate::log::Level::Debug, [], $($t)*) };
}
