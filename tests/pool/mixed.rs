//! A mixed fleet on one pool: `yaraus run` processes and clients of the Go
//! yaraus's protocol leasing from the same `--shards 1` pool, with no two
//! holders ever using one id at once.
//!
//! The Go tool cannot be built here, so its protocol is played by threads
//! of this test, one Lua script per step as its design describes it, on its
//! keys (`ns:ids` scored by expiry in Unix seconds on the server's clock,
//! `ns:clients`, `ns:stats`): get an id (the lowest score, if it has
//! expired), renew it while its owner is still us, release it (score: now).
//! A new holder waits `delay` before using its id: the grace a previous
//! holder who lost its record needs to see its ownership error and stop.
//!
//! A small pool (a few more holders than ids) makes ids change hands many
//! times in a few seconds, between holders of both kinds. Every holder
//! writes the lines of the chaos suite's children (tests/chaos/lives.rs:
//! `start`/`stop RES NS PID CLIENT`, one `write(2)` each on one `O_APPEND`
//! log) around its use of the id, stamped with the wall clock, the one
//! clock of this machine that a shell child can read too; the chaos
//! suite's checker, included here, reads them back as lives and finds any
//! overlap. A run's child is a bash script (its pid names its life); a Go
//! client's life is named by its thread id, which no live process shares.
//!
//! A Go client's user of the id is its own thread, which acts only when it
//! wakes: woken past its deadline (its last renewal sent + expire, the
//! earliest the server can give the id away), its life is taken to end at
//! that deadline, which over-states it and so hides no overlap.
//!
//! Beyond "no overlap", nothing is ever taken from a holder here: with no
//! fault, an id handed out while its lease runs is a bug even where the
//! new holder's delay hides it from the overlap check. So every run must
//! end 0 (124 is a lost claim), no Go client may find its id taken before
//! its deadline, and the pool counts no ownership error.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::common::pool::{CLIENTS, IDS, NS, STATS, dec, fresh_pool, server_now, stat};
use super::common::process::Run;
use super::common::scratch::Scratch;
use super::common::{RedisServer, wait_until};

// The chaos suite's log format and overlap checker (a module of the faults
// binary), shared rather than written a second time.
#[allow(dead_code)]
#[path = "../chaos/figures.rs"]
mod figures;
#[allow(dead_code)]
#[path = "../chaos/lives.rs"]
mod lives;

use figures::{Outcome, assert_no_overlap};
use lives::{Life, Lives, overlaps};

/// The pool: ids 1..=POOL for RUNS + GOS holders, so that both kinds wait
/// for ids and take them over from each other.
const POOL: u64 = 6;
const RUNS: usize = 4;
const GOS: usize = 4;

/// Both kinds renew every 100 ms for 3 s, and wait 2 × 100 + 200 ms
/// (kill-after) before using a new id: yaraus's safeguards hold as given.
const INTERVAL: Duration = Duration::from_millis(100);
const EXPIRE: Duration = Duration::from_secs(3);
const DELAY: Duration = Duration::from_millis(400);
const RUN_OPTS: &[&str] = &[
    "--interval",
    "100ms",
    "--expire",
    "3s",
    "--kill-after",
    "200ms",
    "--delay",
    "400ms",
];

/// How long a holder uses its id, drawn in this range (ms).
const HOLD_MS: std::ops::Range<u64> = 100..400;

/// Enough churn to stop: lives of each kind, and hand-overs of an id from
/// one kind of holder to the other.
const LIVES_EACH: usize = 20;
const CROSSINGS: usize = 10;
/// The bound on reaching it: a few seconds here, more on a loaded machine.
const CHURN_BOUND: Duration = Duration::from_secs(60);

