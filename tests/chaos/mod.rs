//! Fault injection: a fleet of `yaraus run` and `yaraus lock` clients kept
//! running against real redis-servers while the servers and the network
//! fail, and a checker that fails the test if two children ever held the same
//! worker id or lock at the same time.
//!
//! The supervisor's own faults (yaraus SIGKILLed, its child escaping the
//! group, ...) are tested in tests/run and tests/lock; here the *environment*
//! fails, one fault per test, each test several trials (`CHAOS_TRIALS`,
//! default 2; `CHAOS_MINUTES` for the soak of scripts/chaos.sh):
//!
//! * [`restart`]: the master restarts with no persistence and an operator
//!   runs `yaraus init` again — safe only because of `--delay`; the same
//!   scenario with `--delay 0 --no-safeguards` must show an overlap, which
//!   proves that the checker can see one;
//! * [`master_stop`]: the master is frozen (SIGSTOP) for longer than
//!   `--expire`;
//! * [`client_stop`]: a holder's yaraus is frozen for longer than `--expire`;
//! * [`partition`]: some holders lose the network (a proxy of ours, cut);
//! * [`failover`]: the master is SIGKILLed and Sentinel promotes a replica;
//! * [`rolling`]: every node of a `seq`, a hilo and a lock deployment wiped in
//!   turn, healing by itself, with histories checked for values twice; and
//!   between the wipes, the pool of a fleet of `run --sentinel ... --min
//!   --max` clients restarted empty or failed over by Sentinel, created again
//!   by the clients themselves (no `yaraus init`), its lives checked for
//!   overlaps.
//!
//! How: [`harness`] runs the client loops (each restarts its yaraus when it
//! exits); every yaraus supervises [`child`], this executable started again,
//! which appends `start`/`beat`/`stop` lines with `CLOCK_MONOTONIC` stamps to
//! one shared log; [`lives`] reads the log back as lives and finds overlaps;
//! [`figures`] sums them up. Each test prints one report line to stderr
//! ([`figures::Report`]): the fault, trials run, faults
//! injected, overlaps found (asserted to be 0), children killed (yaraus exit
//! 124; how many of those the watchdog SIGKILLed), and the time to recovery
//! (from the fault to every id and lock held again by a live child).
//!
//! Timings are short (`--interval 200ms --expire 1s`, locks `--ttl 1s`) and
//! keep the safeguards, so the delay before a new holder starts is the
//! default `2 × interval + kill-after`. Nothing sleeps and hopes: the tests
//! await log lines, processes gone and exits — except where the fault itself
//! is "stay frozen longer than `--expire`".
//!
//! The chaos tests hold one lock while they run ([`harness::serial`]): they
//! would otherwise share two cores with each other's fleets.

use crate::common;

mod child;
mod client_stop;
mod failover;
mod figures;
mod harness;
mod lives;
mod master_stop;
mod partition;
mod restart;
mod rolling;

use std::time::Duration;

use common::pool::NS;
use harness::ClientSpec;

/// The test that, started again by a client with `CHAOS_CHILD_LOG` set, is
/// the child; in a normal test run it returns at once.
#[test]
fn chaos_child() {
    child::act_if_asked();
}

/// `yaraus run` timings: lease of 1 s renewed every 200 ms, 300 ms to stop,
/// 300 ms to connect. The delay is the safeguards' default, 2 × 200 + 300 ms.
pub const RUN_OPTS: &[&str] = &[
    "--interval",
    "200ms",
    "--expire",
    "1s",
    "--kill-after",
    "300ms",
    "--timeout",
    "300ms",
];

/// `yaraus lock` timings: ttl 1 s (extended every 333 ms), 250 ms to stop.
pub const LOCK_OPTS: &[&str] = &["--ttl", "1s", "--kill-after", "250ms", "--timeout", "300ms"];

/// `--expire` and `--ttl` above: no child may outlive its last renewal by more.
pub const EXPIRE: Duration = Duration::from_secs(1);

