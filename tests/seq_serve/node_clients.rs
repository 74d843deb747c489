//! node-redis 6 (its default, RESP3, and `RESP: 3` given) and ioredis 6
//! (RESP2) through `clients/node_clients.cjs`: ids increasing across two
//! names one at a time, in `multi()` (MULTI … EXEC, `GET` seeing the
//! `INCRBY` before it) and an ioredis pipeline; ids above 2^63 − 1 exact
//! (strings: a bulk string of digits), `GET` of nothing null.
//!
//! Integer replies become JavaScript numbers in both libraries, exact only
//! up to 2^53: docs/seq.md, "Clients", says so; the ids here stay below it
//! except the bulk strings above 2^63 − 1.

use super::libs::{client_script, node_modules};
use super::*;
use serde_json::Value;

fn run(port: u16, client: &str) -> Value {
    let modules = node_modules("node-redis and ioredis are pointed at `yaraus seq serve`");
    let out = common::command("node")
        .arg(client_script("node_clients.cjs"))
        .args([&port.to_string(), client])
        .env("NODE_PATH", modules)
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{client}: {stdout}{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"))
}

fn ids(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|x| x.as_str().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn node_redis_and_ioredis_with_their_defaults() {
    let servers = masters(3, true);
    for s in &servers {
        s.cmd(&["SET", "yaraus:seq:big", &i64::MAX.to_string()]);
    }
    let serve = Serve::start(&servers, &[]);
    let (mut last_a, mut last_b, mut big) = (0, 0, i64::MAX as u64);
    for (client, proto) in [
        ("node-redis", "3"),
        ("node-redis-resp3", "3"),
        ("ioredis", "2"),
    ] {
        let out = run(serve.port, client);
        let what = format!("{client}: {out}");
        assert_eq!(out["errors"], Value::Array(vec![]), "{what}");
        assert_eq!(out["proto"], proto, "{what}");
        let mut a = ids(&out["a"]);
        let mut b = ids(&out["b"]);
        let tx = ids(&out["multi"]);
        assert_eq!(tx[2], tx[0] + 3, "{what}");
        assert_eq!(tx[3], tx[2], "GET sees the INCRBY before it: {what}");
        a.extend([tx[0], tx[2]]);
        b.push(tx[1]);
        if client == "ioredis" {
            let pipe = ids(&out["pipeline"]);
            a.extend([pipe[0], pipe[2]]);
            b.push(pipe[1]);
        }
        for (name, ids, last) in [("a", &a, &mut last_a), ("b", &b, &mut last_b)] {
            assert!(ids[0] > *last, "{name}: {what}");
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "{name}: {what}");
            *last = *ids.last().unwrap();
        }
        for got in ids(&out["big"]) {
            big += 1;
            assert_eq!(got, big, "{what}");
        }
        assert_eq!(out["nothing"], Value::Null, "{what}");
    }
}
