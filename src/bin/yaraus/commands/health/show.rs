//! `health` for a person (a table) and for a script (JSON).

use serde_json::{Value, json};
use std::fmt::Write;
use yaraus::health::{Finding, Survey, exit_code};
use yaraus::seq::census::{Counter, Place};
use yaraus::store::{Fitness, Replica, ReplicaState};

pub(super) fn fitness_word(fitness: &Fitness) -> String {
    match fitness {
        Fitness::Fit => "up".into(),
        Fitness::Down(why) => format!("out of reach: {why}"),
        Fitness::NotDurable(why) => format!("not durable: {why}"),
        Fitness::Refused(why) => format!("refuses yaraus: {why}"),
    }
}

fn replica_word(replica: &Replica) -> String {
    match &replica.state {
        ReplicaState::Online => format!("in sync, {} bytes behind", replica.lag_bytes),
        ReplicaState::FullSync(state) => format!("waiting for a full sync ({state})"),
        ReplicaState::Other(state) => state.clone(),
    }
}

pub(super) fn status_word(code: i32) -> &'static str {
    match code {
        0 => "ok",
        75 => "degraded",
        _ => "lost",
    }
}

/// Findings of one kind on one subject shown in full, before a count.
const ALIKE: usize = 3;

/// Lines for a person.
pub(super) fn table(survey: &Survey, findings: &[Finding]) -> String {
    let mut out = String::new();
    node_lines(&mut out, survey);
    if !survey.census.counters.is_empty() {
        let _ = writeln!(out, "counters:");
    }
    for counter in &survey.census.counters {
        counter_lines(&mut out, survey, counter);
    }
    if !survey.shards.is_empty() {
        let _ = writeln!(out, "hilo high-water marks:");
    }
    for mark in &survey.shards {
        let marks: Vec<String> = mark
            .marks
            .iter()
            .map(|m| match m {
                Ok(Some(v)) => v.to_string(),
                Ok(None) => "missing".into(),
                Err(_) => "out of reach".into(),
            })
            .collect();
        let _ = writeln!(out, "  {}  {}", mark.name, marks.join(" / "));
    }
    if let Some(pool) = &survey.pool {
        let _ = match &pool.stats {
            Some(s) => writeln!(
                out,
                "pool {}: ids {}..{}, {} leased, {} free",
                pool.key,
                s.min.map_or("?".into(), |v| v.to_string()),
                s.max.map_or("?".into(), |v| v.to_string()),
                s.using_ids,
                s.unusing_ids
            ),
            None if pool.problem.is_none() => writeln!(out, "pool {}: none", pool.key),
            None => writeln!(out, "pool {}: unreadable", pool.key),
        };
    }
    for keyed in &survey.indexes_and_queues {
        let figures: Vec<String> = keyed
            .figures
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            out,
            "{} {} on {}: {}",
            keyed.kind,
            keyed.key,
            keyed.redis,
            figures.join(", ")
        );
    }
    finding_lines(&mut out, findings);
    let code = exit_code(findings);
    let _ = writeln!(out, "status: {} (exit {code})", status_word(code));
    out
}

/// The namespace, then each node and its replicas.
fn node_lines(out: &mut String, survey: &Survey) {
    let n = survey.nodes.len();
    let _ = writeln!(
        out,
        "namespace {}: {n} node{} (a majority is {})",
        survey.namespace,
        if n == 1 { "" } else { "s" },
        survey.census.majority
    );
    for (node, replication) in survey.nodes.iter().zip(&survey.replication) {
        let _ = writeln!(out, "  {}  {}", node.redis, fitness_word(&node.fitness));
        for replica in replication.iter().flat_map(|r| &r.replicas) {
            let _ = writeln!(
                out,
                "    replica {}  {}",
                replica.address,
                replica_word(replica)
            );
        }
    }
}

