//! The `run` clients of the rolling replacement: the chaos fleet
//! ([`crate::chaos::harness::Fleet`]: 5 clients, 3 ids, children logging their
//! lives) on the Sentinel group of [`super::group`], and the pool's faults
//! between two wipes, each awaited until every id is held again.
//!
//! No one runs `yaraus init`: the clients' `--min 1 --max 3` creates the pool
//! at the start and again whenever it has vanished. The safeguards stay on
//! (the default `--delay`, 2 × interval + kill-after), which is what makes a
//! pool created again safe: a previous holder of an id learns at its next
//! renewal that its lease is gone and stops within `--kill-after`, before
//! the id's new holder's delay is over. `--min-replicas 1` is what a
//! Sentinel group needs (docs/deployment.md): a lease counts only once the
//! replica has it, so a promoted replica has every lease that counted.

use super::group::{GROUP_BOUND, Group};
use crate::chaos::child::now_ns;
use crate::chaos::common::sentinel::MASTER_NAME;
use crate::chaos::figures::Outcome;
use crate::chaos::harness::{ClientSpec, Fleet};
use crate::chaos::{GRACE, IDS, POOL_NS, RUN_CLIENTS, RUN_OPTS, resources, stubborn};
use std::time::Duration;

/// The pool's fault between two wipes.
#[derive(Clone, Copy, Debug)]
pub enum PoolFault {
    RestartEmpty,
    Failover,
}

/// The Sentinel group, the fleet on it, and the time from each pool fault
/// to every id held again.
pub struct Runs {
    // The fleet first: on a failure, its clients stop before the servers go.
    fleet: Fleet,
    group: Group,
    recoveries: Vec<Duration>,
    /// Pools created by the clients so far (the first one included).
    created: usize,
}

/// What `run` warns of when it creates a pool that is gone.
const CREATED: &str = "did not exist";

/// What the fleet did, once finished.
pub struct RunFigures {
    pub outcome: Outcome,
    pub restarts: usize,
    pub failovers: usize,
    pub switches: usize,
    /// Pools created by the clients (the first one included).
    pub created: usize,
    pub recoveries: Vec<Duration>,
}

/// `run --sentinel mymaster --redis SENTINEL... -N t RUN_OPTS --min 1 --max
/// IDS --min-replicas 1`, the last client's children stubborn.
fn specs(group: &Group) -> Vec<ClientSpec> {
    let mut args: Vec<String> = ["run", "--sentinel", MASTER_NAME, "--namespace", POOL_NS]
        .map(String::from)
        .to_vec();
    for url in group.sentinel_urls() {
        args.extend(["--redis".to_string(), url]);
    }
    args.extend(RUN_OPTS.iter().map(|s| s.to_string()));
    let (max, one) = (IDS.to_string(), "1".to_string());
    args.extend(["--min".into(), one.clone(), "--max".into(), max]);
    args.extend(["--min-replicas".into(), one]);
    stubborn((0..RUN_CLIENTS).map(|_| ClientSpec::new(&args)).collect())
}

impl Runs {
    /// The group and the fleet, awaited until every id is held (the pool
    /// created by the clients themselves).
    pub fn start() -> Runs {
        let group = Group::start();
        let mut fleet = Fleet::start(&specs(&group), &resources(false), GRACE);
        fleet.set_settle(GROUP_BOUND);
        fleet.wait_all_held();
        let mut runs = Runs {
            fleet,
            group,
            recoveries: Vec::new(),
            created: 0,
        };
        runs.created = runs.created();
        runs
    }

    /// One fault of the pool, once the group is whole: every child that
    /// holds an id then must be gone (its lease vanished, or not confirmed
    /// by a replica for longer than `--expire`), and every id held again by
    /// another. Then awaits the group whole again, for the next fault.
    pub fn fault(&mut self, fault: PoolFault) {
        let master = self.group.wait_whole();
        let holders = self.fleet.wait_all_held();
        let victims: Vec<i32> = holders.values().map(|l| l.pid).collect();
        let switches = self.group.switches();
        let at = now_ns();
        match fault {
            PoolFault::RestartEmpty => self.group.restart_empty(master),
            PoolFault::Failover => self.group.failover(master),
        }
        let recovered = self.fleet.wait_recovered(at, &victims);
        self.recoveries.push(recovered);
        self.group.wait_whole();
        let created = self.created();
        eprintln!(
            "chaos: rolling: pool fault {}: {fault:?}; pool created again: {}; \
             Sentinel switched masters {} time(s); every id held again after {} ms",
            self.recoveries.len(),
            created > self.created,
            self.group.switches() - switches,
            recovered.as_millis()
        );
        if let PoolFault::RestartEmpty = fault {
            assert!(
                created > self.created,
                "the pool's master restarted empty, yet no client created the pool again \
                 (run's warning \"{CREATED}\"): the scenario did not test what it should"
            );
        }
        self.created = created;
    }

    /// How many times a client found the pool gone and created it (its
    /// warning, src/lease/recovery.rs), so far.
    fn created(&self) -> usize {
        self.fleet.client_logs().matches(CREATED).count()
    }

    /// Stops the fleet and reads its log back as lives.
    pub fn finish(self) -> RunFigures {
        let (switches, created) = (self.group.switches(), self.created());
        RunFigures {
            created,
            outcome: self.fleet.finish(),
            restarts: self.group.restarts,
            failovers: self.group.failovers,
            switches,
            recoveries: self.recoveries,
        }
    }
}
