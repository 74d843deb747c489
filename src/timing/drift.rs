//! How much of a ttl the holder of a claim may count on.
//!
//! The server starts a claim's ttl when its write lands; the holder counts
//! from the instant *before* it sent the request, so its deadline comes
//! first as long as the two clocks run at the same rate. They do not quite,
//! so the holder also takes off a margin for drift: 1% of the ttl + 2 ms, as
//! Redlock's implementations (redsync, node-redlock) do. Every kind of claim
//! uses this one rule.

use std::time::Duration;

/// The clock-drift margin taken off every validity: 1% of the ttl + 2 ms.
pub fn drift(ttl: Duration) -> Duration {
    ttl / 100 + Duration::from_millis(2)
}

/// The part of `ttl` the holder may count on, from before its request.
pub fn validity(ttl: Duration) -> Duration {
    ttl.saturating_sub(drift(ttl))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_is_one_percent_and_two_milliseconds() {
        assert_eq!(drift(Duration::from_secs(30)), Duration::from_millis(302));
        assert_eq!(drift(Duration::from_secs(1)), Duration::from_millis(12));
        assert_eq!(validity(Duration::from_secs(1)), Duration::from_millis(988));
        assert_eq!(validity(Duration::from_millis(1)), Duration::ZERO);
    }
}
