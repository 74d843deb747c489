//! `yaraus list`: every id in order with its lease, as JSON and as a
//! table, 2^22 of them, a Go-layout pool with gaps, and a reader that
//! closes the pipe early.

use super::*;

/// The fields of one `list` entry, checked to be exactly the documented
/// seven; the clock offset (never measured here: the leases are written by
/// hand) is `null`.
pub(super) fn entry_fields(e: &Json) -> (Option<String>, u64, Option<String>, bool, f64) {
    let obj = e
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {e}"));
    let names: BTreeSet<&str> = obj.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        BTreeSet::from([
            "client_id",
            "id",
            "expire_at",
            "using",
            "ttl",
            "clock_offset_ms",
            "clock_error_ms"
        ]),
        "{e}"
    );
    assert!(
        obj["clock_offset_ms"].is_null() && obj["clock_error_ms"].is_null(),
        "{e}"
    );
    (
        obj["client_id"].as_str().map(str::to_string),
        obj["id"].as_u64().expect("id"),
        match &obj["expire_at"] {
            Json::Null => None,
            Json::String(at) => Some(at.clone()),
            other => panic!("expire_at is neither a string nor null: {other}"),
        },
        obj["using"].as_bool().expect("using"),
        obj["ttl"].as_f64().expect("ttl"),
    )
}

#[test]
fn list_json_has_every_id_in_order_with_its_lease() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init", "--max", "20"]);
    let base = server_secs(&s) as f64;
    let leases: BTreeMap<u64, (f64, &str)> = BTreeMap::from([
        (3, (base + 100.25, "host-a-1.000-1")),
        (11, (base + 5000.5, "host-b-2.000-2")),
        (20, (base + 30.0, "host-c-3.000-3")),
        (8, (base - 60.75, "host-d-released")), // held once, free now
    ]);
    for (&id, &(score, owner)) in &leases {
        lease(&s, "t", id, score, owner);
    }

    let t0 = server_now(&s);
    let out = yaraus_ok(&["--redis", &url, "list"]);
    let t1 = server_now(&s);
    let Json::Array(entries) = parse_json(&out.stdout) else {
        panic!("not an array:\n{}", out.stdout)
    };
    assert_eq!(entries.len(), 20);
    for (i, e) in entries.iter().enumerate() {
        let (client, id, expire_at, using, ttl) = entry_fields(e);
        assert_eq!(id, i as u64 + 1, "id order");
        match leases.get(&id) {
            Some(&(score, owner)) if score > t0 => {
                assert_eq!(client.as_deref(), Some(owner), "{e}");
                assert!(using, "{e}");
                assert_eq!(expire_at, Some(rfc3339(score)), "{e}");
                assert_within(&format!("ttl of {id}"), ttl, score - t1, score - t0);
            }
            Some(&(score, owner)) => {
                assert_eq!(client.as_deref(), Some(owner), "{e}");
                assert!(!using, "{e}");
                assert_eq!(expire_at, Some(rfc3339(score)), "{e}");
                assert_eq!(ttl, 0.0, "{e}");
            }
            None => {
                assert_eq!(client, None, "{e}");
                assert!(!using, "{e}");
                // Never leased: no date, rather than 1970.
                assert_eq!(expire_at, None, "{e}");
                assert_eq!(ttl, 0.0, "{e}");
            }
        }
    }

    // --using keeps exactly the leased ones, still in id order.
    let out = yaraus_ok(&["--redis", &url, "list", "--using"]);
    let Json::Array(using) = parse_json(&out.stdout) else {
        panic!("not an array:\n{}", out.stdout)
    };
    let ids: Vec<u64> = using.iter().map(|e| entry_fields(e).1).collect();
    let t1 = server_now(&s);
    let expected: Vec<u64> = leases
        .iter()
        .filter(|(_, (score, _))| *score > t1)
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(ids, expected);
    assert!(using.iter().all(|e| entry_fields(e).3));

    // list only reads.
    let before = s.snapshot();
    yaraus_ok(&["--redis", &url, "list"]);
    assert_eq!(s.snapshot(), before);
}