/// The child of a run: `bash child.sh ID HOLD CLIENT`. It stamps its
/// start, holds for HOLD seconds (in a `wait`, which a trapped SIGTERM cuts
/// short) and stamps its stop. The stamp is bash's `EPOCHREALTIME` (µs,
/// the wall clock), read without a fork: a `date` would die of the SIGTERM
/// sent to the child's group and leave a line without its stamp.
const CHILD: &str = r#"id=$1 client=$3
line() {
  local us=${EPOCHREALTIME//[!0-9]/}
  echo "$1 id:$id ${us}000 $$ $client" >> "$D/lives.log"
}
trap 'line stop; exit 0' TERM INT HUP
line start
sleep "$2" & wait $!
line stop
"#;

/// Get an id: the lowest score, only if it has expired.
/// KEYS ids, clients, stats; ARGV our client id, the lease in seconds.
/// Returns the encoded id, or nil when every id is leased.
const GET_ID: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('HINCRBY', KEYS[3], 'client_get_id_count', 1)
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if head[1] == nil or tonumber(head[2]) > now then
  redis.call('HINCRBY', KEYS[3], 'get_id_no_available_id', 1)
  return false
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), head[1])
redis.call('HSET', KEYS[2], head[1], ARGV[1])
redis.call('HINCRBY', KEYS[3], 'client_get_id_success', 1)
return head[1]
"#;

/// Renew: extend the lease while the id is still ours.
/// KEYS ids, clients, stats; ARGV our client id, the id, the lease in
/// seconds. Returns 1 when extended, 0 when the id is not ours any more.
const RENEW: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('HINCRBY', KEYS[3], 'extend_ttl_count', 1)
local score = redis.call('ZSCORE', KEYS[1], ARGV[2])
if redis.call('HGET', KEYS[2], ARGV[2]) ~= ARGV[1] or not score then
  redis.call('HINCRBY', KEYS[3], 'extend_ttl_ownership_error', 1)
  return 0
end
if tonumber(score) < now then
  redis.call('HINCRBY', KEYS[3], 'extend_ttl_expire_warning', 1)
end
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[3]), ARGV[2])
redis.call('HINCRBY', KEYS[3], 'extend_ttl_success', 1)
return 1
"#;

/// Release: if the id is ours, it is free from now on.
/// KEYS ids, clients; ARGV our client id, the id.
const RELEASE: &str = r#"
if redis.call('HGET', KEYS[2], ARGV[2]) ~= ARGV[1] then return 0 end
local t = redis.call('TIME')
redis.call('ZADD', KEYS[1], 'XX', tonumber(t[1]) + tonumber(t[2]) / 1000000, ARGV[2])
return 1
"#;

#[test]
fn go_protocol_clients_and_yaraus_runs_share_a_pool_without_an_overlap() {
    let (server, scratch) = fresh_pool(1, POOL);
    File::create(scratch.path("lives.log")).expect("create the lives log");
    scratch.script("child.sh", CHILD);
    let stop = AtomicBool::new(false);
    let (failed_runs, steals) = thread::scope(|s| {
        let (server, scratch, stop) = (&server, &scratch, &stop);
        let runs: Vec<_> = (0..RUNS)
            .map(|k| s.spawn(move || run_loop(k, server, scratch, stop)))
            .collect();
        let gos: Vec<_> = (RUNS..RUNS + GOS)
            .map(|k| s.spawn(move || GoClient::new(k, server, scratch).run(stop)))
            .collect();
        let stopper = StopOnDrop(stop);
        wait_until(
            "lives of both kinds and hand-overs between them",
            CHURN_BOUND,
            || stop.load(Ordering::SeqCst) || tally(&lives_so_far(scratch)).enough(),
        );
        drop(stopper);
        let failed: Vec<String> = runs.into_iter().flat_map(joined).collect();
        let steals: usize = gos.into_iter().map(joined).sum();
        (failed, steals)
    });

    let lives = Lives::parse(&scratch.read("lives.log").unwrap_or_default());
    let outcome = Outcome {
        overlaps: overlaps(&lives),
        lives,
        ..Outcome::default()
    };
    let seen = tally(&outcome.lives);
    eprintln!(
        "mixed fleet: {} lives ({} of runs, {} of Go clients), {} hand-overs between kinds, {} \
         overlaps",
        outcome.lives.len(),
        seen.runs,
        seen.gos,
        seen.crossings,
        outcome.overlaps.len()
    );
    assert_no_overlap("a mixed fleet", &outcome);
    assert!(seen.enough(), "too little churn to tell: {seen:?}");
    assert!(
        failed_runs.is_empty(),
        "runs that did not end 0 (124: their id was taken):\n{}",
        failed_runs.join("\n")
    );
    assert_eq!(
        steals, 0,
        "Go clients found their id taken before its lease ran out"
    );
    assert_eq!(
        stat(&server, "extend_ttl_ownership_error"),
        0,
        "ids were taken from holders"
    );
    let now = format!("({}", server_now(&server));
    let held: Vec<String> = server.query(&["ZRANGEBYSCORE", IDS, &now, "+inf"]);
    assert!(
        held.is_empty(),
        "ids still leased after every holder ended: {held:?}"
    );
}

