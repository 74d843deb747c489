//! The clock guard (src/lease/clock_guard.rs): snowflake-style ids made under
//! `yaraus run` by successive holders of one worker id never repeat, even
//! when the hosts' wall clocks disagree.
//!
//! A "host" is yaraus and its command started under libfaketime, which moves
//! `CLOCK_REALTIME` only (`FAKETIME_DONT_FAKE_MONOTONIC`: the boot clock,
//! tokio's timers and the watchdog stay real); the Redis server keeps the
//! machine's clock. The command is a generator of the katsubushi kind
//! ([`GENERATOR`]): it makes (millisecond, sequence) pairs from its wall
//! clock, waits out a clock that went back, and appends each pair to a file
//! as it makes it; the worker id is the same for every holder (a pool of one
//! id), so two equal pairs are one snowflake id made twice. Every pair of
//! every holder is compared.
//!
//! The timings are the issue's: `--interval 200ms --kill-after 100ms
//! --expire 2s` (so the grace delay is 500 ms), and a host 3 s behind.

use super::common::pool::{NS, fresh_pool, score, server_now, stat};
use super::common::process::{Run, run_cmd, with};
use super::common::scratch::Scratch;
use super::common::tools::{faketime_library, require_test_tool};
use super::common::{EVENT, RedisServer, wait_until};
use nix::sys::signal::Signal;
use std::collections::HashSet;
use std::fs;

/// Makes (ms, sequence) pairs for ARGV[1] seconds (of the boot clock) into
/// the file ARGV[0]: 4096 per millisecond at most, never for a millisecond
/// before the last one (a clock that went back is waited out).
const GENERATOR: &str = r#"
use strict; use Time::HiRes qw(time clock_gettime CLOCK_MONOTONIC);
my ($out, $secs) = @ARGV;
open(my $fh, '>>', $out) or die "$out: $!";
$SIG{TERM} = sub { close($fh); exit 0 };
my $end = clock_gettime(CLOCK_MONOTONIC) + $secs;
my ($last, $seq) = (-1, 0);
while (clock_gettime(CLOCK_MONOTONIC) < $end) {
  my $ms = int(time() * 1000);
  next if $ms < $last;
  if ($ms == $last) { $seq++; next if $seq >= 4096; } else { ($last, $seq) = ($ms, 0); }
  syswrite($fh, "$ms $seq\n");
}
"#;

/// `--interval 200ms --kill-after 100ms --expire 2s`.
const TIMINGS: [&str; 6] = [
    "--interval",
    "200ms",
    "--kill-after",
    "100ms",
    "--expire",
    "2s",
];

/// A host whose wall clock is `offset` ("-3s", "+3s") off the machine's.
fn host(offset: &str) -> Vec<(String, String)> {
    vec![
        ("LD_PRELOAD".into(), faketime_library()),
        ("FAKETIME".into(), offset.into()),
        ("FAKETIME_DONT_FAKE_MONOTONIC".into(), "1".into()),
    ]
}

/// `yaraus run OPTS -- perl GENERATOR $D/NAME SECS` on `env`'s host.
fn generate(
    server: &RedisServer,
    scratch: &Scratch,
    name: &str,
    env: &[(String, String)],
    secs: &str,
    opts: &[&str],
) -> Run {
    generate_timed(server, scratch, name, env, secs, &with(&TIMINGS, opts))
}

/// [`generate`] with `timings` in place of [`TIMINGS`].
fn generate_timed(
    server: &RedisServer,
    scratch: &Scratch,
    name: &str,
    env: &[(String, String)],
    secs: &str,
    timings: &[&str],
) -> Run {
    require_test_tool("perl", "perl", "the tests' id generator is a perl script");
    let script = scratch.script("generator.pl", GENERATOR);
    let out = scratch.arg(name);
    let mut cmd = run_cmd(
        &server.url_ns(NS),
        scratch,
        timings,
        &["perl", &script, &out, secs],
    );
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let mut run = Run::spawn(cmd, scratch);
    run.name = format!("yaraus run ({name})");
    run
}

/// The pairs a generator made.
fn made(scratch: &Scratch, name: &str) -> Vec<(u64, u64)> {
    let text = fs::read_to_string(scratch.path(name)).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (ms, seq) = l.split_once(' ')?;
            Some((ms.parse().ok()?, seq.parse().ok()?))
        })
        .collect()
}

/// The clock record of id 1.
fn record(server: &RedisServer) -> Option<String> {
    server.query(&["HGET", &format!("{NS}:clock"), "A1"])
}

/// How many of `later`'s ids `earlier` had made already.
fn repeated(earlier: &[(u64, u64)], later: &[(u64, u64)]) -> usize {
    let seen: HashSet<_> = earlier.iter().collect();
    later.iter().filter(|p| seen.contains(p)).count()
}

