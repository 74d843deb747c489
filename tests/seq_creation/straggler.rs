//! A rollback counts its read only within a round's lifetime: the same
//! stopped creation as `mod.rs`, ripe on every node, with node 3 behind a
//! proxy that holds each of its replies ([`Proxy::delay`]). A read whose
//! answers and ripe answers take longer than `ROUND_LIFETIME` may have
//! counted a mark that a late preparation has settled since, so the call
//! leaves the nodes prepared and says so; once node 3 answers promptly
//! again, the next call rolls back and creates as before.
//!
//! Through the library rather than `yaraus seq next`: the connections are
//! dialed and the scripts loaded before the delay starts, so that it falls
//! only on the three rounds of the call (the first read, the marking read,
//! the ripe question), and a deadline already passed makes it one attempt.

use super::{KEY, stuck};
use crate::common;

use common::lock::{get, masters};
use common::proxy::Proxy;
use common::{RedisServer, ServerOptions, runtime};
use std::time::Duration;
use tokio::time::Instant;
use yaraus::error::Error;
use yaraus::seq::MajoritySequence;
use yaraus::store::{Quorum, Target};
use yaraus::timing::sequence::ROUND_LIFETIME;

/// Far above the delay: every held reply arrives within its request's bound.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

#[test]
fn a_rollback_is_not_decided_from_a_read_older_than_a_round_lifetime() {
    let mut servers = masters(2, true);
    servers.push(RedisServer::start_with(ServerOptions {
        tcp: true,
        appendfsync_always: true,
        ..ServerOptions::default()
    }));
    let proxy = Proxy::start(servers[2].port().expect("a TCP server"));
    let targets = [
        servers[0].url(),
        servers[1].url(),
        format!("redis://127.0.0.1:{}/0", proxy.port()),
    ]
    .map(|url| Target::parse(&url).unwrap());
    let mut quorum = Quorum::new(&targets, REQUEST_TIMEOUT, true).unwrap();
    let rt = runtime();
    let soon = || Instant::now() + Duration::from_secs(10);
    // Dials every node and loads every script a creation uses.
    let warm = rt.block_on(MajoritySequence::new("yaraus:seq:warm").next(&mut quorum, soon()));
    assert_eq!(warm.unwrap(), 1);

    // Ripe on every node's clock; node 3's replies to the marking read and
    // to the ripe question each come back after half a lifetime and more.
    let seeded = stuck(&servers, 20_000);
    proxy.delay(ROUND_LIFETIME / 2 + Duration::from_millis(100));
    let mut seq = MajoritySequence::new(KEY);
    let refused = rt.block_on(seq.next(&mut quorum, Instant::now()));
    let now: Vec<String> = servers.iter().map(|s| get(s, KEY).unwrap()).collect();
    assert_eq!(
        now, seeded,
        "rolled back from a read older than its lifetime"
    );
    match refused {
        Err(Error::Unavailable(m)) => assert!(
            m.contains("a creation stopped half-way") && m.contains("rolled back by itself"),
            "{m}"
        ),
        other => panic!("expected the stopped creation to be reported, got {other:?}"),
    }

    proxy.delay(Duration::ZERO);
    assert_eq!(rt.block_on(seq.next(&mut quorum, soon())).unwrap(), 1);
    let held = servers
        .iter()
        .filter(|s| get(s, KEY).as_deref() == Some("1"))
        .count();
    assert!(held >= 2, "1 not held by a majority");
}