/// A loop's result, or its panic passed on.
fn joined<T>(handle: thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// Sets the flag when dropped: the loops stop when the test ends, whether
/// it got what it waited for or panicked.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// The lives of the log's complete lines so far.
fn lives_so_far(scratch: &Scratch) -> Vec<Life> {
    Lives::parse(&scratch.lines("lives.log").join("\n"))
}

/// Lives by kind of holder (client indexes below [`RUNS`] are runs), and
/// how often an id went from one kind to the other.
#[derive(Debug)]
struct Tally {
    runs: usize,
    gos: usize,
    crossings: usize,
}

impl Tally {
    fn enough(&self) -> bool {
        self.runs >= LIVES_EACH && self.gos >= LIVES_EACH && self.crossings >= CROSSINGS
    }
}

fn tally(lives: &[Life]) -> Tally {
    let is_run = |l: &Life| l.client < RUNS;
    let runs = lives.iter().filter(|l| is_run(l)).count();
    let mut by_id: BTreeMap<&str, Vec<&Life>> = BTreeMap::new();
    for life in lives {
        by_id.entry(&life.res).or_default().push(life);
    }
    let crossings = by_id
        .values_mut()
        .map(|group| {
            group.sort_by_key(|l| l.start);
            group
                .windows(2)
                .filter(|w| is_run(w[0]) != is_run(w[1]))
                .count()
        })
        .sum();
    Tally {
        runs,
        gos: lives.len() - runs,
        crossings,
    }
}

/// Client `k`: `yaraus run` after `yaraus run` until `stop`, each child
/// holding its id a random while. Returns the runs that did not end 0,
/// each with the last line of its log (why).
fn run_loop(k: usize, server: &RedisServer, scratch: &Scratch, stop: &AtomicBool) -> Vec<String> {
    let _stop_all_if_this_panics = StopOnDrop(stop);
    let url = server.url_ns(NS);
    let child = scratch.arg("child.sh");
    let client = k.to_string();
    let mut failed = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        let hold = format!("{:.3}", fastrand::u64(HOLD_MS) as f64 / 1000.0);
        let command = ["bash", child.as_str(), "<>", &hold, &client];
        let mut run = Run::start(&url, scratch, RUN_OPTS, &command);
        let code = run.wait();
        if code != 0 {
            failed.push(format!("{} exited {code}: {}", run.name, run.last_line()));
        }
    }
    failed
}

/// The wall clock in ns since 1970: the clock of the children's stamps.
fn wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_nanos() as u64
}

/// A client of the Go tool's protocol, played by a thread: its client id
/// in the Go tool's form, its connection, and where it writes its lives.
struct GoClient {
    conn: redis::Connection,
    me: String,
    client: usize,
    /// Names its lives in the log, as a pid names a child's.
    tid: i32,
    log: File,
    /// Times it found its id taken while its lease still ran.
    steals: usize,
}

/// An id a Go client holds, on the wall clock (ns).
struct Held {
    id: String,
    /// Its last renewal sent + expire: the server gives the id to nobody
    /// else before.
    deadline: u64,
    next_renewal: u64,
}

impl GoClient {
    /// Client `client`, on the calling thread.
    fn new(client: usize, server: &RedisServer, scratch: &Scratch) -> GoClient {
        let mut conn = server.conn();
        let n: u64 = redis::cmd("HINCRBY")
            .arg(STATS)
            .arg("client_id_count")
            .arg(1)
            .query(&mut conn)
            .expect("a new client id");
        let log = OpenOptions::new()
            .append(true)
            .open(scratch.path("lives.log"))
            .expect("open the lives log");
        GoClient {
            conn,
            me: format!("gohost{client}-{:.3}-{n}", wall_ns() as f64 / 1e9),
            client,
            tid: nix::unistd::gettid().as_raw(),
            log,
            steals: 0,
        }
    }