/// Both holders made ids, and none twice: every id of the second is after
/// the first's last.
fn assert_no_id_twice(scratch: &Scratch, first: &str, second: &str) {
    let (a, b) = (made(scratch, first), made(scratch, second));
    assert!(
        !a.is_empty() && !b.is_empty(),
        "{} and {} ids",
        a.len(),
        b.len()
    );
    assert_eq!(repeated(&a, &b), 0, "ids of {first} made again by {second}");
    let last = a.iter().max().unwrap();
    let first_later = b.iter().min().unwrap();
    assert!(first_later > last, "{first_later:?} is not after {last:?}");
}

/// Runs a generator to its end; asserts exit 0.
fn generate_to_end(
    server: &RedisServer,
    scratch: &Scratch,
    name: &str,
    offset: &str,
    opts: &[&str],
) -> Run {
    let mut run = generate(server, scratch, name, &host(offset), "1.5", opts);
    assert_eq!(run.wait(), 0, "{}", run.log());
    run
}

#[test]
fn a_lagging_host_after_a_clean_release_makes_no_id_twice() {
    let (server, scratch) = fresh_pool(1, 1);
    generate_to_end(&server, &scratch, "a", "+0s", &[]);
    let b = generate_to_end(&server, &scratch, "b", "-3s", &[]);
    assert!(
        b.log().contains("for this host's clock to pass"),
        "the wait is said: {}",
        b.log()
    );
    assert_no_id_twice(&scratch, "a", "b");
}

/// The checker can see ids made twice: without the id's record (as after a
/// Go client, or a record lost with its pool, when no `--max-clock-offset`
/// bounds the clocks) the lagging host repeats the first one's ids.
#[test]
fn without_the_record_a_lagging_host_repeats_ids() {
    let (server, scratch) = fresh_pool(1, 1);
    generate_to_end(&server, &scratch, "a", "+0s", &[]);
    let _: i64 = server.query(&["DEL", &format!("{NS}:clock")]);
    generate_to_end(&server, &scratch, "b", "-3s", &[]);
    let repeats = repeated(&made(&scratch, "a"), &made(&scratch, "b"));
    assert!(repeats > 0, "no id repeated: the test proves nothing");
}

#[test]
fn a_lagging_host_after_a_frozen_holder_makes_no_id_twice() {
    // The watchdog kills a's command at a's deadline; the lease then runs
    // out, and b takes the id.
    after_a_holder_stopped_by(Signal::SIGSTOP);
}

#[test]
fn a_lagging_host_after_a_sigkilled_holder_makes_no_id_twice() {
    after_a_holder_stopped_by(Signal::SIGKILL);
}

/// Holder a, making ids, gets `signal`; a host 3 s behind waits for the id
/// and makes none of a's ids again.
fn after_a_holder_stopped_by(signal: Signal) {
    let (server, scratch) = fresh_pool(1, 1);
    let a = generate(&server, &scratch, "a", &host("+0s"), "600", &[]);
    wait_for_first_ids(&scratch, "a");
    a.signal(signal);
    let mut b = generate(
        &server,
        &scratch,
        "b",
        &host("-3s"),
        "1.5",
        &["--wait", "20s"],
    );
    assert_eq!(b.wait(), 0, "{}", b.log());
    assert_no_id_twice(&scratch, "a", "b");
    if signal != Signal::SIGKILL {
        a.signal(Signal::SIGKILL);
    }
}

/// Waits until the generator `name` has made its first ids.
fn wait_for_first_ids(scratch: &Scratch, name: &str) {
    wait_until(&format!("{name}'s first ids"), EVENT, || {
        !made(scratch, name).is_empty()
    });
}

