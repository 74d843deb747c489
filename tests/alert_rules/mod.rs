//! The alert rules of docs/service.md ("Alert rules") are a rules file
//! Prometheus loads: the real `promtool check rules` accepts the block as
//! it stands in the page, and every `yaraus_` metric a rule names is one
//! the page's metrics table lists, so a renamed metric cannot leave an
//! alert that never fires.

use crate::common;

use common::scratch::Scratch;
use std::collections::BTreeSet;

fn service_md() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/service.md");
    std::fs::read_to_string(path).expect("docs/service.md")
}

/// The first ```yaml block after the heading "### Alert rules".
fn rules_block(page: &str) -> String {
    let section = page
        .split("\n### Alert rules\n")
        .nth(1)
        .expect("a section \"### Alert rules\" in docs/service.md");
    let section = section.split("\n#").next().unwrap_or(section);
    let block = section
        .split("```yaml\n")
        .nth(1)
        .expect("a ```yaml block in \"Alert rules\"");
    block.split("```").next().unwrap().to_string()
}

/// The `yaraus_…` names in `text`, `_total` kept.
fn metric_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("yaraus_") {
        let name: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[at + name.len()..];
        names.insert(name);
    }
    names
}

#[test]
fn the_alert_rules_of_the_service_page_pass_promtool_and_name_listed_metrics() {
    common::tools::require_test_tool(
        "promtool",
        "prometheus",
        "docs/service.md's alert rules are checked with promtool check rules",
    );
    let page = service_md();
    let rules = rules_block(&page);
    let scratch = Scratch::new();
    let file = scratch.path("rules.yml");
    std::fs::write(&file, &rules).unwrap();
    let out = common::command("promtool")
        .args(["check", "rules"])
        .arg(&file)
        .output()
        .expect("run promtool");
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "promtool check rules: {said}\n{rules}"
    );
    // All of the block was read: as many rules as it has alerts.
    let alerts = rules
        .lines()
        .filter(|l| l.trim_start().starts_with("- alert:"))
        .count();
    assert!(alerts > 0, "{rules}");
    assert!(
        said.contains(&format!("SUCCESS: {alerts} rules found")),
        "{said}"
    );

    let table: String = page
        .lines()
        .filter(|l| l.starts_with("| `yaraus_"))
        .collect::<Vec<_>>()
        .join("\n");
    let listed = metric_names(&table);
    for name in metric_names(&rules) {
        assert!(
            listed.contains(&name),
            "the alert rules name {name}, which the metrics table of docs/service.md does not list"
        );
    }
}
