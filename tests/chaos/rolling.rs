//! A rolling replacement with no operator: three `seq` nodes, three hilo
//! shards and three lock masters (every one `appendfsync always`), each
//! wiped and restarted empty in turn while clients keep taking ids, blocks
//! and locks; between two wipes, once the wiped node votes again, another
//! node restarts from its AOF and a third is frozen for a moment. Nobody
//! runs `set-floor` or sets a counter: the wiped nodes heal by themselves
//! (src/seq/heal.rs), so that the next wipe still leaves a majority of
//! holders.
//!
//! Every call is recorded as a history (when it began and ended, on this
//! process's monotonic clock, and what it got) and checked afterwards: no id
//! twice and real-time order for the sequence (`seq next` and `seq serve`
//! together: one sequence); no id in two hilo blocks; no fencing token
//! twice, and real-time order for the tokens. The report line gives the
//! calls answered and the time from each wipe to the node voting again.

use super::common::RedisServer;
use super::common::lock::masters;
use super::harness::{Budget, serial};
use std::collections::HashSet;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SEQ_KEY: &str = "yaraus:seq:orders";
const LOCK_FENCE: &str = "yaraus:fencing:deploy";
const HILO: &str = "ids";
/// Time for a wiped node to vote again: its 10 s quarantine, the next heal
/// pass, and a loaded machine.
const HEAL_BOUND: Duration = Duration::from_secs(60);

/// One call: when it began and ended, and what it got (None: it failed).
#[derive(Clone, Debug)]
struct Call {
    start: Instant,
    end: Instant,
    got: Option<(u64, u64)>,
}

type History = Arc<Mutex<Vec<Call>>>;

/// The three kinds of deployment, each on its own three servers.
struct Deployments {
    seq: Vec<RedisServer>,
    hilo: Vec<RedisServer>,
    lock: Vec<RedisServer>,
}

impl Deployments {
    /// The server of each deployment at `i`, with the key that holds its
    /// counter (the agent's lock fencing counter, for the hilo shards).
    fn at(&mut self, i: usize) -> [(&mut RedisServer, String); 3] {
        [
            (&mut self.seq[i], SEQ_KEY.to_string()),
            (
                &mut self.hilo[i],
                format!("yaraus:fencing:yaraus:hilo:{{{HILO}}}:agent"),
            ),
            (&mut self.lock[i], LOCK_FENCE.to_string()),
        ]
    }
}

fn urls(servers: &[RedisServer]) -> Vec<String> {
    servers
        .iter()
        .flat_map(|s| ["--redis".to_string(), s.url()])
        .collect()
}

/// A long-running yaraus, killed when dropped.
struct Service(Child);

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn service(args: &[String], log: &std::path::Path) -> Service {
    let log = std::fs::File::create(log).unwrap();
    let child = super::common::yaraus()
        .args(args)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("spawn yaraus");
    Service(child)
}

/// Runs yaraus once; `Some(parsed stdout)` on exit 0.
fn call(args: &[String], parse: impl Fn(&str) -> Option<(u64, u64)>) -> Option<(u64, u64)> {
    let out = super::common::yaraus()
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("run yaraus");
    out.status
        .success()
        .then(|| parse(&String::from_utf8_lossy(&out.stdout)))
        .flatten()
}

/// A client loop recording into `history` until `stop`.
fn client(
    stop: &Arc<AtomicBool>,
    history: &History,
    mut once: impl FnMut() -> Option<(u64, u64)> + Send + 'static,
) -> std::thread::JoinHandle<()> {
    let (stop, history) = (Arc::clone(stop), Arc::clone(history));
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let start = Instant::now();
            let got = once();
            let end = Instant::now();
            history.lock().unwrap().push(Call { start, end, got });
            if got.is_none() {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    })
}

fn single(text: &str) -> Option<(u64, u64)> {
    let v = text.trim().parse().ok()?;
    Some((v, v))
}

fn pair(text: &str) -> Option<(u64, u64)> {
    let mut words = text.split_whitespace().map(|w| w.parse().ok());
    Some((words.next()??, words.next()??))
}

