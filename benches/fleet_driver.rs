//! One driver process of the fleet bench (`fleet.rs`): leases its share of
//! the pool through the library, one [`Leaser`] (so one client id) per
//! lease and one connection for them all, then renews every lease at its
//! interval, the leases' turns spread evenly over it, until its stdin
//! closes.
//!
//! The parent steers it by lines on its stdin (`measure`: record each
//! renewal's latency from now; `rest`: stop recording, keep renewing; end of
//! input: stop) and learns where it is from its stdout: `leased` once every
//! lease is held, then, after the end of input, its [`Record`].

use std::io::BufRead;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use yaraus::claim::{Claim, RenewError};
use yaraus::lease::{Acquired, Lease, Leaser, PoolKeys};
use yaraus::store::{Store, Target};
use yaraus::timing::Timeouts;
use yaraus::timing::lease::{Requested, Timing};

/// Leases taken at once while the fleet starts.
const LEASING_AT_ONCE: usize = 32;

/// The lease length (the default of `yaraus run`): it changes nothing of a
/// renewal's cost.
const EXPIRE: Duration = Duration::from_secs(30 * 60);

/// What the parent asked for last.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Warm,
    Measure,
    Rest,
    Stop,
}

/// What a driver measured.
#[derive(Default)]
pub struct Record {
    /// Each lease's latency, from the start of its attempt to its reply.
    pub lease: Vec<Duration>,
    /// Each renewal's latency, those begun while measuring.
    pub renewal: Vec<Duration>,
    /// Renewals that failed while measuring.
    pub failed: u64,
    /// Why, the first failure's words (after that, the count says how many).
    pub why: Option<String>,
}

impl Record {
    pub fn merge(&mut self, other: Record) {
        self.lease.extend(other.lease);
        self.renewal.extend(other.renewal);
        self.failed += other.failed;
        self.why = self.why.take().or(other.why);
    }

    /// Three lines: `lease` and `renewal` each followed by microseconds,
    /// and `failed N`; then `why WORDS` if one failed.
    fn print(&self) {
        let us = |v: &[Duration]| {
            v.iter()
                .map(|d| d.as_micros().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        println!("lease {}", us(&self.lease));
        println!("renewal {}", us(&self.renewal));
        println!("failed {}", self.failed);
        if let Some(why) = &self.why {
            println!("why {}", why.replace('\n', " "));
        }
    }

    pub fn parse(text: &str) -> Record {
        let mut record = Record::default();
        for line in text.lines() {
            if let Some(why) = line.strip_prefix("why ") {
                record.why = Some(why.to_string());
                continue;
            }
            let mut words = line.split_whitespace();
            let name = words.next().unwrap_or("");
            let numbers = words.map(|w| w.parse::<u64>().expect("a number"));
            match name {
                "lease" => record.lease = numbers.map(Duration::from_micros).collect(),
                "renewal" => record.renewal = numbers.map(Duration::from_micros).collect(),
                "failed" => record.failed = numbers.sum(),
                _ => panic!("a driver printed {line:?}"),
            }
        }
        record
    }
}

/// `--drive URL LEASES INTERVAL_S`: the driver's whole life.
pub fn drive(args: &[String]) {
    let at = args.iter().position(|a| a == "--drive").unwrap();
    let url = &args[at + 1];
    let leases: usize = args[at + 2].parse().expect("LEASES");
    let interval = Duration::from_secs(args[at + 3].parse().expect("INTERVAL_S"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let record = rt.block_on(fleet(url, leases, interval));
    record.print();
}

async fn fleet(url: &str, n: usize, interval: Duration) -> Record {
    let target = Target::parse(url).expect("the URL");
    let ns = target.namespace().expect("?ns= in the URL").to_string();
    let keys = match target.is_cluster() {
        true => PoolKeys::in_cluster(&ns),
        false => PoolKeys::new(&ns),
    };
    let store = Store::connect(&target, Timeouts::from_timeout(Duration::from_secs(5)))
        .await
        .expect("connect");
    let (timing, _) = Timing::safeguarded(Requested {
        interval,
        delay: None,
        expire: EXPIRE,
        kill_after: None,
        safeguards: true,
    })
    .expect("timing");
    let (leases, lease_latency) = lease_all(&store, &keys, &timing, n).await;
    println!("leased");

    let (tx, rx) = watch::channel(Phase::Warm);
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let phase = match line.as_deref() {
                Ok("measure") => Phase::Measure,
                Ok("rest") => Phase::Rest,
                _ => break,
            };
            let _ = tx.send(phase);
        }
        let _ = tx.send(Phase::Stop);
    });
    let start = tokio::time::Instant::now();
    let tasks: Vec<_> = leases
        .into_iter()
        .enumerate()
        .map(|(i, lease)| {
            let first = start + interval.mul_f64(i as f64 / n as f64);
            tokio::spawn(renew_until_stopped(lease, first, interval, rx.clone()))
        })
        .collect();
    let mut record = Record {
        lease: lease_latency,
        ..Record::default()
    };
    for task in tasks {
        let (latency, failed, why) = task.await.expect("a renewing task");
        record.renewal.extend(latency);
        record.failed += failed;
        record.why = record.why.or(why);
    }
    record
}

/// `n` leases, [`LEASING_AT_ONCE`] at a time, and each one's latency.
async fn lease_all(
    store: &Store,
    keys: &PoolKeys,
    timing: &Timing,
    n: usize,
) -> (Vec<Lease>, Vec<Duration>) {
    let next = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..LEASING_AT_ONCE)
        .map(|_| {
            let (store, keys, timing, next) = (store.clone(), keys.clone(), *timing, next.clone());
            tokio::spawn(async move {
                let mut held = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < n {
                    let mut leaser = Leaser::new(store.clone(), keys.clone(), &timing);
                    let sent = Instant::now();
                    match leaser.try_lease().await {
                        Ok(Acquired::Leased(lease)) => held.push((*lease, sent.elapsed())),
                        Ok(Acquired::Exhausted { .. }) => panic!("the pool is full"),
                        Ok(Acquired::NotReplicated { why }) => panic!("{why}"),
                        Err(e) => panic!("a lease failed: {e}"),
                    }
                }
                held
            })
        })
        .collect();
    let mut out = (Vec::with_capacity(n), Vec::with_capacity(n));
    for w in workers {
        for (lease, latency) in w.await.expect("a leasing task") {
            out.0.push(lease);
            out.1.push(latency);
        }
    }
    out
}

/// Renews `lease` every `interval` from `first` until told to stop: the
/// latency of each renewal begun while measuring, how many failed, and
/// why the first did.
async fn renew_until_stopped(
    mut lease: Lease,
    first: tokio::time::Instant,
    interval: Duration,
    phase: watch::Receiver<Phase>,
) -> (Vec<Duration>, u64, Option<String>) {
    let mut ticks = tokio::time::interval_at(first, interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let (mut latency, mut failed, mut why) = (Vec::new(), 0, None);
    loop {
        ticks.tick().await;
        let now = *phase.borrow();
        if now == Phase::Stop {
            return (latency, failed, why);
        }
        let sent = Instant::now();
        let renewed = lease.renew().await;
        if now == Phase::Measure {
            match renewed {
                Ok(_) => latency.push(sent.elapsed()),
                Err(e) => {
                    failed += 1;
                    why.get_or_insert_with(|| match e {
                        RenewError::Lost(why) => format!("lost: {why}"),
                        RenewError::Failed(e) => format!("failed: {e}"),
                    });
                }
            }
        }
    }
}
