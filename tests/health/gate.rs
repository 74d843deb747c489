//! `health --wait`, the gate between two steps of a rolling maintenance:
//! wipe a node, wait on the gate, wipe the next at once, round after round;
//! and two wipes inside one quarantine, which no gate may paper over.

use super::*;

/// The gate's bound in these tests: the quarantine (10 s) with room for a
/// loaded machine.
const GATE: &str = "60s";

#[test]
fn the_gate_returns_once_the_wiped_node_holds_again_and_the_next_can_be_wiped_at_once() {
    let mut servers = masters(3, true);
    let mut ids = vec![next_id(&servers)];
    for round in 0..3 {
        servers[round].restart_empty();
        let gate = health(&servers, &["--wait", GATE]);
        assert_code(&gate, 0);
        let said = stderr(&gate);
        assert!(said.contains("quarantined for"), "round {round}: {said}");
        assert!(said.contains("set again to"), "round {round}: {said}");
        assert!(said.contains("all held, after"), "round {round}: {said}");
        let held: u64 = get(&servers[round], SEQ_KEY)
            .expect("the wiped node holds the counter again")
            .parse()
            .expect("a counter, not a mark");
        assert!(held >= *ids.last().unwrap(), "set below a value handed out");
        ids.push(next_id(&servers));
    }
    assert_unique_and_increasing(&ids);
}

#[test]
fn two_wipes_inside_the_quarantine_are_lost_and_never_repaired_from_a_minority() {
    let mut servers = masters(3, true);
    let mut ids = vec![next_id(&servers), next_id(&servers)];
    servers[0].restart_empty();
    // A gate cut short: it marks node 1, whose quarantine starts.
    let short = health(&servers, &["--wait", "1s"]);
    assert_code(&short, 75);
    assert!(
        get(&servers[0], SEQ_KEY).is_some_and(|v| v.starts_with("healing:")),
        "the gate marked the wiped node"
    );
    servers[1].restart_empty();
    let (status, report) = health_json(&servers, &["--wait", "12s"]);
    assert_eq!(status, 69, "{report}");
    let lost: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["level"] == "lost")
        .collect();
    assert_eq!(lost.len(), 1, "{report}");
    assert_eq!(lost[0]["subject"], SEQ_KEY);
    let text = lost[0]["text"].as_str().unwrap();
    assert!(
        text.contains("`yaraus seq set-floor orders VALUE`"),
        "{text}"
    );
    assert!(
        text.contains(&servers[0].url()) && text.contains(&servers[1].url()),
        "{text}"
    );
    for node in &servers[..2] {
        let value = get(node, SEQ_KEY).unwrap_or_default();
        assert!(
            value.parse::<u64>().is_err(),
            "{} repaired from a minority to {value}",
            node.url()
        );
    }
    let refused = seq(&servers, &["next", "orders", "--wait", "0"]);
    assert_code(&refused, 69);
    assert!(stdout(&refused).is_empty(), "an id from a minority");
    // The person decides, as the finding says; then all is held again.
    let floor = ids.last().unwrap() + 100;
    assert_code(
        &seq(&servers, &["set-floor", "orders", &floor.to_string()]),
        0,
    );
    ids.push(next_id(&servers));
    assert_unique_and_increasing(&ids);
}