#[test]
fn list_table_has_a_header_and_one_row_per_id() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init", "--max", "12"]);
    let base = server_secs(&s) as f64;
    lease(&s, "t", 4, base + 90.0, "host-x-1.000-4");
    lease(&s, "t", 12, base - 1.0, "host-y-old");

    let out = yaraus_ok(&["--redis", &url, "list", "--format", "table"]);
    let mut lines = out.stdout.lines();
    let header: Vec<&str> = lines.next().expect("a header").split_whitespace().collect();
    assert_eq!(
        header,
        [
            "ID",
            "USING",
            "TTL",
            "EXPIRE_AT",
            "CLIENT_ID",
            "CLOCK_OFFSET"
        ]
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 12, "{}", out.stdout);
    for (i, row) in rows.iter().enumerate() {
        let id = i as u64 + 1;
        assert_eq!(row.len(), 6, "{row:?}");
        assert_eq!(row[5], "-", "never measured: {row:?}");
        assert_eq!(row[0], id.to_string());
        let ttl: f64 = row[2].parse().expect("ttl");
        match id {
            4 => {
                assert_eq!((row[1], row[4]), ("yes", "host-x-1.000-4"));
                assert!(ttl > 80.0 && ttl <= 90.0, "{row:?}");
                assert_eq!(row[3], rfc3339(base + 90.0));
            }
            12 => {
                assert_eq!((row[1], row[4]), ("no", "host-y-old"));
                assert_eq!(ttl, 0.0);
                assert_eq!(row[3], rfc3339(base - 1.0));
            }
            _ => {
                assert_eq!((row[1], row[4]), ("no", "-"));
                assert_eq!(ttl, 0.0);
                assert_eq!(row[3], "-", "never leased: {row:?}");
            }
        }
    }
}

/// A table without rows still has its header: `--using` on a pool that
/// nobody holds is the case a person meets first.
#[test]
fn list_table_without_rows_has_its_header() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init", "--max", "3"]);
    let out = yaraus_ok(&["--redis", &url, "list", "--using", "--format", "table"]);
    let lines: Vec<Vec<&str>> = out
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines,
        [[
            "ID",
            "USING",
            "TTL",
            "EXPIRE_AT",
            "CLIENT_ID",
            "CLOCK_OFFSET"
        ]],
        "{out:#?}"
    );
    // As JSON, the same listing is an empty array.
    let out = yaraus_ok(&["--redis", &url, "list", "--using"]);
    assert_eq!(out.stdout, "[]\n");
}

