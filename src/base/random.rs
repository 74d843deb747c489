//! Randomness, in its two strengths: the kernel's generator for what must
//! never collide across hosts (lock tokens, sequence marks, fences), and a
//! cheap one for what only spreads things apart in time (retry jitter).

use crate::error::{Error, Result};
use std::fs::File;
use std::io::Read;
use std::sync::Mutex;
use std::time::Duration;

/// `/dev/urandom`, opened once: a token per acquisition then costs one read.
static URANDOM: Mutex<Option<File>> = Mutex::new(None);

/// Fills `buf` from the kernel's random generator.
pub fn fill_random(buf: &mut [u8]) -> std::io::Result<()> {
    let mut slot = URANDOM
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let file = match &mut *slot {
        Some(file) => file,
        empty => empty.insert(File::open("/dev/urandom")?),
    };
    file.read_exact(buf)
}

/// `N` bytes from the kernel's random generator, as lowercase hex; `what`
/// names the use in the error.
pub fn random_hex<const N: usize>(what: &str) -> Result<String> {
    let mut random = [0u8; N];
    fill_random(&mut random).map_err(|e| {
        Error::State(format!(
            "cannot read random bytes from /dev/urandom for {what}: {e}"
        ))
    })?;
    // Built in one buffer: a token is made for every attempt, and a format!
    // per hex digit was a visible part of a lock cycle's cost.
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(2 * N);
    for b in random {
        text.push(char::from(DIGITS[usize::from(b >> 4)]));
        text.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    Ok(text)
}

/// A random duration in `[0, below)`, for spreading out retries.
pub fn random_below(below: Duration) -> Duration {
    let nanos = below.as_nanos().max(1) as u64;
    Duration::from_nanos(random_u64() % nanos)
}

/// A random index below `n` (at least 1), for spreading out a fleet's
/// choices.
pub fn random_index(n: usize) -> usize {
    (random_u64() % n.max(1) as u64) as usize
}

/// 64 unpredictable bits, for timing jitter only (never for tokens): std's
/// `RandomState` is seeded from the OS once per thread and gives a new key
/// on every call.
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_values_stay_below() {
        for _ in 0..100 {
            assert!(random_below(Duration::from_millis(5)) < Duration::from_millis(5));
        }
    }

    #[test]
    fn hex_has_two_digits_a_byte() {
        let hex = random_hex::<4>("a test").unwrap();
        assert_eq!(hex.len(), 8);
        assert!(hex.bytes().all(|b| b.is_ascii_hexdigit()));
    }
}
