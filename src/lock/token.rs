//! The lock token: the value stored at the lock's key, which proves that a
//! holder is the one who took the lock.
//!
//! It must be unique across every holder of every lock, ever, so it is built
//! around 128 bits from the kernel's random generator (`/dev/urandom`, as
//! antirez's Redlock text suggests): no clock, pid or counter can collide
//! across hosts the way they can. Around those bits it carries who took the
//! lock and when, in plain text, so that `yaraus lock --info` can say which
//! host and process hold a lock and for how long:
//!
//! ```text
//! yaraus:<32 hex digits>:<unix ms at acquisition>:<pid>:<hostname>
//! ```
//!
//! Nothing reads those fields to decide anything: tokens are compared byte for
//! byte, and the token of another tool (redis-py's uuid, redsync's base64) is
//! just as valid a holder, shown as "foreign" by `--info`. Every character is
//! safe in a shell word and an environment variable.

use crate::base::random::random_hex;
use crate::base::setting::Setting;
use crate::error::{Error, Result};
use std::sync::LazyLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const PREFIX: &str = "yaraus";
/// Random bytes per token: 128 bits.
const RANDOM_BYTES: usize = 16;
const MAX_HOST: usize = 64;

/// This host's name as it goes into tokens, computed once.
static HOST: LazyLock<String> = LazyLock::new(|| {
    let host = hostname::get()
        .map(|h| sanitize_host(&h.to_string_lossy()))
        .unwrap_or_default();
    if host.is_empty() {
        "localhost".into()
    } else {
        host
    }
});

/// This host's name as yaraus writes it into tokens and client ids: ASCII
/// letters, digits, `.`, `-`, `_`, at most a few dozen of them.
pub fn host() -> &'static str {
    &HOST
}

/// A lock token.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Token(String);

/// What a yaraus token says about its holder.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Holder {
    pub host: String,
    pub pid: u32,
    /// Wall-clock time of the acquisition, on the holder's clock, Unix ms.
    pub acquired_unix_ms: u64,
}

impl Token {
    /// A fresh token for this process.
    pub fn generate() -> Result<Token> {
        let random = random_hex::<RANDOM_BYTES>("the lock token")?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis();
        let mut text = String::with_capacity(PREFIX.len() + random.len() + 40 + HOST.len());
        text.push_str(PREFIX);
        text.push(':');
        text.push_str(&random);
        use std::fmt::Write;
        let _ = write!(text, ":{now}:{}:{}", std::process::id(), *HOST);
        Ok(Token(text))
    }

    /// A token the user passes back (`--token`), used as is.
    pub fn from_user(text: &str) -> Result<Token> {
        if text.is_empty() {
            return Err(Error::Usage(format!("the {} is empty", Setting::Token)));
        }
        Ok(Token(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The holder a yaraus token names; `None` for any other value.
    pub fn holder_of(value: &[u8]) -> Option<Holder> {
        let text = std::str::from_utf8(value).ok()?;
        let mut parts = text.splitn(5, ':');
        if parts.next()? != PREFIX {
            return None;
        }
        let random = parts.next()?;
        if random.len() != RANDOM_BYTES * 2 || !random.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let acquired_unix_ms = parts.next()?.parse().ok()?;
        let pid = parts.next()?.parse().ok()?;
        let host = parts.next()?.to_string();
        Some(Holder {
            host,
            pid,
            acquired_unix_ms,
        })
    }
}

impl Holder {
    /// How long ago the lock was taken, by this host's clock (clocks of
    /// different hosts may disagree; never negative).
    pub fn age(&self) -> Duration {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as u64;
        Duration::from_millis(now.saturating_sub(self.acquired_unix_ms))
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pid {} on {}, taken {} ago",
            self.pid,
            self.host,
            crate::base::duration::shown(Duration::from_secs(self.age().as_secs()))
        )
    }
}

/// Describes whoever holds a lock, from the value at its key.
pub fn describe_holder(value: &[u8]) -> String {
    match Token::holder_of(value) {
        Some(holder) => format!("yaraus ({holder})"),
        None => {
            let shown = String::from_utf8_lossy(&value[..value.len().min(48)]).into_owned();
            let more = if value.len() > 48 { "…" } else { "" };
            format!("another client (value '{shown}{more}')")
        }
    }
}

/// The token's display is the token itself: it is what the user passes back.
impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Debug output never shows the random part: a token in a log line or a bug
/// report must not let someone release the lock.
impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Token(…{} bytes)", self.0.len())
    }
}

fn sanitize_host(host: &str) -> String {
    host.chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        .take(MAX_HOST)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_unique_and_describe_their_holder() {
        let a = Token::generate().unwrap();
        let b = Token::generate().unwrap();
        assert_ne!(a, b);
        let holder = Token::holder_of(a.as_str().as_bytes()).expect("our own format");
        assert_eq!(holder.pid, std::process::id());
        assert!(holder.age() < Duration::from_secs(60));
        assert!(
            a.as_str()
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || b":.-_".contains(&c)),
            "{a}"
        );
    }

    #[test]
    fn foreign_values_have_no_holder() {
        for v in [
            &b"x"[..],
            b"6b8d3f0e-uuid",
            b"yaraus:zz:1:2:h",
            b"\xff\xfe",
            b"yaraus:00112233445566778899aabbccddeeff:notanumber:1:h",
        ] {
            assert_eq!(Token::holder_of(v), None, "{v:?}");
        }
        assert!(describe_holder(b"x").contains("another client"));
    }

    #[test]
    fn empty_user_tokens_are_refused() {
        assert!(matches!(Token::from_user(""), Err(Error::Usage(_))));
    }
}