#[test]
fn list_of_2_22_ids_is_complete() {
    let s = RedisServer::start();
    let url = s.url_ns("big");
    let started = Instant::now();
    let out = yaraus_for(
        &["-q", "--redis", &url, "init", "--max", "4194303"],
        BIG_TIMEOUT,
    );
    assert_eq!(out.code, Some(0), "{out:#?}");
    let init_took = started.elapsed();
    assert_eq!(s.query::<u64>(&["ZCARD", "big:ids"]), BIG);
    let base = server_secs(&s) as f64;
    lease(&s, "big", BIG, base + 600.0, "holder-of-the-last");

    let started = Instant::now();
    let mut list = Spawned::piped(&["--redis", &url, "list"]);
    let stdout = list.child().stdout.take().unwrap();
    let mut lines = BufReader::with_capacity(1 << 20, stdout).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "[");
    let (mut count, mut first, mut last) = (0u64, String::new(), String::new());
    let mut closing = None;
    for line in lines {
        let line = line.unwrap();
        if line == "]" {
            closing = Some(line);
            continue;
        }
        assert!(
            closing.is_none(),
            "output after the closing bracket: {line}"
        );
        count += 1;
        // Cheap order check on every line; full parse of the first and last.
        let want = format!("\"id\":{count},");
        assert!(
            line.contains(&want),
            "entry {count} is not id {count}: {line}"
        );
        if count == 1 {
            first = line.clone();
        }
        last = line;
    }
    let status = list.wait(BIG_TIMEOUT);
    let list_took = started.elapsed();
    let stderr = list.stderr();
    println!(
        "2^22 ids: init {init_took:?}, list {list_took:?} wall (debug binary), {count} entries"
    );
    assert!(status.success(), "list failed: {stderr}");
    assert!(closing.is_some(), "the JSON array is not closed");
    assert_eq!(count, BIG);

    let first = parse_json(first.trim_end_matches(','));
    let (client, id, expire_at, using, ttl) = entry_fields(&first);
    assert_eq!((client, id, using, ttl), (None, 1, false, 0.0));
    assert_eq!(expire_at, None, "never leased");
    let last = parse_json(&last);
    let (client, id, expire_at, using, ttl) = entry_fields(&last);
    assert_eq!(client.as_deref(), Some("holder-of-the-last"));
    assert_eq!((id, using), (BIG, true));
    assert_eq!(expire_at, Some(rfc3339(base + 600.0)));
    assert!(ttl > 0.0 && ttl <= 600.0, "{ttl}");
}

#[test]
fn list_and_stats_read_a_go_layout_pool_with_gaps() {
    // The Go tool's layout: members ZADDed by hand, no min/max in ns:stats
    // (no ns:stats at all), ids with gaps.
    let s = RedisServer::start();
    let url = s.url_ns("go");
    let base = server_secs(&s) as f64;
    let present = [2u64, 3, 9, 17, 100, 4000];
    for &n in &present {
        let _: i64 = s.query(&["ZADD", "go:ids", "0", &enc(n)]);
    }
    let _: i64 = s.query(&["ZADD", "go:ids", &format!("{}", base + 300.0), &enc(17)]);
    let _: i64 = s.query(&["HSET", "go:clients", &enc(17), "go-host-1.000-1"]);
    let before = s.snapshot();

    let out = yaraus_ok(&["--redis", &url, "list"]);
    let Json::Array(entries) = parse_json(&out.stdout) else {
        panic!("not an array:\n{}", out.stdout)
    };
    let ids: Vec<u64> = entries.iter().map(|e| entry_fields(e).1).collect();
    assert_eq!(ids, present);
    for e in &entries {
        let (client, id, _, using, _) = entry_fields(e);
        assert_eq!(using, id == 17, "{e}");
        assert_eq!(client.is_some(), id == 17, "{e}");
    }
    let table = yaraus_ok(&["--redis", &url, "list", "--format", "table"]);
    assert_eq!(table.stdout.lines().count(), 1 + present.len());

    let st = stats_json(&url);
    assert_eq!(int(&st, "using_ids"), 1);
    assert_eq!(int(&st, "unusing_ids"), 5);
    assert_eq!(int(&st, "client_id_count"), 0);
    assert_eq!(s.snapshot(), before, "list and stats must not write");
}

#[test]
fn list_to_a_closed_pipe_is_not_an_error() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    // Far more output than a pipe buffers.
    yaraus_ok(&["-q", "--redis", &url, "init", "--max", "100000"]);
    for format in ["json", "table"] {
        let mut list = Spawned::piped(&["--redis", &url, "list", "--format", format]);
        // `| head -1`: read one line, then close the pipe.
        let stdout = list.child().stdout.take().unwrap();
        let mut first = String::new();
        BufReader::new(stdout).read_line(&mut first).unwrap();
        assert!(!first.is_empty());
        let status = list.wait(COMMAND_TIMEOUT);
        let stderr = list.stderr();
        assert_eq!(
            status.code(),
            Some(0),
            "{format}: {status:?}, stderr: {stderr}"
        );
        assert_eq!(stderr, "", "{format}");
    }
}
