//! The bounded queue between a caller and stderr, and the thread that
//! writes it out: a log call never waits for stderr.
//!
//! A write to stderr can wait without end: a pipe to a log shipper that has
//! stopped reading fills up, and a terminal paused with Ctrl-S takes nothing
//! more. yaraus runs everything on one runtime thread, and the keeper logs
//! from that thread when a renewal fails. A write blocked there would hold
//! back the local deadline and the kill that follows it, and the command
//! would go on running on a claim that is no longer its own. A lost log line
//! is the lesser harm, so a caller only formats its line and offers it to a
//! bounded queue, and a thread of its own writes the queue out. When the
//! queue is full the line is dropped and counted; the next line that gets in
//! carries a notice of how many were lost (in JSON, a line of its own with a
//! numeric `dropped`), so the gap shows where it is.
//!
//! This is why yaraus keeps its own logger rather than `tracing` with
//! `tracing-appender`: the lossy non-blocking writer there drops lines too,
//! but only counts them in a number nobody reads; the reader of the stream
//! would never learn that, or where, lines are missing.

use super::record::{Field, Level, Style};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

/// A bounded queue of lines and the thread that writes them to a sink.
pub(super) struct Logger {
    queue: SyncSender<String>,
    style: Style,
    /// Lines that got into the queue, to know what [`Logger::flush`] waits for.
    sent: AtomicU64,
    /// Lines dropped since the last line that got in: the next one says so.
    gap: AtomicU64,
    /// Lines dropped in all.
    dropped: AtomicU64,
    written: Arc<Written>,
}

/// How many queued lines the writer has dealt with, for [`Logger::flush`] to
/// sleep on.
#[derive(Default)]
struct Written {
    count: Mutex<u64>,
    changed: Condvar,
}

impl Logger {
    pub fn new(sink: impl Write + Send + 'static, capacity: usize, style: Style) -> Logger {
        let (queue, lines) = std::sync::mpsc::sync_channel(capacity);
        let written = Arc::new(Written::default());
        let progress = Arc::clone(&written);
        // Without the thread the queue is disconnected and every line is
        // dropped and counted: the tool works on, only without its log.
        let _ = std::thread::Builder::new()
            .name("yaraus-log".into())
            .spawn(move || write_out(sink, lines, &progress));
        Logger {
            queue,
            style,
            sent: AtomicU64::new(0),
            gap: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            written,
        }
    }

    /// Queues one line, or drops it if the queue is full; never waits.
    pub fn line(&self, level: Level, msg: std::fmt::Arguments<'_>, fields: &[Field]) {
        let now = SystemTime::now();
        let gap = self.gap.swap(0, Ordering::AcqRel);
        let mut text = String::new();
        if gap > 0 {
            // In the same write as the line, so that nothing comes between
            // the notice and the place of the gap.
            self.style.notice(&mut text, now, gap);
        }
        self.style.line(&mut text, now, level, msg, fields);
        self.queue(text, gap);
    }

    /// Queues the final error, or drops and counts it.
    pub fn final_error(&self, msg: std::fmt::Arguments<'_>, fields: &[Field]) {
        let mut text = String::new();
        self.style
            .final_error(&mut text, SystemTime::now(), msg, fields);
        self.queue(text, 0);
    }

