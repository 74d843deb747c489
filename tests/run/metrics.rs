//! `run --metrics-listen`: while the command runs, `/metrics` shows the id
//! held, its renewals and their latency, and the clock offset that run
//! measures; `/readyz` is 200 (the claim held, the command running) and
//! `/healthz` 200; the page passes promtool in both formats; the listener
//! goes with run.

use super::*;
use common::metrics::Endpoint;

#[test]
fn metrics_show_the_claim_and_its_renewals_while_the_command_runs() {
    let (server, scratch) = fresh_pool(0, 9);
    let running = scratch.arg("running");
    let script = format!("touch '{running}'; exec sleep 600");
    let opts = with(FAST, &["--metrics-listen", "127.0.0.1:0"]);
    let mut run = Run::start(&server.url_ns(NS), &scratch, &opts, &["sh", "-c", &script]);
    let metrics = Endpoint::from_log(|| run.log());
    wait_until("the command to run", EVENT, || Path::new(&running).exists());
    // A renewal every 100ms (FAST): awaited, not slept for.
    wait_until("a renewal", EVENT, || {
        metrics.value("yaraus_renewals_total") >= 1.0
    });
    let samples = metrics.scrape();
    assert_eq!(samples["yaraus_claims_held"], 1.0, "{samples:#?}");
    assert_eq!(samples["yaraus_claims_lost_total"], 0.0, "{samples:#?}");
    assert!(samples["yaraus_renewal_latency_seconds_count"] >= 1.0);
    // The same host as the server: any offset is within a second.
    assert!(samples["yaraus_clock_offset_seconds"].abs() < 1.0);
    assert!(!samples.keys().any(|k| k.starts_with("yaraus_seq_")));
    // Both formats, as Prometheus and as promtool or curl ask.
    metrics.assert_promtool_passes();
    assert_eq!(metrics.status("/readyz"), 200);
    assert_eq!(metrics.status("/healthz"), 200);

    run.signal(Signal::SIGTERM);
    run.wait();
    assert!(
        std::net::TcpStream::connect(&metrics.addr).is_err(),
        "the listener outlived run"
    );
}

#[test]
fn a_stolen_id_counts_as_lost() {
    let (server, scratch) = fresh_pool(0, 9);
    let running = scratch.arg("running");
    // The command outlives the loss long enough to be scraped: it ignores
    // SIGTERM, and --kill-after holds the SIGKILL back.
    let script = format!("trap '' TERM; touch '{running}'; exec sleep 600");
    let opts = with(&timings("30s", "5s"), &["--metrics-listen", "127.0.0.1:0"]);
    let mut run = Run::start(&server.url_ns(NS), &scratch, &opts, &["sh", "-c", &script]);
    let metrics = Endpoint::from_log(|| run.log());
    wait_until("the command to run", EVENT, || Path::new(&running).exists());
    let (_, id) = run.wait_lease();
    metrics.wait_status("/readyz", 200, EVENT);
    steal(&server, id);
    wait_until("the loss counted", EVENT, || {
        metrics.value("yaraus_claims_lost_total") == 1.0
    });
    metrics.wait_status("/readyz", 503, EVENT);
    assert_eq!(run.wait(), 124, "{}", run.log());
}
