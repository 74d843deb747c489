//! What yaraus and its watchdog say to each other over their socket.
//!
//! yaraus gives [`Order`]s (start the command, here is the new deadline,
//! forward this signal, the claim is lost); the watchdog sends [`Report`]s
//! (started, stopped, exited, nothing is left). Each message is one frame: a
//! 4-byte big-endian length, then the message as JSON. The socket is a
//! stream, so a frame may arrive in pieces; [`Frames`] puts them together.
//!
//! Instants are nanoseconds on `CLOCK_BOOTTIME` ([`crate::base::boot_clock`]), which
//! both processes read alike.

use serde::{Deserialize, Serialize};

/// yaraus → watchdog.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub enum Order {
    /// Start the command (again, once the last one is [`Report::Gone`]); it
    /// must be gone by `deadline` (ns since boot)
    /// unless a later [`Order::Deadline`] moves it, and gets SIGTERM
    /// `kill_after_ns` before it.
    Spawn {
        argv: Vec<String>,
        env: Vec<(String, String)>,
        /// Variables of the watchdog's own environment the command must not
        /// inherit (yaraus's credentials).
        env_remove: Vec<String>,
        take_terminal: bool,
        deadline: u64,
        kill_after_ns: u64,
    },
    /// The claim was renewed: the new deadline.
    Deadline(u64),
    /// Forward this signal to the command's group.
    Signal(i32),
    /// yaraus is about to stop itself with the stopped command (job
    /// control): if the deadline comes before [`Order::Resume`], the command
    /// is SIGKILLed where it stands, never continued.
    Suspend,
    /// Continue the command's group (after `fg`).
    Resume,
    /// The claim is lost: SIGTERM now, SIGKILL `kill_after` later (or at the
    /// deadline, if that comes first).
    Terminate,
    /// SIGKILL everything now.
    Kill,
    /// Nothing is left to guard: exit.
    StandDown,
}

/// watchdog → yaraus.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub enum Report {
    /// The command runs, with this pid (which is also its group).
    Started(i32),
    /// The command could not be started: the OS error, and its text.
    NotStarted { errno: Option<i32>, message: String },
    /// The command was not started: its deadline minus kill-after had
    /// already passed when the order came.
    TooLate,
    /// The command was stopped by this signal.
    Stopped(i32),
    /// The command ended; the raw wait status.
    Exited(i32),
    /// The command ended but left this many processes behind (in its group
    /// or outside it); they are being stopped.
    Leftovers(usize),
    /// Kill-after passed since the SIGTERM, or the deadline came, and this
    /// many processes were still there: they got SIGKILL.
    Killing(usize),
    /// The deadline minus kill-after came without a newer deadline: the
    /// watchdog is stopping the command.
    Expiring,
    /// Nothing of the command's tree is left.
    Gone,
}

/// Largest frame accepted: an argument vector is bounded by the kernel's
/// ARG_MAX long before this.
const MAX_FRAME: usize = 64 << 20;

/// One frame holding `message`.
pub fn frame<T: Serialize>(message: &T) -> Vec<u8> {
    let body = serde_json::to_vec(message).expect("protocol messages serialize");
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// Reassembles frames from a byte stream.
#[derive(Default)]
pub struct Frames {
    buf: Vec<u8>,
}

impl Frames {
    /// Adds bytes read from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete message, if one has arrived. An error means the
    /// other side does not speak this protocol (or it was corrupted): the
    /// caller treats the link as broken.
    pub fn next_message<T: for<'de> Deserialize<'de>>(&mut self) -> Result<Option<T>, String> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
        if len > MAX_FRAME {
            return Err(format!("a frame of {len} bytes"));
        }
        if self.buf.len() < 4 + len {
            return Ok(None);
        }
        let message = serde_json::from_slice(&self.buf[4..4 + len]).map_err(|e| e.to_string());
        self.buf.drain(..4 + len);
        message.map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_survive_arriving_in_pieces() {
        let orders = [
            Order::Spawn {
                argv: vec!["sh".into(), "-c".into(), "echo ü".into()],
                env: vec![("YARAUS_WORKER_ID".into(), "7".into())],
                env_remove: vec!["REDISCLI_AUTH".into()],
                take_terminal: true,
                deadline: u64::MAX,
                kill_after_ns: 5_000_000_000,
            },
            Order::Deadline(12),
            Order::StandDown,
        ];
        let bytes: Vec<u8> = orders.iter().flat_map(frame).collect();
        let mut frames = Frames::default();
        let mut got = Vec::new();
        for byte in bytes {
            frames.push(&[byte]);
            while let Some(order) = frames.next_message::<Order>().unwrap() {
                got.push(order);
            }
        }
        assert_eq!(got, orders);
    }

    #[test]
    fn garbage_is_an_error_not_a_message() {
        let mut frames = Frames::default();
        frames.push(&[0, 0, 0, 3, b'x', b'y', b'z']);
        assert!(frames.next_message::<Report>().is_err());
        let mut frames = Frames::default();
        frames.push(&[0xff, 0xff, 0xff, 0xff]);
        assert!(frames.next_message::<Report>().is_err());
    }
}
