//! redis-py 8 (`clients/redis_py.py`) with its defaults (RESP3), with
//! `protocol=2` and `protocol=3`, through `from_url`, with its own parsers
//! and with hiredis: ids unique and increasing across two names, one at a
//! time and in both kinds of pipeline (a plain one's GET sees the INCR
//! before it); ids above 2^63 − 1 exact; a
//! transaction refused while queuing raises its error and writes nothing;
//! with a password, the `HELLO 3 AUTH` handshake.

use super::libs::{REDIS_PY, client_script, python};
use super::*;
use serde_json::Value;

/// The password of the server that `auth` mode runs against.
const PASSWORD: &str = "s3cret";

/// Runs the script in `venv` against `port` in `mode`; its JSON.
fn run(venv: &str, port: u16, mode: &str) -> Value {
    let python = python(venv, "redis-py is pointed at `yaraus seq serve`");
    let out = common::command(python)
        .arg(client_script("redis_py.py"))
        .args([&port.to_string(), mode])
        .env("SEQ_PASSWORD", PASSWORD)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{venv} {mode}: {stdout}{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"))
}

fn ids(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|x| match x {
            Value::Number(n) => n.as_u64().unwrap(),
            Value::String(s) => s.parse().unwrap(),
            other => panic!("not an id: {other}"),
        })
        .collect()
}

fn increasing(what: &str, ids: &[u64]) {
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{what}: {ids:?}");
}

/// Every mode in turn on the same server and names: each run's ids above
/// the last run's.
fn check_every_mode(venv: &str, hiredis: bool) {
    let servers = masters(3, true);
    for s in &servers {
        s.cmd(&["SET", "yaraus:seq:big", "9223372036854775805"]);
    }
    let serve = Serve::start(&servers, &[]);
    let (mut last_a, mut last_b, mut big) = (0, 0, 9_223_372_036_854_775_805u64);
    for (mode, proto) in [("default", 3), ("2", 2), ("3", 3), ("url", 3)] {
        let out = run(venv, serve.port, mode);
        let what = format!("{venv} {mode}: {out}");
        assert_eq!(out["redis_py"], REDIS_PY, "{what}");
        assert_eq!(out["hiredis"], hiredis, "{what}");
        assert_eq!(out["protocol"], proto, "{what}");
        if proto == 3 {
            assert_eq!(out["hello_proto"], 3, "{what}");
        }
        assert_eq!(out["client_name"], format!("py-{mode}"), "{what}");
        // One at a time, a transaction pipeline, a plain one: each name's
        // ids increase in the order they were asked for.
        let mut a = ids(&out["a"]);
        let mut b = ids(&out["b"]);
        let tx = ids(&out["pipeline"]);
        assert_eq!(
            tx[2],
            tx[0] + 3,
            "INCRBY 3 after INCR in one transaction: {what}"
        );
        assert_eq!(tx[3], tx[2], "GET sees the transaction's INCRBY: {what}");
        let plain = ids(&out["plain_pipeline"]);
        for pair in ids(&out["incr_get"]).chunks(2) {
            assert!(
                pair[1] >= pair[0],
                "GET {} after INCR {}: {what}",
                pair[1],
                pair[0]
            );
        }
        a.extend([tx[0], tx[2], plain[0], plain[2]]);
        b.extend([tx[1], plain[1]]);
        assert_eq!(a[10], a[9] + 5, "INCRBY 5: {what}");
        increasing(&format!("a, {what}"), &a);
        increasing(&format!("b, {what}"), &b);
        assert!(a[0] > last_a && b[0] > last_b, "{what}");
        (last_a, last_b) = (*a.last().unwrap(), *b.last().unwrap());

        let aborted = out["aborted"].as_str().unwrap_or_else(|| panic!("{what}"));
        // redis-py raises the error the refused request got while queuing
        // (the server answered EXECABORT to the EXEC).
        assert!(
            aborted.contains("INCRBY a 0") && aborted.contains("increment must be"),
            "{what}"
        );
        assert_eq!(
            out["unchanged"], true,
            "an aborted transaction wrote: {what}"
        );
        // Above 2^63 - 1: the exact digits, whatever type the parser made.
        for got in out["big"].as_array().unwrap() {
            big += 1;
            assert_eq!(got[0], big.to_string(), "{what}");
        }
        assert_eq!(out["nothing"], Value::Null, "{what}");
        assert_eq!(out["ping"], true, "{what}");
    }
    let mut c = serve.client();
    assert_eq!(c.send(&["GET", "a"]), bulk(&last_a.to_string()));

    // With a password: HELLO 3 AUTH default PASSWORD on connecting.
    drop(serve);
    let serve = Serve::start_env(&servers, &[], &[("YARAUS_SEQ_PASSWORD", PASSWORD)]);
    let out = run(venv, serve.port, "auth");
    assert_eq!(
        (&out["protocol"], &out["hello_proto"]),
        (&3.into(), &3.into()),
        "{out}"
    );
    assert!(ids(&out["a"])[0] > last_a, "{out}");
}

#[test]
fn redis_py_with_its_own_parsers_in_every_mode() {
    check_every_mode("py-redis", false);
}

#[test]
fn redis_py_with_hiredis_in_every_mode() {
    check_every_mode("py-hiredis", true);
}