/// A wiped node lacks every counter: a few findings of each kind, then
/// how many more (the JSON has them all).
fn finding_lines(out: &mut String, findings: &[Finding]) {
    let mut shown: Vec<(&str, &str, usize)> = Vec::new();
    for finding in findings {
        let group = match shown
            .iter_mut()
            .position(|(s, st, _)| *s == finding.subject && *st == finding.state)
        {
            Some(at) => &mut shown[at],
            None => {
                shown.push((&finding.subject, finding.state, 0));
                shown.last_mut().expect("just pushed")
            }
        };
        group.2 += 1;
        if group.2 <= ALIKE {
            let _ = writeln!(
                out,
                "{}: {}: {}",
                finding.level.word(),
                finding.subject,
                finding.text
            );
        }
    }
    for (subject, state, count) in shown {
        if count > ALIKE {
            let _ = writeln!(out, "… and {} more {state} on {subject}", count - ALIKE);
        }
    }
}

/// A counter in one line when every node holds it at one value, else one
/// line per node.
fn counter_lines(out: &mut String, survey: &Survey, counter: &Counter) {
    let head = format!("  {} ({})", counter.key, counter.kind.noun());
    if let [Place::Holds(first), rest @ ..] = counter.places.as_slice()
        && rest.iter().all(|p| *p == Place::Holds(*first))
    {
        let _ = writeln!(out, "{head}: held by all at {first}");
        return;
    }
    let _ = writeln!(
        out,
        "{head}: held by {} of {}",
        counter.holders(),
        counter.places.len()
    );
    for (node, place) in survey.nodes.iter().zip(&counter.places) {
        let _ = writeln!(out, "    {}  {}", node.redis, place.word());
    }
}

/// One JSON object.
pub(super) fn json(survey: &Survey, findings: &[Finding]) -> String {
    let labels = survey.labels();
    let counters: Vec<Value> = survey
        .census
        .counters
        .iter()
        .map(|c| {
            json!({
                "key": c.key,
                "kind": c.kind.noun(),
                "standing": format!("{:?}", c.standing(survey.census.majority)).to_lowercase(),
                "nodes": c.places.iter().zip(&labels).map(|(p, l)| place_json(l, p)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let shards: Vec<Value> = survey
        .shards
        .iter()
        .map(|m| {
            json!({
                "name": m.name,
                "shards": m.marks.iter().zip(&labels).map(|(mark, l)| match mark {
                    Ok(hwm) => json!({"redis": l, "hwm": hwm}),
                    Err(e) => json!({"redis": l, "error": e}),
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    let code = exit_code(findings);
    let value = json!({
        "namespace": survey.namespace,
        "majority": survey.census.majority,
        "nodes": survey.nodes.iter().zip(&survey.replication).map(|(n, r)| json!({
            "redis": n.redis,
            "state": fitness_word(&n.fitness),
            "ok": n.fitness == Fitness::Fit,
            "replicas": r.as_ref().map(|r| r.replicas.iter().map(|replica| json!({
                "address": replica.address,
                "state": replica_word(replica),
                "in_sync": replica.state == ReplicaState::Online,
                "lag_bytes": replica.lag_bytes,
            })).collect::<Vec<_>>()).ok(),
        })).collect::<Vec<_>>(),
        "counters": counters,
        "hilo": shards,
        "pool": survey.pool,
        "indexes_and_queues": survey.indexes_and_queues,
        "findings": findings,
        "status": status_word(code),
        "exit": code,
    });
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}

fn place_json(label: &str, place: &Place) -> Value {
    match place {
        Place::Holds(v) => json!({"redis": label, "state": "holds", "value": v}),
        Place::Quarantined { left, .. } => json!({
            "redis": label, "state": "quarantined", "ripe_in_ms": left.as_millis() as u64,
        }),
        Place::Missing => json!({"redis": label, "state": "missing"}),
        Place::Unborn(_) => json!({"redis": label, "state": "unborn"}),
        Place::Preparing(_) => json!({"redis": label, "state": "preparing"}),
        Place::Other(what) => json!({"redis": label, "state": "other", "error": what}),
        Place::OutOfReach(why) => json!({"redis": label, "state": "unreachable", "error": why}),
    }
}
