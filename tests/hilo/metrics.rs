//! `hilo agent --every --metrics-listen`: `/metrics` shows the cycles and the
//! windows open on each shard, and `/readyz` follows the last cycle: 503
//! once a cycle fails on a frozen shard (SIGSTOP), 200 again after one
//! succeeds. The page passes promtool in both formats.

use super::{NAME, shards};
use crate::hilo::common::metrics::Endpoint;
use crate::hilo::common::process::{Run, yaraus_in};
use crate::hilo::common::scratch::Scratch;
use crate::hilo::common::{EVENT, wait_until};
use nix::sys::signal::Signal;

const WINDOWS_OPEN: &str = "yaraus_hilo_windows_open{shard=";

#[test]
fn metrics_show_the_windows_per_shard_and_readyz_the_last_cycle() {
    let servers = shards(2);
    let scratch = Scratch::new();
    let mut args: Vec<String> = [
        "hilo",
        "agent",
        NAME,
        "--every",
        "100ms",
        "--window-size",
        "10",
        "--min-open",
        "2",
        "--wait",
        "0",
        "--timeout",
        "500ms",
        "--metrics-listen",
        "127.0.0.1:0",
    ]
    .map(String::from)
    .to_vec();
    for s in &servers {
        args.extend(["--redis".to_string(), s.url()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut agent = Run::spawn(yaraus_in(&scratch, &args), &scratch);
    let metrics = Endpoint::from_log(|| agent.log());
    wait_until("a cycle", EVENT, || {
        metrics.value("yaraus_hilo_cycles_total") >= 1.0
    });
    let samples = metrics.scrape();
    let open: Vec<f64> = samples
        .iter()
        .filter(|(k, _)| k.starts_with(WINDOWS_OPEN))
        .map(|(_, v)| *v)
        .collect();
    assert_eq!(open, [2.0, 2.0], "{samples:#?}");
    assert_eq!(samples["yaraus_hilo_windows_created_total"], 4.0);
    // Both formats, as Prometheus and as promtool or curl ask.
    metrics.assert_promtool_passes();
    metrics.wait_status("/readyz", 200, EVENT);

    servers[1].sigstop();
    metrics.wait_status("/readyz", 503, EVENT);
    assert!(metrics.value("yaraus_hilo_failed_cycles_total") >= 1.0);
    assert_eq!(metrics.status("/healthz"), 200);
    servers[1].sigcont();
    metrics.wait_status("/readyz", 200, EVENT);

    agent.signal(Signal::SIGTERM);
    assert_eq!(agent.wait(), 0, "{}", agent.log());
}