/// The port `seq serve` printed it listens on.
fn serve_port(log: &std::path::Path) -> u16 {
    let mut port = None;
    super::harness::await_event("seq serve to listen", || {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        port = text
            .split("listening on 127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|p| p.parse().ok());
        port.is_some()
    });
    port.unwrap()
}

/// A Redis client of `seq serve` taking ids with INCR.
fn serve_client(port: u16) -> impl FnMut() -> Option<(u64, u64)> + Send + 'static {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
    let mut conn: Option<redis::Connection> = None;
    move || {
        if conn.is_none() {
            conn = client
                .get_connection_with_timeout(Duration::from_secs(5))
                .ok();
        }
        let c = conn.as_mut()?;
        match redis::cmd("INCR").arg("orders").query::<u64>(c) {
            Ok(v) => Some((v, v)),
            Err(_) => {
                conn = None;
                None
            }
        }
    }
}

/// Asserts no value twice across `calls` (each a range) and, with
/// `ordered`, that a call that ended before another began got less.
fn check(what: &str, calls: &[Call], ordered: bool) -> usize {
    let got: Vec<&Call> = calls.iter().filter(|c| c.got.is_some()).collect();
    let mut seen = HashSet::new();
    for c in &got {
        let (first, last) = c.got.unwrap();
        for v in first..=last {
            assert!(seen.insert(v), "{what}: {v} handed out twice");
        }
    }
    if ordered {
        let mut by_end = got.clone();
        by_end.sort_by_key(|c| c.end);
        let mut by_start = got.clone();
        by_start.sort_by_key(|c| c.start);
        // For each call, the largest value of the calls that ended before it began.
        let (mut i, mut highest) = (0, None::<u64>);
        for c in by_start {
            while i < by_end.len() && by_end[i].end < c.start {
                highest = highest.max(Some(by_end[i].got.unwrap().1));
                i += 1;
            }
            if let Some(h) = highest {
                assert!(
                    c.got.unwrap().0 > h,
                    "{what}: {} began after {h} was handed out, but is not above it",
                    c.got.unwrap().0
                );
            }
        }
    }
    got.len()
}

/// Wipes node `i` of every deployment, then waits until each holds its
/// counter again; returns the times from the wipe to each heal.
fn wipe_and_heal(d: &mut Deployments, i: usize) -> Vec<Duration> {
    let wiped = Instant::now();
    for (server, _) in d.at(i) {
        server.restart_empty();
    }
    let mut healed = Vec::new();
    for (server, key) in d.at(i) {
        let what = format!(
            "{key} on the wiped node {} to hold a counter again",
            server.url()
        );
        super::common::wait_until(&what, HEAL_BOUND, || {
            let holds = server
                .try_query::<String>(&["GET", &key])
                .is_ok_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
            if !holds {
                std::thread::sleep(Duration::from_millis(50));
            }
            holds
        });
        healed.push(wiped.elapsed());
    }
    healed
}

/// Prints the services' logs (their last lines) when the test fails.
struct ShowLogs(std::path::PathBuf);

impl Drop for ShowLogs {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        for name in ["serve.log", "agent.log"] {
            let text = std::fs::read_to_string(self.0.join(name)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(30)..].join("\n");
            eprintln!("--- last lines of {name}:\n{tail}");
        }
    }
}

/// The clients and services that load the deployments until stopped.
struct Load {
    stop: Arc<AtomicBool>,
    clients: Vec<std::thread::JoinHandle<()>>,
    _services: [Service; 2],
    seq: History,
    hilo: History,
    lock: History,
}

/// `urls` (the global `--redis` options) then `head`: a lock's command
/// follows `--`, so the options must come first.
fn args(urls: &[String], head: &[&str]) -> Vec<String> {
    urls.iter()
        .cloned()
        .chain(head.iter().map(|s| s.to_string()))
        .collect()
}

