//! One line per event on stderr, timestamped, as the Go yaraus logs.
//!
//! Logging is a process-wide concern of a command-line tool, so it is a
//! process-wide switch: `--quiet` turns off everything but errors and warnings
//! that change what the tool does.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

static QUIET: AtomicBool = AtomicBool::new(false);

/// Silences [`info`] for the rest of the process.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

fn line(msg: std::fmt::Arguments<'_>) {
    let now = humantime::format_rfc3339_millis(SystemTime::now());
    // stderr is unbuffered, and writeln! on it makes one write(2) per
    // piece: the line is formatted first and written with one call, which
    // keeps it whole when several processes share a terminal or a log file.
    let text = format!("{now} {msg}\n");
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// An event of normal operation; silenced by `--quiet`.
pub fn info(msg: std::fmt::Arguments<'_>) {
    if !QUIET.load(Ordering::Relaxed) {
        line(msg);
    }
}

/// Something the user must see even with `--quiet`.
pub fn warn(msg: std::fmt::Arguments<'_>) {
    line(msg);
}

#[macro_export]
macro_rules! info {
    ($($t:tt)*) => { $crate::log::info(format_args!($($t)*)) };
}

#[macro_export]
macro_rules! warn {
    ($($t:tt)*) => { $crate::log::warn(format_args!($($t)*)) };
}