    /// Gets, holds and releases ids until `stop`; returns its steals.
    fn run(mut self, stop: &AtomicBool) -> usize {
        let _stop_all_if_this_panics = StopOnDrop(stop);
        while !stop.load(Ordering::SeqCst) {
            match self.get_id() {
                Some(held) => {
                    self.hold(held);
                    // Idle a while between two jobs, as a run's restart
                    // does: an id given back at once to the client that
                    // released it would never change hands.
                    thread::sleep(Duration::from_millis(fastrand::u64(HOLD_MS)));
                }
                None => thread::sleep(INTERVAL / 2),
            }
        }
        self.steals
    }

    /// Waits the delay, uses the id a random while, releases it; renews it
    /// all along, and stops using it at once when it is lost.
    fn hold(&mut self, mut held: Held) {
        if self.keep(&mut held, wall_ns() + DELAY.as_nanos() as u64) {
            let start = wall_ns();
            if start < held.deadline {
                self.line("start", &held.id, start);
                let hold = Duration::from_millis(fastrand::u64(HOLD_MS));
                self.keep(&mut held, start + hold.as_nanos() as u64);
                self.line("stop", &held.id, wall_ns().min(held.deadline));
            }
        }
        // Owner-checked: an id lost meanwhile is left to its new holder.
        let _released: i64 = eval(
            &mut self.conn,
            RELEASE,
            &[IDS, CLIENTS],
            &[&self.me, &held.id],
        );
    }

    fn get_id(&mut self) -> Option<Held> {
        let sent = wall_ns();
        let id: Option<String> = eval(
            &mut self.conn,
            GET_ID,
            &[IDS, CLIENTS, STATS],
            &[&self.me, &EXPIRE.as_secs().to_string()],
        );
        id.map(|id| Held {
            id,
            deadline: sent + EXPIRE.as_nanos() as u64,
            next_renewal: sent + INTERVAL.as_nanos() as u64,
        })
    }

    /// Renews `held` every interval until `until` (wall ns). False when it
    /// is lost: taken from us, or past its deadline unrenewed.
    fn keep(&mut self, held: &mut Held, until: u64) -> bool {
        loop {
            let now = wall_ns();
            if now >= held.deadline {
                return false;
            }
            if now >= until {
                return true;
            }
            if now < held.next_renewal {
                let wake = held.next_renewal.min(until);
                thread::sleep(Duration::from_nanos(wake - now));
                continue;
            }
            let expire = EXPIRE.as_secs().to_string();
            let args = [self.me.as_str(), held.id.as_str(), &expire];
            let renewed: i64 = eval(&mut self.conn, RENEW, &[IDS, CLIENTS, STATS], &args);
            if renewed != 1 {
                // Found before its deadline: the id was handed out again
                // while its lease ran.
                self.steals += 1;
                return false;
            }
            held.deadline = now + EXPIRE.as_nanos() as u64;
            held.next_renewal = now + INTERVAL.as_nanos() as u64;
        }
    }

    /// One line of the lives log, in one `write(2)`.
    fn line(&mut self, event: &str, id: &str, ns: u64) {
        let (tid, client) = (self.tid, self.client);
        let line = format!("{event} id:{} {ns} {tid} {client}\n", dec(id));
        let n = self
            .log
            .write(line.as_bytes())
            .expect("write the lives log");
        assert_eq!(n, line.len(), "short write to the lives log");
    }
}

/// `EVAL script keys args` on `conn`; panics on an error.
fn eval<T: redis::FromRedisValue>(
    conn: &mut redis::Connection,
    script: &str,
    keys: &[&str],
    args: &[&str],
) -> T {
    redis::cmd("EVAL")
        .arg(script)
        .arg(keys.len())
        .arg(keys)
        .arg(args)
        .query(conn)
        .unwrap_or_else(|e| panic!("EVAL of a Go client's script failed: {e}"))
}