    /// Queues `text`, or drops it and counts it into the next notice, with
    /// the `carried` earlier drops whose notice it held.
    fn queue(&self, text: String, carried: u64) {
        if !self.offer(text) {
            self.gap.fetch_add(carried + 1, Ordering::AcqRel);
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn offer(&self, text: String) -> bool {
        let queued = self.queue.try_send(text).is_ok();
        if queued {
            self.sent.fetch_add(1, Ordering::AcqRel);
        }
        queued
    }

    /// Waits until every line queued so far is written, or `timeout`;
    /// true if they all were.
    pub fn flush(&self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        self.tell_the_gap(end);
        let target = self.sent.load(Ordering::Acquire);
        let count = self.written();
        let (count, _) = self
            .written
            .changed
            .wait_timeout_while(
                count,
                end.saturating_duration_since(Instant::now()),
                |count| *count < target,
            )
            .unwrap_or_else(PoisonError::into_inner);
        *count >= target
    }

    /// Lines dropped at the end have no next line to report them: the
    /// notice goes out on its own, as soon as the writer makes room for it
    /// before `end` (at exit the queue is often still full of the lines
    /// before the gap). Without room by then, it stays counted.
    fn tell_the_gap(&self, end: Instant) {
        let gap = self.gap.swap(0, Ordering::AcqRel);
        if gap == 0 {
            return;
        }
        let mut text = String::new();
        self.style.notice(&mut text, SystemTime::now(), gap);
        loop {
            // Read before the attempt, so that room made just after it is
            // not waited for in vain.
            let seen = *self.written();
            match self.queue.try_send(text) {
                Ok(()) => {
                    self.sent.fetch_add(1, Ordering::AcqRel);
                    return;
                }
                Err(TrySendError::Full(back)) => text = back,
                Err(TrySendError::Disconnected(_)) => break,
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let _ = self
                .written
                .changed
                .wait_timeout_while(self.written(), left, |count| *count == seen);
        }
        self.gap.fetch_add(gap, Ordering::AcqRel);
    }

    fn written(&self) -> std::sync::MutexGuard<'_, u64> {
        self.written
            .count
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Lines dropped in all (the tests' measure of a full queue).
    #[cfg(test)]
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// The writer thread: one write per queued entry, in order, until the logger
/// is gone. A failed write is counted as dealt with: there is nobody to tell,
/// and a flush must not wait for a line that will never be written.
fn write_out(mut sink: impl Write, lines: Receiver<String>, written: &Written) {
    for text in lines {
        let _ = sink.write_all(text.as_bytes());
        let mut count = written.count.lock().unwrap_or_else(PoisonError::into_inner);
        *count += 1;
        written.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::Format;
    use super::*;
    use nix::errno::Errno;
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    use std::fs::File;
    use std::io::Read;
    use std::os::fd::OwnedFd;
    use std::sync::mpsc::{self, RecvTimeoutError};
    use std::thread::{self, JoinHandle};

    /// How long a step may take before the test calls it blocked: far more
    /// than any of them needs, so that only a real block trips it.
    const WATCHDOG: Duration = Duration::from_secs(20);

    /// More lines than the pipe and the queue hold together.
    const FLOOD: usize = 10_000;

    /// What every flooded line carries after its number, so that a line cut
    /// short or run together with another shows.
    const PAD: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

    /// The style of the text tests; CAPACITY is the logger's own.
    const TEXT: Style = Style {
        format: Format::Text,
        context: Vec::new,
    };
    const CAPACITY: usize = super::super::CAPACITY;

    /// A pipe whose write end is already full, as a log shipper's pipe is
    /// once it stops reading. The filler is whole lines of `#`. Close on exec,
    /// because other tests of the crate start processes that would otherwise
    /// keep the write end open and the reader from ever seeing its end.
    fn full_pipe() -> (OwnedFd, File) {
        let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
        fcntl(&write, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).unwrap();
        // No larger than PIPE_BUF, so that a write goes in whole or not at all.
        let mut filler = vec![b'#'; 4096];
        filler[4095] = b'\n';
        loop {
            match nix::unistd::write(&write, &filler) {
                Ok(n) => assert_eq!(n, filler.len()),
                Err(Errno::EAGAIN) => break,
                Err(e) => panic!("filling the pipe: {e}"),
            }
        }
        fcntl(&write, FcntlArg::F_SETFL(OFlag::empty())).unwrap();
        (read, File::from(write))
    }

    /// Runs `f` on a thread of its own and fails the test if it has not
    /// returned within [`WATCHDOG`], instead of hanging with it.
    fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (done, finished) = mpsc::channel();
        thread::spawn(move || {
            let _ = done.send(f());
        });
        match finished.recv_timeout(WATCHDOG) {
            Ok(value) => value,
            Err(RecvTimeoutError::Timeout) => panic!("{what} blocked"),
            Err(RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
        }
    }

    /// Logs [`FLOOD`] lines, numbered, the way `warn!` does.
    fn flood(logger: &Arc<Logger>) {
        let logger = Arc::clone(logger);
        within("logging to a full pipe", move || {
            for i in 0..FLOOD {
                logger.line(Level::Warn, format_args!("line {i} {PAD}"), &[]);
            }
        });
    }

    /// [`Logger::flush`], failing the test if it overstays its own timeout.
    fn flush(logger: &Arc<Logger>, timeout: Duration) -> bool {
        let logger = Arc::clone(logger);
        within("flushing", move || logger.flush(timeout))
    }

    /// Reads the pipe to its end on a thread of its own.
    fn drain(read: OwnedFd) -> JoinHandle<String> {
        thread::spawn(move || {
            let mut out = String::new();
            File::from(read).read_to_string(&mut out).unwrap();
            out
        })
    }

    /// The message of each line, the filler left out; panics on a line that
    /// does not start with a timestamp.
    fn messages(out: &str) -> Vec<&str> {
        out.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let (stamp, message) = l.split_once(' ').unwrap();
                assert!(
                    humantime::parse_rfc3339(stamp).is_ok(),
                    "no timestamp: {l:?}"
                );
                message
            })
            .collect()
    }

    #[test]
    fn a_full_pipe_never_blocks_the_caller_and_lines_are_dropped_and_counted() {
        let (read, write) = full_pipe();
        let logger = Arc::new(Logger::new(write, CAPACITY, TEXT));
        flood(&logger);
        assert!(logger.dropped() > 0, "nothing dropped");
        // The writer is still stuck in its write; closing the read end ends
        // it with EPIPE.
        drop(read);
    }

    #[test]
    fn once_drained_the_loss_is_told_where_it_happened_and_lines_are_whole_and_in_order() {
        let (read, write) = full_pipe();
        let logger = Arc::new(Logger::new(write, CAPACITY, TEXT));
        flood(&logger);
        let reader = drain(read);
        assert!(
            flush(&logger, WATCHDOG / 2),
            "the drained pipe was not written"
        );
        logger.line(Level::Info, format_args!("after the drain"), &[]);
        let dropped = logger.dropped();
        drop(logger);
        let out = reader.join().unwrap();
        let messages = messages(&out);

        // Every line that got in, whole and in its place, and a notice for
        // every run of lines lost, where they would have been: when the
        // writer is scheduled late, it makes room for one more line after
        // some were already lost, so there may be more than one run.
        let (after, flooded) = messages.split_last().unwrap();
        assert_eq!(*after, "after the drain");
        let mut next = 0;
        let mut told = 0;
        for message in flooded {
            if let Some(lost) = message
                .strip_prefix('(')
                .and_then(|m| m.strip_suffix(" log lines dropped: stderr was not being read)"))
            {
                let lost: u64 = lost.parse().unwrap();
                next += lost;
                told += lost;
            } else {
                assert_eq!(*message, format!("line {next} {PAD}"), "{messages:?}");
                next += 1;
            }
        }
        assert_eq!(next, FLOOD as u64, "{messages:?}");
        assert!(dropped > 0);
        assert_eq!(told, dropped);
        // The last lines of the flood were lost: the next line says so first.
        assert!(
            flooded
                .last()
                .unwrap()
                .ends_with("dropped: stderr was not being read)")
        );
    }

    #[test]
    fn flush_fails_while_the_pipe_is_blocked_and_succeeds_once_drained() {
        let (read, write) = full_pipe();
        let logger = Arc::new(Logger::new(write, CAPACITY, TEXT));
        let last_words = Arc::clone(&logger);
        within("logging to a full pipe", move || {
            last_words.line(Level::Warn, format_args!("the last words"), &[]);
        });
        assert!(
            !flush(&logger, Duration::from_millis(100)),
            "flushed into a full pipe"
        );
        let reader = drain(read);
        assert!(flush(&logger, WATCHDOG / 2), "not flushed once drained");
        drop(logger);
        let out = reader.join().unwrap();
        assert_eq!(messages(&out), ["the last words"]);
    }

    /// The same flood in JSON: every line the pipe gets is one object, the
    /// notices among them with a numeric `dropped`, and what they tell adds
    /// up to what was dropped.
    #[test]
    fn in_json_every_line_parses_and_the_notices_count_the_dropped_lines() {
        let json = Style {
            format: Format::Json,
            context: || vec![("subcommand".into(), "run".into())],
        };
        let (read, write) = full_pipe();
        let logger = Arc::new(Logger::new(write, CAPACITY, json));
        flood(&logger);
        let reader = drain(read);
        assert!(flush(&logger, WATCHDOG / 2), "not flushed once drained");
        let dropped = logger.dropped();
        drop(logger);
        let out = reader.join().unwrap();
        let (mut next, mut told) = (0, 0);
        for line in out.lines().filter(|l| !l.starts_with('#')) {
            let object: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
            assert_eq!(object["subcommand"], "run", "{line}");
            assert!(humantime::parse_rfc3339(object["time"].as_str().unwrap()).is_ok());
            if let Some(lost) = object["dropped"].as_u64() {
                assert_eq!(object["level"], "warn", "{line}");
                next += lost;
                told += lost;
            } else {
                assert_eq!(object["message"], format!("line {next} {PAD}"), "{line}");
                next += 1;
            }
        }
        assert!(dropped > 0, "nothing dropped");
        assert_eq!(told, dropped);
        assert_eq!(next, FLOOD as u64);
    }

    /// At exit the queue is still full of the lines before the last gap:
    /// the flush waits for room to tell it, as long as its timeout allows,
    /// instead of losing the notice with the gap.
    #[test]
    fn at_exit_the_notice_of_the_last_lost_lines_waits_for_room() {
        let (read, write) = full_pipe();
        let logger = Arc::new(Logger::new(write, CAPACITY, TEXT));
        flood(&logger);
        // The writer may have taken its first line (to block in writing it)
        // only after the flood: until it has, the queue would have room for
        // the notice. It has once more lines got in than the queue holds.
        let stuck = Arc::clone(&logger);
        within("filling the queue", move || {
            while stuck.sent.load(Ordering::Acquire) <= CAPACITY as u64 {
                stuck.line(Level::Warn, format_args!("more"), &[]);
            }
            stuck.line(Level::Warn, format_args!("lost"), &[]);
        });
        let dropped = logger.dropped();
        assert!(dropped > 0, "nothing dropped");
        // Started while the pipe is still blocked and the queue full.
        let flushing = {
            let logger = Arc::clone(&logger);
            thread::spawn(move || logger.flush(WATCHDOG / 2))
        };
        let reader = drain(read);
        assert!(flushing.join().unwrap(), "not flushed once drained");
        drop(logger);
        let out = reader.join().unwrap();
        let messages = messages(&out);
        let last = messages.last().unwrap();
        assert!(
            last.ends_with("log lines dropped: stderr was not being read)"),
            "the last gap untold: {last:?}"
        );
        let told: u64 = messages
            .iter()
            .filter_map(|m| m.strip_prefix('('))
            .filter_map(|m| m.split(' ').next()?.parse::<u64>().ok())
            .sum();
        assert_eq!(told, dropped);
    }
}
