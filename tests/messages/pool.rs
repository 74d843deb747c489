//! The worker-id pool in the user's words: a full pool says every id is
//! held rather than promising one soon, and its figure is written as a
//! duration is typed.

use crate::common::RedisServer;
use crate::common::pool::{CLIENTS, IDS, NS, enc, init_pool, server_now};
use crate::{TEMPFAIL, one_line, yaraus};

/// Holds `id` for another client for `secs` from now, as a holder that
/// renews its lease leaves it between two renewals.
fn hold(server: &RedisServer, id: u64, secs: f64) {
    let expiry = (server_now(server) + secs).to_string();
    server.cmd(&["ZADD", IDS, &expiry, &enc(id)]);
    server.cmd(&["HSET", CLIENTS, &enc(id), "other-host-1700000000.000-1"]);
}

#[test]
fn a_full_pool_says_every_id_is_held_not_when_one_frees() {
    let s = RedisServer::start();
    init_pool(&s, 1, 2);
    hold(&s, 1, 3600.0);
    hold(&s, 2, 1800.0);
    let before = s.snapshot();
    let url = s.url_ns(NS);
    let args = ["--redis", &url, "-q", "run", "--wait", "0", "--", "true"];
    let out = yaraus(&args);
    let line = one_line(
        &args,
        &out,
        TEMPFAIL,
        &[
            "yaraus: no id is free: every id of the pool t:ids is held, and renewed while its \
             command runs (were its holder to stop, the earliest would be free in 29m5",
            "s); not waiting",
        ],
    );
    assert!(!line.contains("next one frees"), "{line}");
    // Only the counters of the attempt changed.
    let ids = |snap: &std::collections::BTreeMap<String, String>| {
        (snap.get(IDS).cloned(), snap.get(CLIENTS).cloned())
    };
    assert_eq!(ids(&s.snapshot()), ids(&before));
}
