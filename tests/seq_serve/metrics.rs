//! `--metrics-listen` on seq serve: `/metrics` counts the ids and rounds the
//! client asked for, `/readyz` follows the majority of nodes (two of three
//! frozen with SIGSTOP, then continued), `/healthz` answers throughout; a
//! bad address or a port in use is one line and exit 2, before any node is
//! asked anything.

use super::*;
use common::metrics::Endpoint;
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
