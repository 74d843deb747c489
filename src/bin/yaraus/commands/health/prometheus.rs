//! `health --format prometheus`: the survey as gauges, for node_exporter's
//! textfile collector (a timer runs it, as `stats --format prometheus`),
//! so that the alert rules of docs/service.md see every node, counter and
//! replica without a long-running process of their own.

use super::show::status_word;
use std::collections::BTreeMap;
use std::fmt::Write;
use yaraus::health::{Finding, Survey, exit_code};
use yaraus::metrics::escape_label_value as escaped;
use yaraus::seq::census::Place;
use yaraus::store::{Fitness, ReplicaState};

/// One metric: its HELP and TYPE lines, then its samples.
fn metric(out: &mut String, name: &str, help: &str, samples: &[(String, f64)]) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
    for (labels, value) in samples {
        let _ = writeln!(out, "{name}{{{labels}}} {value}");
    }
}

pub(super) fn exposition(survey: &Survey, findings: &[Finding]) -> String {
    let mut out = String::new();
    let code = exit_code(findings);
    let status = match status_word(code) {
        "ok" => 0.0,
        "degraded" => 1.0,
        _ => 2.0,
    };
    let ns = format!("namespace=\"{}\"", escaped(&survey.namespace));
    metric(
        &mut out,
        "yaraus_health_status",
        "Where the deployment stands: 0 every node holds everything, 1 degraded, 2 lost on a majority.",
        &[(ns.clone(), status)],
    );
    let node = |redis: &str| format!("{ns},node=\"{}\"", escaped(redis));
    let up: Vec<(String, f64)> = survey
        .nodes
        .iter()
        .map(|n| {
            (
                node(&n.redis),
                f64::from(u8::from(n.fitness == Fitness::Fit)),
            )
        })
        .collect();
    metric(
        &mut out,
        "yaraus_health_node_ok",
        "1 when the node answers, keeps every write where several masters vote, and takes our password.",
        &up,
    );
    counter_metrics(&mut out, survey, &node);
    replica_metrics(&mut out, survey, &node);
    let samples: Vec<(String, f64)> = ["degraded", "lost"]
        .iter()
        .map(|level| {
            let n = findings.iter().filter(|f| f.level.word() == *level).count();
            (format!("{ns},level=\"{level}\""), n as f64)
        })
        .collect();
    metric(
        &mut out,
        "yaraus_health_findings",
        "Things found wrong, by level (the findings of yaraus health).",
        &samples,
    );
    out
}

fn replica_metrics(out: &mut String, survey: &Survey, node: &dyn Fn(&str) -> String) {
    let (mut in_sync, mut lag) = (Vec::new(), Vec::new());
    for (n, replication) in survey.nodes.iter().zip(&survey.replication) {
        let Ok(replication) = replication else {
            continue;
        };
        for replica in &replication.replicas {
            let labels = format!(
                "{},replica=\"{}\"",
                node(&n.redis),
                escaped(&replica.address)
            );
            let synced = replica.state == ReplicaState::Online;
            in_sync.push((labels.clone(), f64::from(u8::from(synced))));
            lag.push((labels, replica.lag_bytes as f64));
        }
    }
    metric(
        out,
        "yaraus_health_replica_in_sync",
        "1 when the replica is online; 0 while it waits for a full sync (a failover to it now would lose data).",
        &in_sync,
    );
    metric(
        out,
        "yaraus_health_replica_lag_bytes",
        "Bytes of the master's writes the replica has not acknowledged.",
        &lag,
    );
}

fn counter_metrics(out: &mut String, survey: &Survey, node: &dyn Fn(&str) -> String) {
    let mut counts: BTreeMap<(String, &str, &str), f64> = BTreeMap::new();
    let mut oldest: BTreeMap<String, f64> = BTreeMap::new();
    for counter in &survey.census.counters {
        for (n, place) in survey.nodes.iter().zip(&counter.places) {
            if let Place::Quarantined { age, .. } = place {
                let entry = oldest.entry(n.redis.clone()).or_default();
                *entry = entry.max(age.as_secs_f64());
            }
            let state = place.label();
            *counts
                .entry((n.redis.clone(), counter.kind.label(), state))
                .or_default() += 1.0;
        }
    }
    let samples: Vec<(String, f64)> = counts
        .into_iter()
        .map(|((redis, kind, state), v)| {
            let kind = kind.replace(' ', "_");
            (
                format!("{},kind=\"{kind}\",state=\"{state}\"", node(&redis)),
                v,
            )
        })
        .collect();
    metric(
        out,
        "yaraus_health_counters",
        "Majority counters (sequences, fencing counters) per node, by what the node holds of them.",
        &samples,
    );
    let samples: Vec<(String, f64)> = oldest.into_iter().map(|(r, v)| (node(&r), v)).collect();
    metric(
        out,
        "yaraus_health_quarantine_age_seconds",
        "How long the node's oldest quarantine has run, on its clock (a repair is due after 10 s).",
        &samples,
    );
}