/// The deadline of the children `pids` after a fault at `fault`
/// (monotonic ns): one [`EXPIRE`] later. Waits for them to die (up to 10 s
/// beyond it) and asserts each ended by it; returns the deadline and when
/// they were seen dead.
pub fn expect_dead_an_expiry_after(
    fleet: &mut harness::Fleet,
    what: &str,
    pids: &[i32],
    fault: u64,
) -> (u64, u64) {
    let limit = fault + EXPIRE.as_nanos() as u64;
    let dead = fleet.expect_dead_by(what, pids, limit, EXPIRE + Duration::from_secs(10));
    (limit, dead)
}

/// How long a child takes to stop after SIGTERM (less than either kill-after).
pub const GRACE: Duration = Duration::from_millis(50);

/// The pool: ids 1..=IDS, shared by [`RUN_CLIENTS`] clients.
pub const IDS: u64 = 3;
pub const RUN_CLIENTS: usize = 5;
/// The locks, each wanted by [`LOCK_CLIENTS_EACH`] clients.
pub const LOCKS: &[&str] = &["L0", "L1"];
pub const LOCK_CLIENTS_EACH: usize = 2;

/// `run --redis URL RUN_OPTS EXTRA` for client k, with `url(k)`. The last
/// client's children ignore SIGTERM (see [`stubborn`]).
pub fn run_specs(url: impl Fn(usize) -> String, extra: &[&str]) -> Vec<ClientSpec> {
    let specs = (0..RUN_CLIENTS)
        .map(|k| {
            let url = url(k);
            let mut args = vec!["run", "--redis", &url];
            args.extend(RUN_OPTS);
            args.extend(extra);
            ClientSpec::new(&args)
        })
        .collect();
    stubborn(specs)
}

/// Makes the last client of `specs` stubborn: its children ignore SIGTERM,
/// so that when it loses its claim only the SIGKILL at `--kill-after` (at
/// the deadline, for a claim that could not be renewed) ends its child.
pub fn stubborn(mut specs: Vec<ClientSpec>) -> Vec<ClientSpec> {
    if let Some(last) = specs.pop() {
        specs.push(last.stubborn());
    }
    specs
}

/// `lock NAME --redis URL... LOCK_OPTS EXTRA` for clients `first..`, with
/// `urls(k)` (several masters: several URLs).
pub fn lock_specs(
    first: usize,
    urls: impl Fn(usize) -> Vec<String>,
    extra: &[&str],
) -> Vec<ClientSpec> {
    let mut specs = Vec::new();
    for name in LOCKS {
        for _ in 0..LOCK_CLIENTS_EACH {
            let k = first + specs.len();
            let mut args: Vec<String> = vec!["lock".into(), (*name).into()];
            for url in urls(k) {
                args.extend(["--redis".into(), url]);
            }
            args.extend(LOCK_OPTS.iter().chain(extra).map(|s| s.to_string()));
            specs.push(ClientSpec::new(&args));
        }
    }
    stubborn(specs)
}

/// The resources of the fleet: `id:1..=IDS`, and `lock:NAME` when `locks`.
/// The usual fleet: [`RUN_CLIENTS`] run clients on the pool of `master`
/// (initialised here) and the lock clients on it too, every resource watched.
pub fn fleet_on(master: &common::RedisServer) -> harness::Fleet {
    common::pool::init_pool(master, 1, IDS);
    let url = master.url_ns(POOL_NS);
    let mut specs = run_specs(|_| url.clone(), &[]);
    let lock_url = master.url();
    specs.extend(lock_specs(specs.len(), |_| vec![lock_url.clone()], &[]));
    harness::Fleet::start(&specs, &resources(true), GRACE)
}

pub fn resources(locks: bool) -> Vec<String> {
    let mut r: Vec<String> = (1..=IDS).map(|i| format!("id:{i}")).collect();
    if locks {
        r.extend(LOCKS.iter().map(|n| format!("lock:{n}")));
    }
    r
}

/// The namespace of the pool (`?ns=` of the URLs).
pub const POOL_NS: &str = NS;
