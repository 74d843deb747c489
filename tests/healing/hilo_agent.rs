//! `hilo agent --every` heals its lock's fencing counter on a shard
//! restarted empty, with no `next` and no run of its own.

use super::{HEALED_WITHIN, assert_sweep_metrics};
use crate::common;
use common::heal::{is_counter, server_ms, until_repaired};
use common::lock::{get, masters};
use common::metrics::Endpoint;
use common::process::{Run, yaraus_in};
use common::scratch::Scratch;

const FENCE: &str = "yaraus:fencing:yaraus:hilo:{orders}:agent";

#[test]
fn hilo_agent_every_sets_its_fencing_counter_again_on_a_wiped_shard_between_runs() {
    let mut servers = masters(3, true);
    let scratch = Scratch::new();
    // One run at start, the next an hour later: only the sweep can heal.
    let mut args: Vec<String> = [
        "hilo",
        "agent",
        "orders",
        "--every",
        "1h",
        "--window-size",
        "10",
        "--min-open",
        "1",
        "--metrics-listen",
        "127.0.0.1:0",
    ]
    .map(String::from)
    .to_vec();
    for s in &servers {
        args.extend(["--redis".to_string(), s.url()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let agent = Run::spawn(yaraus_in(&scratch, &args), &scratch);
    let metrics = Endpoint::from_log(|| agent.log());
    common::wait_until("the first run", common::EVENT, || {
        metrics.scrape().get("yaraus_hilo_cycles_total") == Some(&1.0)
    });
    assert!(servers.iter().all(|s| is_counter(&get(s, FENCE))));

    servers[1].restart_empty();
    let wiped_ms = server_ms(&servers[1]);
    let repair = until_repaired(&servers[1], FENCE, HEALED_WITHIN, || {});
    eprintln!(
        "wiped shard's fencing counter set again {} ms after its restart ({} ms after its \
         mark), on its clock",
        repair.seen_ms - wiped_ms,
        repair.seen_ms - repair.marked_ms
    );
    let held: Vec<Option<String>> = servers.iter().map(|s| get(s, FENCE)).collect();
    assert!(held.iter().all(is_counter), "{held:?}");

    assert_sweep_metrics(&metrics, &servers[1].url(), "fencing");
    // Still the one run: the agent itself did not touch the shards again.
    assert_eq!(metrics.value("yaraus_hilo_cycles_total"), 1.0);
}
