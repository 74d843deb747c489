//! What one error from redis-rs tells, read the same way everywhere: the
//! server's words ([`said`]), an ACL's refusal ([`is_denied`]), a
//! connection no longer of use ([`is_stale`]), one of our scripts' own
//! `YARAUS_…` codes ([`script_error`]). It names no deployment, so that
//! parsing a URL (target.rs) can use it below the sorting of errors into
//! the kinds the user is told (errors.rs), which names the deployment.

/// Whether the server's ACL refused a command or key: `NOPERM` from a
/// command, or the `ERR` a script gets when a command or key in it is denied.
pub(crate) fn is_denied(e: &redis::RedisError) -> bool {
    e.code() == Some("NOPERM")
        || e.detail()
            .is_some_and(|d| d.contains("The user executing the script can't"))
}

/// Whether an error means the connection is no use any more: dead, timed
/// out, or to a node that is no longer (or not yet) a writable master.
pub(super) fn is_stale(e: &redis::RedisError) -> bool {
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || matches!(
            e.code(),
            Some("READONLY") | Some("MASTERDOWN") | Some("LOADING")
        )
}

/// What went wrong, for a message: the server's error code and words, or
/// the client's words without the name of redis-rs's error kind (its
/// `Display` adds " - AuthenticationFailed", " - InvalidClientConfig").
pub(crate) fn said(e: &redis::RedisError) -> String {
    match (e.code(), e.detail()) {
        (Some(code), Some(d)) => format!("{code} {d}"),
        _ => e.to_string().replacen(&format!(" - {:?}", e.kind()), "", 1),
    }
}

/// Splits an error raised by one of our scripts with `redis.error_reply`,
/// whose first word is a code of ours (`YARAUS_…`), into code and message.
pub fn script_error(e: &redis::RedisError) -> Option<(&str, &str)> {
    let code = e.code()?;
    if code.starts_with("YARAUS_") {
        Some((code, e.detail().unwrap_or("").trim()))
    } else {
        None
    }
}
