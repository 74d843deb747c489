//! Where a subcommand's output goes: stdout, written whole and flushed at
//! once, so that a reader sees each line as it is made. A reader may go
//! away early (`yaraus list | head`): for output it may stop reading, a
//! closed pipe is the reader's choice, not an error. Every subcommand
//! writes through here, so that they all treat a closed pipe alike.

use yaraus::error::{Error, Result};

/// Writes `bytes` to stdout and flushes it.
pub fn write_stdout(bytes: &[u8]) -> Result<()> {
    write_raw(bytes).map_err(stdout_error)
}

/// The same, for output a reader may stop reading early (`yaraus list |
/// head`): a closed pipe is not an error there.
pub fn write_stdout_unless_closed(bytes: &[u8]) -> Result<()> {
    write_raw(bytes).or_else(unless_closed)
}

/// For output that streams until stopped (`index --print`): whether the
/// reader is still there (`false`: it closed the pipe, so stop printing).
pub fn write_stdout_while_read(bytes: &[u8]) -> Result<bool> {
    match write_raw(bytes) {
        Ok(()) => Ok(true),
        Err(e) => unless_closed(e).map(|()| false),
    }
}

fn write_raw(bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes).and_then(|()| out.flush())
}

/// A failed write to stdout, unless the reader just went away.
pub fn unless_closed(e: std::io::Error) -> Result<()> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(stdout_error(e))
    }
}

fn stdout_error(e: std::io::Error) -> Error {
    Error::Output(format!("cannot write to stdout: {e}"))
}
