//! What a survey finds: each thing that is not as it should be, said so
//! that a person knows what happens next, or what to decide.

use super::finding::Finding;
use super::survey::{ShardMark, Survey};
use crate::base::duration::shown;
use crate::seq::census::{Counter, Kind, Place, Standing};
use crate::store::{Fitness, ReplicaState, Role};
use crate::timing::sequence::{CREATION_QUARANTINE, QUARANTINE, SWEEP_EVERY};

impl Survey {
    /// Everything found wrong, nodes first.
    pub fn findings(&self) -> Vec<Finding> {
        let mut found = self.node_findings();
        for (label, why) in &self.census.unlisted {
            found.push(Finding::degraded(
                label,
                "unlisted",
                format!(
                    "its keys could not be listed ({why}): a counter only it holds is not shown"
                ),
            ));
        }
        for counter in &self.census.counters {
            found.extend(self.counter_findings(counter));
        }
        for mark in &self.shards {
            found.extend(self.shard_findings(mark));
        }
        found.extend(self.replication_findings());
        if let Some(pool) = &self.pool
            && let Some(problem) = &pool.problem
        {
            found.push(Finding::lost(&pool.key, "unreadable", problem.clone()));
        }
        found
    }

    fn node_findings(&self) -> Vec<Finding> {
        let mut found = Vec::new();
        let mut down = Vec::new();
        for node in &self.nodes {
            let (state, text) = match &node.fitness {
                Fitness::Fit => continue,
                Fitness::Down(why) => {
                    down.push(node.redis.as_str());
                    ("out_of_reach", format!("out of reach: {why}"))
                }
                Fitness::NotDurable(why) => (
                    "not_durable",
                    format!("does not vote, it may lose a write it acknowledged: {why}"),
                ),
                Fitness::Refused(why) => ("refused", format!("refuses yaraus: {why}")),
            };
            found.push(Finding::degraded(&node.redis, state, text));
        }
        if self.nodes.len() > 1 && down.len() >= self.census.majority {
            found.push(Finding::lost(
                down.join(", "),
                "majority_out_of_reach",
                format!(
                    "a majority ({} of {}) is out of reach: no sequence, lock or fencing token \
                     can be handed out until they answer again",
                    down.len(),
                    self.nodes.len()
                ),
            ));
        }
        found
    }

    /// A replica that is not online (a failover to it now would lose
    /// data), a node given as a master that is a replica cut off from its
    /// master, replication that cannot be read. An online replica's few
    /// unacknowledged bytes are normal (a `WAIT` adds its own), not a finding.
    fn replication_findings(&self) -> Vec<Finding> {
        let mut found = Vec::new();
        for (node, replication) in self.nodes.iter().zip(&self.replication) {
            let replication = match replication {
                Ok(r) => r,
                Err(_) if node.fitness != Fitness::Fit => continue,
                Err(why) => {
                    found.push(Finding::degraded(
                        &node.redis,
                        "replicas_unread",
                        why.clone(),
                    ));
                    continue;
                }
            };
            if let Role::Replica {
                master,
                link_up: false,
                ..
            } = &replication.role
            {
                found.push(Finding::degraded(
                    &node.redis,
                    "replica_cut_off",
                    format!("is a replica of {master} whose link to it is down"),
                ));
            }
            for replica in &replication.replicas {
                if replica.state == ReplicaState::Online {
                    continue;
                }
                if let Some((stands, loses)) = replica.failover_loss() {
                    found.push(Finding::degraded(
                        &node.redis,
                        "replica_not_in_sync",
                        format!(
                            "its replica {} {stands}: a failover to it now {loses}; wait until \
                             it is online before the next step",
                            replica.address
                        ),
                    ));
                }
            }
        }
        found
    }

    fn counter_findings(&self, counter: &Counter) -> Vec<Finding> {
        let labels = self.labels();
        match counter.standing(self.census.majority) {
            Standing::Held | Standing::OutOfReach => Vec::new(),
            Standing::Degraded => counter
                .places
                .iter()
                .zip(&labels)
                .filter_map(|(place, label)| {
                    lacking(counter, place)
                        .map(|(state, text)| Finding::degraded(*label, state, text))
                })
                .collect(),
            Standing::Lost => vec![lost(counter, &labels, self.census.majority)],
            Standing::Unsettled => vec![unsettled(counter, &self.namespace, self.census.majority)],
        }
    }

    fn shard_findings(&self, mark: &ShardMark) -> Vec<Finding> {
        let labels = self.labels();
        let lacking = mark.lacking();
        if lacking.is_empty() {
            return Vec::new();
        }
        let holders = mark
            .marks
            .iter()
            .filter(|m| matches!(m, Ok(Some(_))))
            .count();
        let names: Vec<&str> = lacking.iter().map(|&i| labels[i]).collect();
        let text = format!(
            "hilo {}: {} lack{} the high-water mark (restarted empty?), {} of {} shards hold it; \
             an agent run copies it back (`yaraus hilo agent {} --once`, or the next run of \
             `hilo agent --every`); every shard lost at once would hand ids out again",
            mark.name,
            names.join(", "),
            if names.len() == 1 { "s" } else { "" },
            holders,
            mark.marks.len(),
            mark.name,
        );
        vec![Finding::degraded(names.join(", "), "mark_missing", text)]
    }
}

