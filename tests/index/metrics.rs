//! `index --metrics-listen`: while the command runs under its slot,
//! `/metrics` shows the slot held and its renewals (and passes promtool in
//! both formats), and `/readyz` is 200.

use crate::index::common::metrics::Endpoint;
use crate::index::common::process::{Run, yaraus_in};
use crate::index::common::scratch::Scratch;
use crate::index::common::{EVENT, RedisServer, wait_until};
use nix::sys::signal::Signal;

#[test]
fn metrics_show_the_slot_and_its_renewals_while_the_command_runs() {
    let server = RedisServer::start();
    let scratch = Scratch::new();
    let running = scratch.arg("running");
    let script = format!("touch '{running}'; exec sleep 600");
    let url = server.url();
    let args = [
        "index",
        "metrics",
        "--redis",
        &url,
        "--interval",
        "100ms",
        "--metrics-listen",
        "127.0.0.1:0",
        "--",
        "sh",
        "-c",
        &script,
    ];
    let mut run = Run::spawn(yaraus_in(&scratch, &args), &scratch);
    let metrics = Endpoint::from_log(|| run.log());
    wait_until("the command to run", EVENT, || {
        std::path::Path::new(&running).exists()
    });
    wait_until("a renewal", EVENT, || {
        metrics.value("yaraus_renewals_total") >= 1.0
    });
    let samples = metrics.scrape();
    assert_eq!(samples["yaraus_claims_held"], 1.0, "{samples:#?}");
    assert_eq!(samples["yaraus_claims_lost_total"], 0.0, "{samples:#?}");
    // Only run measures the clock.
    assert!(!samples.contains_key("yaraus_clock_offset_seconds"));
    // Both formats, as Prometheus and as promtool or curl ask.
    metrics.assert_promtool_passes();
    metrics.wait_status("/readyz", 200, EVENT);
    assert_eq!(metrics.status("/healthz"), 200);
    run.signal(Signal::SIGTERM);
    run.wait();
}
