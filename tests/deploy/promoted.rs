//! An attempt undone on the old master after the replica that has its write
//! was promoted. Waiting lock clients would find the lock "held by" their
//! own pid for seconds while no command ran: an attempt whose write
//! reached the master and a replica, but fewer replicas than
//! `--min-replicas`, is released on the master once that replica has
//! been promoted, and the new master keeps the write until its ttl (a
//! lease: until `--expire`). Here that happens on purpose: of two replicas
//! C is stopped (so `WAIT 2` falls short) and B is promoted while the first
//! attempt waits for C. The client must release its own leftover once it
//! reaches B, not wait it out (60 s, beyond its `--wait`).

use super::*;
use common::pool::{NS, init_pool};
use common::process::{Run, lock_cmd, run_cmd};
use common::scratch::Scratch;
use common::sentinel::{Sentinel, sentinel_url, wait_failover};
use common::{RedisServer, wait_until};

/// What every client here is given: writes count once two replicas have
/// them; a `WAIT` long enough for the failover to happen inside it; 45 s
/// to get what it wants.
const OPTS: [&str; 6] = ["--min-replicas", "2", "--timeout", "5s", "--wait", "45s"];

/// A master, its replicas B and C, and the sentinels; C is stopped, and
/// the sentinels know it (so that a failover can only choose B).
fn with_c_stopped() -> (RedisServer, Vec<RedisServer>, Vec<Sentinel>) {
    let (master, replicas, sentinels) = super::sentinel::group(2);
    let c = &replicas[1];
    c.sigstop();
    wait_until("Sentinel to call C down", Duration::from_secs(20), || {
        sentinels[0]
            .replica_flags(c.port().unwrap())
            .is_some_and(|f| f.contains("s_down"))
    });
    (master, replicas, sentinels)
}

/// Once `written` says the client's first write reached B, promotes B
/// (`SENTINEL FAILOVER`) and lets C go on.
fn promote_b(
    (master, replicas, sentinels): &(RedisServer, Vec<RedisServer>, Vec<Sentinel>),
    written: impl Fn(&RedisServer) -> bool,
) {
    let (b, c) = (&replicas[0], &replicas[1]);
    wait_until(
        "the first attempt's write on B",
        Duration::from_secs(20),
        || written(b),
    );
    sentinels[0].failover();
    let promoted = std::panic::catch_unwind(|| {
        wait_failover(sentinels, master.port().unwrap(), Duration::from_secs(30))
    });
    let new = promoted.unwrap_or_else(|e| {
        eprintln!("--- sentinel log:\n{}", sentinels[0].log());
        std::panic::resume_unwind(e)
    });
    assert_eq!(Some(new), b.port(), "C was stopped: B is promoted");
    c.sigcont();
}

/// The exit status of `client`, once it ends by itself (up to its
/// `--wait`, with a margin: the outcome is the test, not the time).
fn end_of(client: &mut Run) -> i32 {
    wait_until("the client to end", Duration::from_secs(90), || {
        client.exited()
    });
    client.wait()
}

#[test]
fn a_lock_token_given_back_too_late_for_the_promoted_replica_does_not_hold_the_lock() {
    let group = with_c_stopped();
    let url = sentinel_url(&group.2, NS);
    let scratch = Scratch::new();
    let ran = scratch.arg("ran");
    let opts = [&OPTS[..], &["--ttl", "60s"]].concat();
    let cmd = lock_cmd(&url, &scratch, "nightly", &opts, &["touch", &ran]);
    let mut lock = Run::spawn(cmd, &scratch);
    promote_b(&group, |b| {
        b.query::<Option<String>>(&["GET", "nightly"]).is_some()
    });
    assert_eq!(end_of(&mut lock), 0, "{}", lock.log());
    assert!(scratch.exists("ran"), "{}", lock.log());
}

/// Here the first attempt leases id 1, which stays on B, and the client
/// then gets id 2 there. Id 1 must be free for the next client, not kept
/// for `--expire` by a lease that nobody holds.
#[test]
fn a_lease_released_too_late_for_the_promoted_replica_does_not_keep_the_id() {
    let group = with_c_stopped();
    init_pool(&group.0, 1, 2);
    group.1[0].wait_replica_synced(&group.0);
    let url = sentinel_url(&group.2, NS);
    let scratch = Scratch::new();
    let timing = [
        "--expire",
        "60s",
        "--interval",
        "1s",
        "--kill-after",
        "1s",
        "--delay",
        "0",
        "--no-safeguards",
    ];
    let opts = [&OPTS[..], &timing].concat();
    let child = scratch.script(
        "child.sh",
        "echo \"$YARAUS_WORKER_ID\" >> \"$D/ids\"\nwhile [ ! -e \"$D/go\" ]; do sleep 0.05; done\n",
    );
    let command = ["sh", &child];
    let mut first = Run::spawn(run_cmd(&url, &scratch, &opts, &command), &scratch);
    promote_b(&group, |b| {
        let owner: Option<String> = b.query(&["HGET", &format!("{NS}:clients"), "A1"]);
        owner.is_some()
    });
    wait_until(
        "the first client's command",
        Duration::from_secs(60),
        || scratch.exists("ids"),
    );
    let mut second = Run::spawn(run_cmd(&url, &scratch, &opts, &command), &scratch);
    wait_until(
        "the second client's command",
        Duration::from_secs(60),
        || {
            second.exited()
                || scratch
                    .read("ids")
                    .is_some_and(|ids| ids.lines().count() == 2)
        },
    );
    scratch.touch("go");
    assert_eq!(end_of(&mut second), 0, "{}", second.log());
    assert_eq!(end_of(&mut first), 0, "{}", first.log());
    let mut ids: Vec<String> = scratch
        .read("ids")
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    ids.sort();
    assert_eq!(ids, ["1", "2"]);
}
