//! `seq serve` heals a node restarted empty with no client request.

use super::{HEALED_WITHIN, assert_sweep_metrics, sample};
use crate::common;
use common::heal::{server_ms, until_repaired};
use common::lock::{get, masters};
use common::metrics::Endpoint;
use common::process::{Run, yaraus_in};
use common::scratch::Scratch;

const KEY: &str = "yaraus:seq:orders";

/// `seq serve` over `servers` with metrics; its port.
fn serve(servers: &[common::RedisServer], scratch: &Scratch) -> (Run, u16) {
    let mut args = vec![
        "seq".to_string(),
        "serve".into(),
        "--listen".into(),
        "127.0.0.1:0".into(),
        "--metrics-listen".into(),
        "127.0.0.1:0".into(),
    ];
    for s in servers {
        args.extend(["--redis".to_string(), s.url()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = Run::spawn(yaraus_in(scratch, &args), scratch);
    let needle = "listening on 127.0.0.1:";
    run.wait_log(needle);
    let log = run.log();
    let rest = &log[log.find(needle).unwrap() + needle.len()..];
    let port = rest[..rest.find(' ').unwrap()].parse().unwrap();
    (run, port)
}

#[test]
fn seq_serve_quarantines_and_sets_again_a_wiped_node_with_no_request() {
    let mut servers = masters(3, true);
    let scratch = Scratch::new();
    let (serve, port) = serve(&servers, &scratch);
    let metrics = Endpoint::from_log(|| serve.log());
    {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
        let mut c = client.get_connection().unwrap();
        let id: u64 = redis::cmd("INCR").arg("orders").query(&mut c).unwrap();
        assert_eq!(id, 1);
    }
    assert!(servers.iter().all(|s| get(s, KEY).as_deref() == Some("1")));

    servers[2].restart_empty();
    let wiped_ms = server_ms(&servers[2]);
    let repair = until_repaired(&servers[2], KEY, HEALED_WITHIN, || {});
    eprintln!(
        "wiped node set again {} ms after its restart ({} ms after its mark), on its clock",
        repair.seen_ms - wiped_ms,
        repair.seen_ms - repair.marked_ms
    );
    assert_eq!(get(&servers[2], KEY).as_deref(), Some("1"));
    let log = serve.log();
    assert!(log.contains("quarantined for 10s"), "{log}");
    assert!(log.contains("set again to 1 from a majority"), "{log}");

    assert_sweep_metrics(&metrics, &servers[2].url(), "sequence");
    // No request came: the one round is the INCR before the wipe.
    let samples = metrics.scrape();
    let rounds = sample(&samples, &["yaraus_seq_rounds_total{", "orders"]);
    assert_eq!(rounds, Some(1.0), "{samples:#?}");
}