/// The pool restarted empty while a holds its id: b re-creates it and takes
/// the id at once. With `--max-clock-offset` on both hosts, b waits until no
/// holder within that offset of the server can have made a later id.
#[test]
fn a_lagging_host_after_a_lost_record_makes_no_id_twice_within_max_clock_offset() {
    let (server, scratch) = fresh_pool(1, 1);
    let bound = ["--min", "1", "--max", "1", "--max-clock-offset", "3500ms"];
    let mut a = generate(&server, &scratch, "a", &host("+0s"), "600", &bound);
    wait_for_first_ids(&scratch, "a");
    let keys = ["ids", "clients", "stats", "clock"].map(|k| format!("{NS}:{k}"));
    let _: i64 = server.query(&with(
        &["DEL"],
        &keys.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    let mut b = generate(&server, &scratch, "b", &host("-3s"), "1.5", &bound);
    assert_eq!(a.wait(), 124, "a loses its id: {}", a.log());
    assert_eq!(b.wait(), 0, "{}", b.log());
    assert!(
        b.log().contains("no clock record") || b.log().contains("for this host's clock to pass"),
        "{}",
        b.log()
    );
    assert_no_id_twice(&scratch, "a", "b");
}

#[test]
fn a_host_ahead_starts_without_an_extra_wait() {
    let (server, scratch) = fresh_pool(1, 1);
    generate_to_end(&server, &scratch, "a", "-3s", &[]);
    let b = generate_to_end(&server, &scratch, "b", "+0s", &[]);
    assert!(
        !b.log().contains("for this host's clock to pass"),
        "{}",
        b.log()
    );
    assert_no_id_twice(&scratch, "a", "b");
}

#[test]
fn a_lag_beyond_max_clock_wait_is_refused_and_the_id_released() {
    let (server, scratch) = fresh_pool(1, 1);
    generate_to_end(&server, &scratch, "a", "+0s", &[]);
    let before = record(&server);
    assert!(before.is_some(), "a's release left the id's record");
    let mut b = generate(
        &server,
        &scratch,
        "b",
        &host("-3s"),
        "1.5",
        &["--max-clock-wait", "1s"],
    );
    assert_eq!(b.wait(), 75, "{}", b.log());
    let log = b.log();
    let line = log.lines().last().unwrap_or("");
    for part in [
        "--max-clock-wait 1s",
        "on its clock",
        "this host's clock shows",
        "gave the id back",
    ] {
        assert!(line.contains(part), "{part:?} in {line:?}");
    }
    assert!(made(&scratch, "b").is_empty(), "b's command never ran");
    assert_eq!(
        record(&server),
        before,
        "the record is put back as b found it"
    );
    assert!(
        score(&server, 1).unwrap() <= server_now(&server),
        "id 1 is free again"
    );
}

#[test]
fn a_host_beyond_max_clock_offset_is_refused() {
    let (server, scratch) = fresh_pool(1, 1);
    let mut run = generate(
        &server,
        &scratch,
        "a",
        &host("+3s"),
        "1.5",
        &["--max-clock-offset", "1s"],
    );
    assert_eq!(run.wait(), 75, "{}", run.log());
    assert!(
        run.last_line().contains("more than --max-clock-offset 1s"),
        "{}",
        run.log()
    );
    assert!(made(&scratch, "a").is_empty());
    assert_eq!(
        record(&server),
        None,
        "a lease that never ran leaves no record"
    );
    assert!(
        score(&server, 1).unwrap() <= server_now(&server),
        "id 1 is free again"
    );
}

/// The line of `run`'s log that warns of its offset.
fn offset_warning(run: &Run) -> String {
    let log = run.log();
    let line = log.lines().find(|l| l.contains("ahead of the server's"));
    line.unwrap_or_else(|| panic!("no offset warning: {log}"))
        .to_string()
}

/// A drifting host is told what guards its ids: for an id without a clock
/// record (a new pool here) nothing but the grace delay, and what to do;
/// once the first holder left a record, that record.
#[test]
fn the_offset_warning_says_what_guards_the_ids() {
    let (server, scratch) = fresh_pool(1, 1);
    let first = generate_to_end(&server, &scratch, "a", "+2s", &[]);
    let warning = offset_warning(&first);
    for part in [
        "id 1 had no clock record",
        "nothing but the grace delay",
        "set --max-clock-offset on every host",
    ] {
        assert!(warning.contains(part), "{part:?} in {warning:?}");
    }
    assert!(record(&server).is_some(), "a's release left a record");
    let second = generate_to_end(&server, &scratch, "b", "+2s", &[]);
    let warning = offset_warning(&second);
    assert!(
        warning.contains("guarded by the id's clock record"),
        "{warning:?}"
    );
}

/// The first holder of an id on a new pool, with `--max-clock-offset`:
/// there is no previous holder to wait for, and it says what it waits for
/// instead, and what guards its ids.
#[test]
fn without_a_record_max_clock_offset_says_it_waits_for_the_servers_time_plus_the_bound() {
    let (server, scratch) = fresh_pool(1, 1);
    let bound = ["--max-clock-offset", "3s"];
    let run = generate_to_end(&server, &scratch, "a", "+2s", &bound);
    let log = run.log();
    let waiting = log
        .lines()
        .find(|l| l.contains("for this host's clock to pass"))
        .unwrap_or_else(|| panic!("no wait said: {log}"));
    assert!(
        waiting.contains("the server's time at the end of --delay plus --max-clock-offset"),
        "{waiting:?}"
    );
    assert!(!waiting.contains("previous holder"), "{waiting:?}");
    let warning = offset_warning(&run);
    assert!(
        warning.contains("guarded only by --max-clock-offset 3s"),
        "{warning:?}"
    );
}

/// A host 2 s ahead: warned of, and its offset is in `stats` (JSON and
/// Prometheus) and `list` (JSON and table).
#[test]
fn offsets_are_warned_of_and_reported() {
    let (server, scratch) = fresh_pool(1, 1);
    let run = generate(&server, &scratch, "a", &host("+2s"), "600", &[]);
    run.wait_log("ahead of the server's");
    let url = server.url_ns(NS);
    let yaraus = |args: &[&str]| -> String {
        let out = super::common::yaraus()
            .args(["--redis", &url])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let near_2s = |ms: i64| (1900..=2100).contains(&ms);
    let stats: serde_json::Value = serde_json::from_str(&yaraus(&["stats"])).unwrap();
    let offset = stats["clock_offsets"][0]["offset_ms"].as_i64().unwrap_or(0);
    assert!(near_2s(offset), "{stats}");
    assert_eq!(stats["clock_offsets"][0]["id"], 1);
    let prom = yaraus(&["stats", "--format", "prometheus"]);
    let line = prom
        .lines()
        .find(|l| l.starts_with("yaraus_clock_offset_seconds{"))
        .unwrap_or("");
    let secs: f64 = line.rsplit(' ').next().unwrap_or("").parse().unwrap_or(0.0);
    assert!((1.9..=2.1).contains(&secs), "{prom}");
    let list: serde_json::Value = serde_json::from_str(&yaraus(&["list"])).unwrap();
    assert!(
        near_2s(list[0]["clock_offset_ms"].as_i64().unwrap_or(0)),
        "{list}"
    );
    let table = yaraus(&["list", "--format", "table"]);
    let row = table.lines().nth(1).unwrap_or("");
    let column = row.split_whitespace().last().unwrap_or("");
    let ms: i64 = column
        .split_once("ms±")
        .and_then(|(ms, _)| ms.parse().ok())
        .unwrap_or(0);
    assert!(near_2s(ms), "{table}");
}

/// A wall clock that steps back while the command runs (libfaketime reading
/// its offset from a file that the test changes).
fn stepping_host(scratch: &Scratch) -> (Vec<(String, String)>, std::path::PathBuf) {
    let file = scratch.path("faketime");
    fs::write(&file, "+0s\n").unwrap();
    let mut env = host("+0s");
    env.retain(|(k, _)| k != "FAKETIME");
    env.push(("FAKETIME_TIMESTAMP_FILE".into(), file.display().to_string()));
    env.push(("FAKETIME_NO_CACHE".into(), "1".into()));
    (env, file)
}

#[test]
fn a_step_back_is_reported_and_counted() {
    let (server, scratch) = fresh_pool(1, 1);
    let (env, file) = stepping_host(&scratch);
    let run = generate(&server, &scratch, "a", &env, "600", &[]);
    wait_for_first_ids(&scratch, "a");
    fs::write(&file, "-2s\n").unwrap();
    run.wait_log("stepped back by");
    wait_until("the step counted", EVENT, || {
        stat(&server, "clock_step_back") >= 1
    });
}

#[test]
fn stop_on_clock_step_stops_the_command() {
    let (server, scratch) = fresh_pool(1, 1);
    let (env, file) = stepping_host(&scratch);
    let mut run = generate(
        &server,
        &scratch,
        "a",
        &env,
        "600",
        &["--stop-on-clock-step"],
    );
    wait_for_first_ids(&scratch, "a");
    fs::write(&file, "-2s\n").unwrap();
    assert_eq!(run.wait(), 124, "{}", run.log());
    assert!(
        run.log().contains("--stop-on-clock-step stops the command"),
        "{}",
        run.log()
    );
}

/// A wall clock stepped forward after the last renewal: the ids made since
/// are above every horizon the renewals recorded, so the release must read
/// the clock again, or the next holder starts inside them.
#[test]
fn a_forward_step_after_the_last_renewal_is_in_the_released_record() {
    let (server, scratch) = fresh_pool(1, 1);
    let (env, file) = stepping_host(&scratch);
    // No renewal while the generator runs (1.5 s, interval 5 s): only the
    // lease and the release read the clock.
    let slow = [
        "--interval",
        "5s",
        "--kill-after",
        "100ms",
        "--expire",
        "20s",
    ];
    let mut a = generate_timed(&server, &scratch, "a", &env, "1.5", &slow);
    wait_for_first_ids(&scratch, "a");
    fs::write(&file, "+3s\n").unwrap();
    assert_eq!(a.wait(), 0, "{}", a.log());
    let b = generate_to_end(&server, &scratch, "b", "+0s", &[]);
    drop(b);
    assert_no_id_twice(&scratch, "a", "b");
}