impl Load {
    /// `seq serve` and two of its clients, two `seq next` loops, a hilo
    /// agent (`--every 200ms`) and a `hilo next` loop, two lock loops.
    fn start(d: &Deployments, scratch: &std::path::Path) -> Load {
        let (seq_urls, hilo_urls, lock_urls) = (urls(&d.seq), urls(&d.hilo), urls(&d.lock));
        let serve_log = scratch.join("serve.log");
        let serve = service(
            &args(&seq_urls, &["seq", "serve", "--listen", "127.0.0.1:0"]),
            &serve_log,
        );
        let port = serve_port(&serve_log);
        let agent = [
            "hilo",
            "agent",
            HILO,
            "--every",
            "200ms",
            "--window-size",
            "500",
        ];
        let agent = service(&args(&hilo_urls, &agent), &scratch.join("agent.log"));
        let stop = Arc::new(AtomicBool::new(false));
        let (seq, hilo, lock): (History, History, History) = Default::default();
        let next = args(&seq_urls, &["seq", "next", "orders"]);
        let hilo_next = args(&hilo_urls, &["hilo", "next", HILO, "--batch", "10"]);
        let echo = "echo $YARAUS_FENCING_TOKEN";
        let locked = [
            "lock", "deploy", "-w", "10s", "--ttl", "2s", "--", "sh", "-c", echo,
        ];
        let locked = args(&lock_urls, &locked);
        let mut clients = Vec::new();
        for _ in 0..2 {
            let (next, locked) = (next.clone(), locked.clone());
            clients.push(client(&stop, &seq, move || call(&next, single)));
            clients.push(client(&stop, &seq, serve_client(port)));
            clients.push(client(&stop, &lock, move || call(&locked, single)));
        }
        clients.push(client(&stop, &hilo, move || call(&hilo_next, pair)));
        Load {
            stop,
            clients,
            _services: [serve, agent],
            seq,
            hilo,
            lock,
        }
    }

    /// Stops the clients; checks the histories; returns (calls, answered).
    fn finish(self) -> (usize, usize) {
        self.stop.store(true, Ordering::Relaxed);
        for c in self.clients {
            c.join().unwrap();
        }
        let history = |h: &History| h.lock().unwrap().clone();
        let (seq, hilo, lock) = (history(&self.seq), history(&self.hilo), history(&self.lock));
        let answered =
            check("seq", &seq, true) + check("hilo", &hilo, false) + check("lock", &lock, true);
        (seq.len() + hilo.len() + lock.len(), answered)
    }
}

/// The report line, on stderr and in `$CHAOS_REPORT` (scripts/chaos.sh).
fn report(cycles: usize, (total, answered): (usize, usize), mut heals: Vec<Duration>) {
    heals.sort();
    let line = format!(
        "rolling: cycles={cycles} wipes={} calls={total} answered={answered} ({:.2}%) \
         duplicates=0 order_violations=0 heal_p50={}ms heal_max={}ms",
        cycles * 9,
        100.0 * answered as f64 / total.max(1) as f64,
        heals[heals.len() / 2].as_millis(),
        heals.last().unwrap().as_millis(),
    );
    eprintln!("chaos: {line}");
    if let Some(path) = std::env::var_os("CHAOS_REPORT") {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("open $CHAOS_REPORT");
        writeln!(f, "{line}").expect("write $CHAOS_REPORT");
    }
}

#[test]
fn a_rolling_replacement_of_every_node_heals_with_no_operator_and_no_value_twice() {
    let _serial = serial();
    let mut d = Deployments {
        seq: masters(3, true),
        hilo: masters(3, true),
        lock: masters(3, true),
    };
    let scratch = tempfile::tempdir().unwrap();
    let load = Load::start(&d, scratch.path());
    // On a failure, the services' logs say what they were doing.
    let _logs = ShowLogs(scratch.path().to_path_buf());
    let budget = Budget::new(1);
    let (mut cycles, mut heals) = (0, Vec::new());
    while budget.more(cycles) {
        for i in 0..3 {
            heals.extend(wipe_and_heal(&mut d, i));
            // Between two wipes: another node restarts from its AOF, a
            // third is frozen for a moment.
            d.seq[(i + 1) % 3].restart();
            d.lock[(i + 1) % 3].restart();
            d.hilo[(i + 2) % 3].sigstop();
            std::thread::sleep(Duration::from_millis(500));
            d.hilo[(i + 2) % 3].sigcont();
        }
        cycles += 1;
    }
    let calls = load.finish();
    report(cycles, calls, heals);
    assert!(
        calls.1 > 0,
        "no call was answered: the scenario proves nothing"
    );
}
