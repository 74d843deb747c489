//! Bad input changes nothing; `--print` and `--status`.

use crate::index::common::process::{Run, yaraus_in};
use crate::index::common::scratch::Scratch;
use crate::index::common::{EVENT, RedisServer, run_yaraus, wait_until};
use serde_json::Value;

#[test]
fn bad_input_is_one_line_and_an_exit_status_and_writes_nothing() {
    let server = RedisServer::start();
    let url = server.url();
    server.cmd(&["SET", "yaraus:index:{str}", "x"]);
    server.cmd(&[
        "HSET",
        "yaraus:index:{ten}",
        "interval",
        "10000",
        "last",
        "1",
    ]);
    let before = server.snapshot();
    let cases: [(&[&str], i32, &str); 8] = [
        (
            &["index", "x", "--interval", "50ms", "--", "true"],
            2,
            "too short",
        ),
        (&["index", "two words", "--", "true"], 2, "contains ' '"),
        (&["index", "", "--", "true"], 2, "must not be empty"),
        (&["index", "x"], 2, "no COMMAND"),
        (
            &[
                "index",
                "x",
                "--skew",
                "600ms",
                "--interval",
                "1s",
                "--",
                "true",
            ],
            2,
            "--skew",
        ),
        (
            &["index", "x", "--print", "--", "true"],
            2,
            "cannot be used",
        ),
        (
            &["index", "ten", "--interval", "1s", "--", "true"],
            2,
            "--interval 10s",
        ),
        (&["index", "str", "--", "true"], 125, "holds a string"),
    ];
    for (args, code, words) in cases {
        let mut full = vec!["--redis", url.as_str()];
        full.extend_from_slice(args);
        let out = run_yaraus(&full, &[], EVENT);
        assert_eq!(out.code, Some(code), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(words), "{args:?}: {}", out.stderr);
        assert_eq!(
            out.stderr.trim_end().lines().count(),
            1,
            "{args:?}: {}",
            out.stderr
        );
    }
    assert_eq!(server.snapshot(), before, "bad input changed Redis");
}

#[test]
fn print_emits_one_line_per_interval_and_status_shows_the_pairs() {
    let server = RedisServer::start();
    let url = server.url();
    let scratch = Scratch::new();
    let printers: Vec<Run> = ["0ms", "100ms"]
        .iter()
        .map(|skew| {
            let args = [
                "--redis",
                &url,
                "index",
                "printed",
                "--interval",
                "500ms",
                "--skew",
                skew,
                "--print",
            ];
            Run::spawn(yaraus_in(&scratch, &args), &scratch)
        })
        .collect();
    let lines = |run: &Run| -> Vec<Value> {
        run.output()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    };
    wait_until("six lines from each printer", EVENT, || {
        printers.iter().all(|p| lines(p).len() >= 6)
    });
    let mut seen = std::collections::BTreeMap::new();
    for p in &printers {
        let lines = lines(p);
        let numbers: Vec<u64> = lines
            .iter()
            .map(|l| l["interval"].as_u64().unwrap())
            .collect();
        for w in numbers.windows(2) {
            assert_eq!(w[1], w[0] + 1, "one line per interval: {lines:?}");
        }
        // From the third interval on, both took part in the one before.
        for l in &lines[2..] {
            assert_eq!(l["replicas"], 2, "{lines:?}");
            seen.entry(l["interval"].as_u64().unwrap())
                .or_insert_with(Vec::new)
                .push(l["index"].as_u64().unwrap());
        }
    }
    for (n, mut indexes) in seen {
        indexes.sort();
        if indexes.len() == 2 {
            assert_eq!(indexes, [0, 1], "interval {n}");
        }
    }

    let out = run_yaraus(
        &["--redis", &url, "index", "printed", "--status"],
        &[],
        EVENT,
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let status: Value = serde_json::from_str(&out.stdout).expect("status JSON");
    let mut indexes: Vec<u64> = status["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .map(|p| {
            assert_eq!(p["replicas"], 2, "{status}");
            p["index"].as_u64().unwrap()
        })
        .collect();
    indexes.sort();
    assert_eq!(indexes, [0, 1], "{status}");
    assert_eq!(status["interval_ms"], 500, "{status}");

    let out = run_yaraus(&["--redis", &url, "index", "never", "--status"], &[], EVENT);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
}
