//! The library under `yaraus lock`, against real redis-servers: the majority
//! sequence (64-bit values kept exact, nodes without fsync refused, a
//! minority down) and the in-process benchmark hook.

use crate::common;

use common::lock::masters;
use common::{RedisServer, runtime};
use std::time::Duration;
use tokio::time::Instant;
use yaraus::base::setting::Setting;
use yaraus::context::Context;
use yaraus::error::Error;
use yaraus::lock::{Attempt, Token};
use yaraus::seq::MajoritySequence;
use yaraus::store::{Quorum, Target};
use yaraus::timing::Timeouts;

fn quorum(servers: &[RedisServer], require_fsync: bool) -> Quorum {
    let targets: Vec<Target> = servers
        .iter()
        .map(|s| Target::parse(&s.url()).unwrap())
        .collect();
    Quorum::new(&targets, Duration::from_secs(2), require_fsync).unwrap()
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

#[test]
fn sequence_values_above_two_to_the_53_stay_exact() {
    let servers = masters(3, true);
    let rt = runtime();
    let mut q = quorum(&servers, true);
    // 2^53 + 1 cannot be a Lua number (a double): it must never become one.
    for s in &servers {
        s.cmd(&["SET", "seq:big", "9007199254740993"]);
    }
    let mut seq = MajoritySequence::new("seq:big");
    assert_eq!(
        rt.block_on(seq.next(&mut q, soon())).unwrap(),
        9_007_199_254_740_994
    );
    assert_eq!(
        rt.block_on(seq.next(&mut q, soon())).unwrap(),
        9_007_199_254_740_995
    );
    for s in &servers {
        assert_eq!(
            s.query::<String>(&["GET", "seq:big"]),
            "9007199254740995",
            "{}",
            s.url()
        );
    }

    // Up to the last 64-bit value, and no further.
    for s in &servers {
        s.cmd(&["SET", "seq:top", "18446744073709551614"]);
    }
    let mut seq = MajoritySequence::new("seq:top");
    assert_eq!(rt.block_on(seq.next(&mut q, soon())).unwrap(), u64::MAX);
    match rt.block_on(seq.next(&mut q, soon())) {
        Err(Error::State(m)) => assert!(m.contains("18446744073709551615"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn sequence_refuses_a_counter_that_is_not_one() {
    let servers = masters(3, true);
    let rt = runtime();
    let mut q = quorum(&servers, true);
    servers[1].cmd(&["SET", "seq:bad", "12abc"]);
    let mut seq = MajoritySequence::new("seq:bad");
    match rt.block_on(seq.next(&mut q, soon())) {
        Err(Error::State(m)) => assert!(m.contains("not a counter"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn sequence_refuses_nodes_that_do_not_fsync_unless_told() {
    let servers = masters(3, false);
    let rt = runtime();
    let mut strict = quorum(&servers, true);
    let mut seq = MajoritySequence::new("seq:nofsync");
    match rt.block_on(seq.next(&mut strict, soon())) {
        Err(Error::State(m)) => {
            assert!(
                // The library names the setting; the binary spells it --allow-volatile.
                m.contains("appendfsync") && m.contains(&Setting::AllowVolatile.to_string()),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
    for s in &servers {
        assert!(s.snapshot().is_empty(), "a refused node was written to");
    }
    let mut relaxed = quorum(&servers, false);
    assert_eq!(rt.block_on(seq.next(&mut relaxed, soon())).unwrap(), 1);
}

#[test]
fn sequence_moves_on_with_a_minority_down_and_stops_without_a_majority() {
    let mut servers = masters(3, true);
    let rt = runtime();
    let mut q = quorum(&servers, true);
    let mut seq = MajoritySequence::new("seq:down");
    let first = rt.block_on(seq.next(&mut q, soon())).unwrap();
    servers[0].sigkill();
    // A new process (no floor) must still go past `first`.
    let mut fresh = MajoritySequence::new("seq:down");
    let second = rt.block_on(fresh.next(&mut q, soon())).unwrap();
    assert!(second > first, "{first} then {second}");
    servers[1].sigkill();
    let deadline = Instant::now() + Duration::from_millis(300);
    match rt.block_on(fresh.next(&mut q, deadline)) {
        Err(Error::Unavailable(m)) => assert!(m.contains("majority"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn two_hundred_acquire_release_cycles_leave_nothing_behind_on_one_and_three_masters() {
    let one = masters(1, false);
    let three = masters(3, false);
    let rt = runtime();
    for servers in [&one, &three] {
        let targets: Vec<Target> = servers
            .iter()
            .map(|s| Target::parse(&s.url()).unwrap())
            .collect();
        // As an embedding program makes one: from a context.
        let ctx = Context::new(targets, None, Timeouts::default())
            .unwrap()
            .requiring_durable(false);
        let mut locker = ctx
            .locker("cycles", ctx.lock_options(Duration::from_secs(30)))
            .unwrap();
        rt.block_on(async {
            for _ in 0..200 {
                let token = Token::generate().unwrap();
                match locker.try_acquire(&token).await.unwrap() {
                    Attempt::Acquired(_) => {}
                    Attempt::Refused(r) => panic!("refused: {}", r.into_error(None)),
                }
                let released = locker.release(&token).await;
                assert_eq!(released.freed, servers.len(), "{:?}", released.problems);
            }
        });
        for s in servers {
            assert_eq!(
                s.try_query::<Option<String>>(&["GET", "cycles"]).unwrap(),
                None
            );
        }
    }
}

/// Counters [101, 100, 101]; node 3 restarts empty and node 1 is frozen.
/// Reading a missing key as 0 would let a round read {100, 0}, propose 101
/// and count nodes 2 and 3: 101 handed out twice. A node without
/// the counter must not vote, so the call fails instead, and once node 1 is
/// back the next value is above 101.
#[test]
fn a_node_restarted_empty_never_makes_a_sequence_hand_out_a_value_twice() {
    let servers = masters(3, true);
    let rt = runtime();
    for (s, v) in servers.iter().zip(["101", "100", "101"]) {
        s.cmd(&["SET", "seq:orders", v]);
    }
    servers[2].cmd(&["FLUSHALL"]);
    servers[0].sigstop();
    let mut q = quorum(&servers, true);
    let mut seq = MajoritySequence::named("orders", "seq:orders");
    let deadline = Instant::now() + Duration::from_secs(3);
    match rt.block_on(seq.next(&mut q, deadline)) {
        Err(Error::Unavailable(m)) => assert!(m.contains("set-floor"), "{m}"),
        other => panic!("a value while a majority cannot vouch for it: {other:?}"),
    }
    // The emptied node was marked by the read, never given a number.
    let left = servers[2]
        .try_query::<Option<String>>(&["GET", "seq:orders"])
        .unwrap()
        .unwrap_or_default();
    assert!(left.starts_with("unborn:"), "{left}");
    servers[0].sigcont();
    let mut seq = MajoritySequence::new("seq:orders");
    let next = rt.block_on(seq.next(&mut q, soon())).unwrap();
    assert!(next > 101, "{next}");
}
