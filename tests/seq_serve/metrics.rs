//! `--metrics-listen` on seq serve: `/metrics` counts the ids and rounds the
//! client asked for, `/readyz` follows the majority of nodes (two of three
//! frozen with SIGSTOP, then continued), `/healthz` answers throughout; a
//! bad address or a port in use is one line and exit 2, before any node is
//! asked anything; names a client chose (quotes, backslashes, a newline
//! that would write lines of its own) stay inside their label, and the page
//! passes promtool in both formats. The bounds are in `metrics_bounds.rs`.

use super::*;
use common::metrics::{Endpoint, OPENMETRICS, TEXT};
use common::run_yaraus;

const IDS: &str = "yaraus_ids_handed_out_total{sequence=\"orders\"}";
const ROUNDS: &str = "yaraus_seq_rounds_total{sequence=\"orders\"}";
const FAILED: &str = "yaraus_seq_failed_rounds_total{sequence=\"orders\"}";

#[test]
fn metrics_count_the_ids_and_readyz_follows_the_majority() {
    let servers = masters(3, true);
    let serve = Serve::start(
        &servers,
        &["--timeout", "1s", "--metrics-listen", "127.0.0.1:0"],
    );
    let metrics = Endpoint::from_log(|| serve.run.log());
    assert_eq!(metrics.status("/healthz"), 200);
    metrics.wait_status("/readyz", 200, common::EVENT);

    // One client, one request at a time: one round per request.
    let mut c = serve.client();
    for n in 1..=5 {
        assert_eq!(c.send(&["INCR", "orders"]), Reply::Int(n));
    }
    assert_eq!(c.send(&["INCRBY", "orders", "10"]), Reply::Int(15));
    let samples = metrics.scrape();
    assert_eq!(samples[IDS], 15.0, "{samples:#?}");
    assert_eq!(samples[ROUNDS], 6.0, "{samples:#?}");
    assert_eq!(samples["yaraus_seq_round_latency_seconds_count"], 6.0);
    assert!(!samples.contains_key("yaraus_claims_held"), "{samples:#?}");
    assert_eq!(samples["yaraus_seq_nodes"], 3.0);
    assert_eq!(samples["yaraus_seq_nodes_ok"], 3.0);

    // Two of three frozen: not ready, still alive; the round fails.
    servers[1].sigstop();
    servers[2].sigstop();
    metrics.wait_status("/readyz", 503, common::EVENT);
    assert_eq!(metrics.status("/healthz"), 200);
    assert!(c.send(&["INCR", "orders"]).error().starts_with("ERR"));
    assert_eq!(metrics.value(FAILED), 1.0);
    assert!(metrics.value("yaraus_seq_nodes_ok") <= 1.0);
    assert_eq!(metrics.value(IDS), 15.0);

    servers[1].sigcont();
    servers[2].sigcont();
    metrics.wait_status("/readyz", 200, common::EVENT);
    assert_eq!(metrics.status("/nothing"), 404);
}

#[test]
fn a_bad_address_or_a_port_in_use_is_one_line_and_exit_2() {
    // Nothing listens at this Redis: an exit 2 shows it was never asked.
    let redis = format!("redis://127.0.0.1:{}", common::free_port());
    let bad = run_yaraus(
        &[
            "seq",
            "serve",
            "--redis",
            &redis,
            "--metrics-listen",
            "nonsense",
        ],
        &[],
        common::EVENT,
    );
    assert_eq!(bad.code, Some(2), "{}", bad.stderr);
    assert_eq!(bad.stderr.trim().lines().count(), 1, "{}", bad.stderr);
    assert!(bad.stderr.contains("--metrics-listen"), "{}", bad.stderr);

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let busy = run_yaraus(
        &["seq", "serve", "--redis", &redis],
        &[("YARAUS_METRICS_LISTEN", &addr)],
        common::EVENT,
    );
    assert_eq!(busy.code, Some(2), "{}", busy.stderr);
    assert_eq!(busy.stderr.trim().lines().count(), 1, "{}", busy.stderr);
    assert!(
        busy.stderr
            .contains(&format!("cannot listen on {addr} for --metrics-listen")),
        "{}",
        busy.stderr
    );
}

/// A name that, written raw into a label, would end the sample and add a
/// forged one, then an end of page.
const FORGED: &str = "x\"} 1\nyaraus_seq_nodes_ok{fake=\"1\"} 3\n# EOF\n#";

#[test]
fn hostile_names_stay_in_their_labels_and_the_page_passes_promtool() {
    let servers = masters(3, true);
    // A key of another type on every node: each round of this name fails.
    let failing = "fail\"ing\\";
    for s in &servers {
        s.cmd(&["HSET", &format!("yaraus:seq:{failing}"), "f", "v"]);
    }
    let serve = Serve::start(&servers, &["--metrics-listen", "127.0.0.1:0"]);
    let metrics = Endpoint::from_log(|| serve.run.log());
    let mut c = serve.client();
    assert_eq!(c.send(&["INCR", "q\"uote"]), Reply::Int(1));
    assert_eq!(c.send(&["INCRBY", "back\\slash", "2"]), Reply::Int(2));
    assert!(c.send(&["INCR", failing]).error().starts_with("ERR"));
    // Served, or refused at the door as a name with a control character:
    // either way nothing of it may leave its label.
    let forged = c.send(&["INCR", FORGED]);

    metrics.assert_promtool_passes();
    let samples = metrics.scrape();
    // No forged sample: every line is a sample of its own family.
    assert!(
        !samples
            .keys()
            .any(|k| k.starts_with("yaraus_seq_nodes_ok{")),
        "{samples:#?}"
    );
    assert_eq!(samples["yaraus_seq_nodes_ok"], 3.0, "{samples:#?}");
    for (sample, value) in [
        (r#"yaraus_seq_rounds_total{sequence="q\"uote"}"#, 1.0),
        (
            r#"yaraus_ids_handed_out_total{sequence="back\\slash"}"#,
            2.0,
        ),
        (
            r#"yaraus_seq_failed_rounds_total{sequence="fail\"ing\\"}"#,
            1.0,
        ),
    ] {
        assert_eq!(samples.get(sample), Some(&value), "{sample}: {samples:#?}");
    }
    let escaped = r#"yaraus_ids_handed_out_total{sequence="x\"} 1\nyaraus_seq_nodes_ok{fake=\"1\"} 3\n# EOF\n#"}"#;
    match forged {
        Reply::Int(1) => assert_eq!(samples.get(escaped), Some(&1.0), "{samples:#?}"),
        Reply::Error(_) => assert!(!samples.contains_key(escaped), "{samples:#?}"),
        other => panic!("INCR of the forging name: {other:?}"),
    }
    // The page ends once, at its end.
    let page = metrics.page(OPENMETRICS);
    let ends: Vec<usize> = page
        .lines()
        .enumerate()
        .filter(|(_, l)| *l == "# EOF")
        .map(|(n, _)| n)
        .collect();
    assert_eq!(ends, [page.lines().count() - 1], "{page}");
    assert!(!metrics.page(TEXT).lines().any(|l| l == "# EOF"));
}
