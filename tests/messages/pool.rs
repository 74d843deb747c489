//! The worker-id pool in the user's words: a full pool says every id is
//! held until its lease expires unless renewed, rather than promising one
//! soon or that its holder still runs, and its figure is written as a
//! duration is typed; `init` that shrinks the pool says which ids it
//! removes, and refuses, changing nothing, to remove a leased one unless
//! `--force`.

use crate::messages::common::RedisServer;
use crate::messages::common::pool::{CLIENTS, IDS, NS, enc, init_pool, server_now};
use crate::messages::{SOFTWARE, TEMPFAIL, one_line, yaraus};

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
            "yaraus: no id is free: every id of the pool t:ids is held until its lease \
             expires, unless its holder renews it (the earliest expires in 29m5",
            "Z on the server's clock); not waiting",
        ],
    );
    // A waiter cannot tell a holder that renews from one that died: nothing
    // renews these leases, as after a SIGKILLed yaraus.
    assert!(!line.contains("renewed while"), "{line}");
    assert!(!line.contains("next one frees"), "{line}");
    // Only the counters of the attempt changed.
    let ids = |snap: &std::collections::BTreeMap<String, String>| {
        (snap.get(IDS).cloned(), snap.get(CLIENTS).cloned())
    };
    assert_eq!(ids(&s.snapshot()), ids(&before));
}

#[test]
fn a_shrink_says_what_it_removes_and_refuses_to_take_leased_ids_unless_forced() {
    let s = RedisServer::start();
    init_pool(&s, 1, 10);
    let url = s.url_ns(NS);
    let init = |more: &[&'static str]| {
        let args = [&["--redis", url.as_str(), "init", "--max"][..], more].concat();
        (yaraus(&args), args)
    };

    let (out, args) = init(&["8"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(
        out.stderr.contains("removing ids 9..10 from t:ids"),
        "{args:?}: {out:#?}"
    );

    hold(&s, 6, 600.0);
    hold(&s, 7, 600.0);
    let before = s.snapshot();
    let (out, args) = init(&["5"]);
    one_line(
        &args,
        &out,
        SOFTWARE,
        &[
            "yaraus: refusing to change the pool t:ids to 1..5: it would remove ids 6..8, and 2 \
             of them are leased: ids 6 (by other-host-1700000000.000-1), 7 (by \
             other-host-1700000000.000-1); nothing was changed",
            "or pass --force to take them",
        ],
    );
    assert_eq!(s.snapshot(), before, "a refused shrink changed Redis");

    let (out, args) = init(&["5", "--force"]);
    assert_eq!(out.code, Some(0), "{args:?}: {out:#?}");
    assert!(
        out.stderr.contains("removing ids 6..8 from t:ids"),
        "{out:#?}"
    );
    assert!(
        out.stderr
            .contains("taking ids 6 (by other-host-1700000000.000-1), 7"),
        "{out:#?}"
    );
    let ids: Vec<String> = s.query(&["ZRANGE", IDS, "0", "-1"]);
    assert_eq!(ids, ["A1", "A2", "A3", "A4", "A5"]);
    let owners: Vec<String> = s.query(&["HKEYS", CLIENTS]);
    assert!(owners.is_empty(), "{owners:?}");
}
