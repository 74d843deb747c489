//! A Redis password given apart from the URL: where it came from is kept
//! for messages (the place, never the password), and whether it was given
//! explicitly, in which case a URL password beside it is a conflict rather
//! than the more specific of the two. Where a front end finds it (a file,
//! the environment) is the front end's business.

/// A password from outside the URL, and where it came from (for messages:
/// the place, never the password).
#[derive(Clone)]
pub struct Password {
    secret: String,
    source: String,
    /// Named on purpose (a password file): a URL password beside it is an error.
    explicit: bool,
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Password(*** from {})", self.source)
    }
}

impl Password {
    /// `secret`, found at `source` (for messages); `explicit` when the user
    /// named it on purpose, so that a URL password beside it is an error.
    pub fn new(secret: String, source: String, explicit: bool) -> Password {
        Password {
            secret,
            source,
            explicit,
        }
    }

    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// Where it came from, for messages.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether a password in a URL beside it is a conflict rather than the
    /// more specific of the two.
    pub fn is_explicit(&self) -> bool {
        self.explicit
    }
}
