//! How long to wait for Redis: every wait on a server follows from the
//! user's one `timeout`, so that a single flag bounds a call end to end,
//! and each derived limit says here why it is what it is.

use std::time::Duration;

/// How long to wait for Redis, all derived from the user's `timeout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    connect: Duration,
    response: Duration,
}

impl Timeouts {
    /// The limits of a call bounded by `timeout`.
    pub fn from_timeout(timeout: Duration) -> Timeouts {
        Timeouts {
            connect: timeout,
            // A request may also carry a WAIT of up to the timeout.
            response: timeout * 2,
        }
    }

    /// The limits of one node of a quorum, whose every dial and request is
    /// bounded by `request` (a quorum waits for replicas in its own round).
    pub fn per_request(request: Duration) -> Timeouts {
        Timeouts {
            connect: request,
            response: request,
        }
    }

    /// The user's bound itself.
    pub fn timeout(&self) -> Duration {
        self.connect
    }

    /// Dialing, TLS and the handshake (AUTH, SELECT) together.
    pub fn connect(&self) -> Duration {
        self.connect
    }

    /// One request and its reply: a request may also carry a `WAIT` of up to
    /// the timeout, so it gets that much again on top.
    pub fn response(&self) -> Duration {
        self.response
    }

    /// The bound given to `WAIT` itself: below the response timeout, so that
    /// a shortfall of replicas is reported as one rather than as a server
    /// that did not answer.
    pub fn replica_wait(&self) -> Duration {
        self.connect.min(self.response * 3 / 4)
    }

    /// The final release of a claim on one server: one request, which must
    /// never hold up the exit for long (a claim not released expires anyway).
    pub fn release(&self) -> Duration {
        self.response
    }

    /// An attempt that a signal interrupted, let finish so that what it took
    /// can be released: one script and perhaps a `WAIT`, each bounded by
    /// the response timeout.
    pub fn settle(&self) -> Duration {
        self.response * 2
    }

    /// One request to one node of a majority sequence (`seq`): a call is
    /// rounds of a dial and a request, and no round starts unless it can end
    /// within the timeout, so a round gets half of a half.
    pub fn sequence_request(&self) -> Duration {
        at_least_a_millisecond(self.timeout() / 4)
    }

    /// One request to one shard of a hilo sequence: `next` may try every
    /// shard, a dial and a request each, within about the timeout.
    pub fn shard_request(&self) -> Duration {
        at_least_a_millisecond(self.timeout() / 2)
    }

    /// One request to one master of a lock of `ttl`: a Redlock round must
    /// leave most of the ttl as validity, so it gets a tenth of it at most.
    pub fn lock_request(&self, ttl: Duration) -> Duration {
        at_least_a_millisecond(self.timeout().min(ttl / 10))
    }
}

impl Default for Timeouts {
    /// The binary's default `--timeout`, 2 s.
    fn default() -> Timeouts {
        Timeouts::from_timeout(Duration::from_secs(2))
    }
}

fn at_least_a_millisecond(d: Duration) -> Duration {
    d.max(Duration::from_millis(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn every_limit_follows_from_the_timeout() {
        let t = Timeouts::from_timeout(ms(2000));
        assert_eq!((t.connect(), t.response()), (ms(2000), ms(4000)));
        assert_eq!(t.replica_wait(), ms(2000));
        assert_eq!((t.release(), t.settle()), (ms(4000), ms(8000)));
        assert_eq!(t.sequence_request(), ms(500));
        assert_eq!(t.shard_request(), ms(1000));
        assert_eq!(t.lock_request(Duration::from_secs(60)), ms(2000));
        assert_eq!(t.lock_request(ms(5000)), ms(500));
        assert_eq!(Timeouts::from_timeout(ms(2)).sequence_request(), ms(1));
    }
}