/// What a node lacking a counter that a majority holds means, if anything.
fn lacking(counter: &Counter, place: &Place) -> Option<(&'static str, String)> {
    let key = &counter.key;
    let next = format!(
        "the next sweep or call marks it, and sets it again from the majority {} later on its \
         clock (`seq serve` and `hilo agent --every` sweep every {}; `yaraus health --wait` \
         until done)",
        shown(QUARANTINE),
        shown(SWEEP_EVERY)
    );
    Some(match place {
        Place::Holds(_) | Place::OutOfReach(_) => return None,
        Place::Missing | Place::Unborn(_) => (
            "missing",
            format!(
                "lacks the {} {key} (restarted empty?): {next}",
                counter.kind.noun()
            ),
        ),
        Place::Quarantined { left, .. } if left.is_zero() => (
            "ripe",
            format!("{key}: its quarantine is over; set again by the next sweep or call"),
        ),
        Place::Quarantined { left, .. } => (
            "quarantined",
            format!(
                "{key}: quarantined, ripe in {}; then set again from the majority by the next \
                 sweep or call",
                shown(*left)
            ),
        ),
        Place::Preparing(_) => (
            "preparing",
            format!(
                "{key}: holds a creation's state beside nodes that hold the counter: it does not vote; \
             `yaraus seq set-floor` with the majority's value sets it"
            ),
        ),
        Place::Other(what) => (
            "other",
            format!("{key}: {what}; it does not vote until that key is mended"),
        ),
    })
}

/// A counter a majority lost at once: what is left, and what to decide.
fn lost(counter: &Counter, labels: &[&str], majority: usize) -> Finding {
    let key = &counter.key;
    let without: Vec<&str> = counter
        .places
        .iter()
        .zip(labels)
        .filter(|(p, _)| !p.holds() && !matches!(p, Place::OutOfReach(_)))
        .map(|(_, l)| *l)
        .collect();
    let highest = counter
        .places
        .iter()
        .zip(labels)
        .filter_map(|(p, l)| match p {
            Place::Holds(v) => Some((*v, *l)),
            _ => None,
        })
        .max();
    let left = highest.map_or(String::new(), |(v, l)| {
        format!(" The highest left: {v} on {l}.")
    });
    let decide = match counter.kind {
        Kind::Sequence => format!(
            "decide a VALUE above every number it handed out (at least the highest left), then \
             run `yaraus seq set-floor {} VALUE` with the same --redis list",
            key.split_once(":seq:")
                .map_or(key.as_str(), |(_, name)| name)
        ),
        Kind::Fencing => format!(
            "decide a VALUE above every fencing token handed out (at least the highest left; \
             tokens that followed the server clock are below its time in microseconds), then \
             `SET {key} VALUE` on {}",
            without.join(", ")
        ),
    };
    Finding::lost(
        key,
        "lost",
        format!(
            "{} {key}: {} of {} nodes ({}) lost it at once, fewer than the {majority} that must \
             hold it; nothing was repaired from the minority.{left} A person must {decide}",
            counter.kind.noun(),
            without.len(),
            counter.places.len(),
            without.join(", "),
        ),
    )
}

/// A counter that no node holds, every node answering.
fn unsettled(counter: &Counter, namespace: &str, majority: usize) -> Finding {
    let key = &counter.key;
    let name = key
        .strip_prefix(&format!("{namespace}:seq:"))
        .unwrap_or(key);
    if let Some(Place::Other(what)) = counter.places.iter().find(|p| matches!(p, Place::Other(_))) {
        return Finding::lost(
            key,
            "other",
            format!(
                "no node holds it as a counter ({what}): not a key yaraus wrote, or garbage; \
                 every call of it fails until a person renames or deletes it"
            ),
        );
    }
    let only_marks = counter.places.iter().all(|p| matches!(p, Place::Unborn(_)));
    if only_marks {
        let creator = match counter.kind {
            Kind::Sequence => format!("`yaraus seq next {name}`"),
            Kind::Fencing => "acquisition of the lock".to_string(),
        };
        return Finding::degraded(
            key,
            "unborn",
            format!(
                "no node holds it, only the marks of reads that found it missing: the next \
                 {creator} creates it (if it ever handed out values, every node lost it: {} \
                 first)",
                set_command(counter, name, "VALUE")
            ),
        );
    }
    let states: Vec<String> = counter.places.iter().map(Place::word).collect();
    if counter.rolls_back_by_itself(majority) {
        let caller = match counter.kind {
            Kind::Sequence => format!("`yaraus seq next {name}`"),
            Kind::Fencing => "acquisition of the lock".to_string(),
        };
        return Finding::degraded(
            key,
            "creation_stopped",
            format!(
                "no node holds it ({}): a creation stopped half-way on a majority; the next \
                 {caller} rolls it back once each prepared node is {} old on its clock, and \
                 creates it",
                states.join(", "),
                shown(CREATION_QUARANTINE)
            ),
        );
    }
    Finding::lost(
        key,
        "creation_stopped",
        format!(
            "no node holds it ({}): a creation stopped half-way; if nothing was handed out, end it \
             with {} (one prepared node beside marks is also what a majority that lost it \
             leaves), else with VALUE above every value handed out",
            states.join(", "),
            set_command(counter, name, "0")
        ),
    )
}

/// The command that sets `counter` (named `name`) to `value` on every node.
fn set_command(counter: &Counter, name: &str, value: &str) -> String {
    match counter.kind {
        Kind::Sequence => format!("`yaraus seq set-floor {name} {value}`"),
        Kind::Fencing => format!("`SET {} {value}` on every node", counter.key),
    }
}
