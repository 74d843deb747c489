//! What a client of seq serve, or of its metrics port, can cost the
//! metrics: a sequence's series go when its sequencer retires; at most
//! `MAX_SEQUENCE_SERIES` names have series of their own, the rest are
//! counted under `sequence=""`; idle connections beyond the metrics port's
//! cap take no file descriptors, and a scrape or probe is still answered.

use super::*;
use common::metrics::Endpoint;
use common::{EVENT, wait_until};
use std::net::TcpStream;
use yaraus::metrics::MAX_SEQUENCE_SERIES;
use yaraus::metrics::http::MAX_CONNECTIONS;

const IDS: &str = "yaraus_ids_handed_out_total{sequence=";

/// The sequence label values of the ids handed out, with their values.
fn ids_by_sequence(metrics: &Endpoint) -> Vec<(String, f64)> {
    metrics
        .scrape()
        .into_iter()
        .filter_map(|(k, v)| Some((k.strip_prefix(IDS)?.to_string(), v)))
        .collect()
}

#[test]
fn a_retired_sequence_s_series_go_and_the_others_stay() {
    let servers = masters(3, true);
    let serve = Serve::start(
        &servers,
        &["--metrics-listen", "127.0.0.1:0", "--retire-after", "300ms"],
    );
    let metrics = Endpoint::from_log(|| serve.run.log());
    let mut c = serve.client();
    let has = |name: &str| {
        let label = format!("\"{name}\"}}");
        ids_by_sequence(&metrics).iter().any(|(l, _)| *l == label)
    };
    // In use, a sequence has its series (asked again should a slow machine
    // let it retire between the request and the scrape).
    wait_until("the series of gone", EVENT, || {
        assert!(c.send(&["INCR", "gone"]).id().is_some());
        has("gone")
    });
    // Left alone, it retires and its series go; one still in use keeps its.
    wait_until("gone's series to go, kept's to stay", EVENT, || {
        assert!(c.send(&["INCR", "kept"]).id().is_some());
        !has("gone") && has("kept")
    });
}

#[test]
fn names_beyond_the_series_bound_are_counted_under_the_empty_name() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &["--metrics-listen", "127.0.0.1:0"]);
    let metrics = Endpoint::from_log(|| serve.run.log());
    let names = MAX_SEQUENCE_SERIES + 50;
    // Pipelined: the names' rounds run at once, the nodes fsync them together.
    let mut c = serve.client();
    let mut requests = String::new();
    for n in 0..names {
        let name = format!("s{n}");
        requests.push_str(&format!(
            "*2\r\n$4\r\nINCR\r\n${}\r\n{name}\r\n",
            name.len()
        ));
    }
    c.raw(requests.as_bytes());
    for _ in 0..names {
        assert_eq!(c.read(), Some(Reply::Int(1)));
    }
    let ids = ids_by_sequence(&metrics);
    let own = ids.iter().filter(|(l, _)| l != "\"\"}").count();
    assert_eq!(own, MAX_SEQUENCE_SERIES, "names with series of their own");
    let overflow = ids.iter().find(|(l, _)| l == "\"\"}").map(|(_, v)| *v);
    let beyond = (names - MAX_SEQUENCE_SERIES) as f64;
    assert_eq!(overflow, Some(beyond), "the ids under sequence=\"\"");
    assert_eq!(ids.iter().map(|(_, v)| v).sum::<f64>(), names as f64);
    metrics.assert_promtool_passes();
}

#[test]
fn idle_connections_beyond_the_cap_take_no_descriptors_and_probes_are_answered() {
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &["--metrics-listen", "127.0.0.1:0"]);
    let metrics = Endpoint::from_log(|| serve.run.log());
    metrics.wait_status("/readyz", 200, EVENT);
    let pid = serve.run.pid();
    let descriptors = || {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .expect("the server's /proc/PID/fd")
            .count()
    };
    let before = descriptors();
    let idle: Vec<TcpStream> = (0..3 * MAX_CONNECTIONS)
        .map(|_| TcpStream::connect(&metrics.addr).expect("connect to the metrics port"))
        .collect();
    // A new connection comes after all of them in the accept queue: when
    // it is answered, every one of them has been accepted.
    assert_eq!(metrics.status("/readyz"), 200);
    assert!(metrics.scrape().contains_key("yaraus_seq_nodes"));
    // The cap, and the one connection of the answer just read.
    let after = descriptors();
    assert!(
        after <= before + MAX_CONNECTIONS + 1,
        "{after} descriptors open, {before} before {} idle connections",
        idle.len()
    );
    // seq serve itself did not notice.
    assert_eq!(serve.client().send(&["INCR", "after"]), Reply::Int(1));
}
