//! `list --using` and `stats` cost what is leased: the leased ids are found
//! by a range query on the score, in pages, not by a walk of the pool. These
//! tests check that what they print is what the walk of the whole pool
//! (`list`, which `--using` filtered before) says: exactly the ids leased at
//! the listing's instant, in id order, whoever holds them, leases that
//! expired but were never reclaimed left out, a page boundary inside a run
//! of equal expiries, and ids outside the pool's recorded range ignored.

use super::list::entry_fields;
use super::*;

/// A row of `list` without its ttl (which depends on when it was read).
type Row = (u64, Option<String>, Option<String>);

/// The rows of a `list` JSON output, checked to be in strict id order,
/// with their ttls.
fn rows(stdout: &str) -> Vec<(Row, bool, f64)> {
    let Json::Array(entries) = parse_json(stdout) else {
        panic!("not an array:\n{stdout}")
    };
    let rows: Vec<(Row, bool, f64)> = entries
        .iter()
        .map(|e| {
            let (client, id, expire_at, using, ttl) = entry_fields(e);
            ((id, client, expire_at), using, ttl)
        })
        .collect();
    assert!(
        rows.windows(2).all(|w| w[0].0.0 < w[1].0.0),
        "not in strict id order"
    );
    rows
}

/// Writes many leases by hand in one ZADD and one HSET.
fn lease_many(s: &RedisServer, ns: &str, leases: &BTreeMap<u64, (f64, String)>) {
    let mut zadd = vec!["ZADD".to_string(), format!("{ns}:ids"), "XX".into()];
    let mut hset = vec!["HSET".to_string(), format!("{ns}:clients")];
    for (&id, (score, owner)) in leases {
        zadd.extend([format!("{score}"), enc(id)]);
        hset.extend([enc(id), owner.clone()]);
    }
    for args in [zadd, hset] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let _: i64 = s.query(&args);
    }
}

/// The leases of `leases` still running at `t` (score after it), as rows.
fn running(leases: &BTreeMap<u64, (f64, String)>, t: f64) -> Vec<Row> {
    leases
        .iter()
        .filter(|(_, (score, _))| *score > t)
        .map(|(&id, (score, owner))| (id, Some(owner.clone()), Some(rfc3339(*score))))
        .collect()
}

#[test]
fn list_using_on_a_big_pool_lists_exactly_the_leased_ids() {
    let s = RedisServer::start();
    let url = s.url_ns("big");
    let out = yaraus_for(
        &["-q", "--redis", &url, "init", "--max", "1048575"],
        BIG_TIMEOUT,
    );
    assert_eq!(out.code, Some(0), "{out:#?}");
    let base = server_secs(&s) as f64;
    // Three clients, one of them holding two ids; two expiries equal; the
    // expiry order is not the id order.
    let leases: BTreeMap<u64, (f64, String)> = [
        (1, base + 1000.5, "host-a-1.000-1"),
        (524_288, base + 1000.5, "host-b-2.000-2"),
        (1_048_575, base + 500.25, "host-a-1.000-1"),
        (99, base + 3000.0, "host-c-3.000-3"),
        // Expired and never reclaimed: its owner is still recorded.
        (7, base - 30.0, "host-d-4.000-4"),
    ]
    .into_iter()
    .map(|(id, score, owner)| (id, (score, owner.to_string())))
    .collect();
    lease_many(&s, "big", &leases);
    let before = s.snapshot();

    let t0 = server_now(&s);
    let out = yaraus_ok(&["--redis", &url, "list", "--using"]);
    let t1 = server_now(&s);
    let listed = rows(&out.stdout);
    let ids: Vec<u64> = listed.iter().map(|r| r.0.0).collect();
    assert_eq!(ids, [1, 99, 524_288, 1_048_575]);
    let expected = running(&leases, t0);
    assert_eq!(
        listed.iter().map(|r| r.0.clone()).collect::<Vec<_>>(),
        expected
    );
    for ((id, _, _), using, ttl) in &listed {
        assert!(*using);
        let score = leases[id].0;
        assert_within(&format!("ttl of {id}"), *ttl, score - t1, score - t0);
    }

    // The table lists the same ids, in the same order, under its header.
    let table = yaraus_ok(&["--redis", &url, "list", "--using", "--format", "table"]);
    let table_ids: Vec<u64> = table
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(table_ids, ids, "{}", table.stdout);
    assert_eq!(s.snapshot(), before, "list --using must not write");
}

/// 12,000 leases, 6,000 of them ending at the same instant across the
/// boundary of the first page (5,000 ids), 500 expired and never
/// reclaimed, one outside the recorded range: `list --using` prints the
/// rows the whole walk prints as leased, and `stats` the figures computed
/// from that walk.
#[test]
fn list_using_and_stats_agree_with_the_walk_of_the_pool() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["-q", "--redis", &url, "init", "--max", "32767"]);
    let base = server_secs(&s) as f64;
    let owners = ["host-a-1.000-1", "host-b-2.000-2", "host-c-3.000-3"];
    let mut leases = BTreeMap::new();
    for k in 0..12_500u64 {
        let id = 2 + 2 * k;
        let score = match k {
            0..1_000 => base + 100.0 + k as f64 * 0.01,
            1_000..7_000 => base + 200.0,
            7_000..12_000 => base + 300.0 + k as f64 * 0.01,
            _ => base - 10.0 - k as f64 * 0.01,
        };
        leases.insert(id, (score, owners[k as usize % 3].to_string()));
    }
    lease_many(&s, "t", &leases);
    // Leased, but outside the range init recorded: the walk never lists it.
    let _: i64 = s.query(&["ZADD", "t:ids", &format!("{}", base + 500.0), &enc(40_000)]);

    let w0 = server_now(&s);
    let list = |using: &[&str]| {
        let mut args = vec!["--redis", &url, "list"];
        args.extend_from_slice(using);
        rows(&yaraus_ok(&args).stdout)
    };
    let walk = list(&[]);
    let using = list(&["--using"]);
    let t1 = server_now(&s);
    let walked: Vec<Row> = walk
        .iter()
        .filter(|(_, using, _)| *using)
        .map(|r| r.0.clone())
        .collect();
    assert_eq!(walked, running(&leases, w0), "the walk itself");
    let listed: Vec<Row> = using.iter().map(|r| r.0.clone()).collect();
    assert_eq!(listed.len(), walked.len());
    assert_eq!(listed, walked);
    assert!(using.iter().all(|(_, using, _)| *using));

    // stats, from the walk: its counts, and its remaining leases' extremes
    // and median moved on by the time that passed between the two reads.
    let s0 = server_now(&s);
    let st = stats_json(&url);
    let s1 = server_now(&s);
    let mut ttls: Vec<f64> = walk.iter().filter(|r| r.1).map(|r| r.2).collect();
    ttls.sort_by(f64::total_cmp);
    let n = ttls.len();
    assert_eq!(int(&st, "using_ids"), n as i64 + 1, "E40000 is leased too");
    assert_eq!(int(&st, "unusing_ids"), walk.len() as i64 - n as i64);
    let median = (ttls[(n - 1) / 2] + ttls[n / 2]) / 2.0;
    let elapsed = (s0 - t1, s1 - w0);
    for (field, walked) in [("using_ttl_min", ttls[0]), ("using_ttl_mid", median)] {
        let lo = walked - elapsed.1 - 0.001;
        assert_within(field, num(&st, field), lo, walked - elapsed.0 + 0.001);
    }
    // The longest lease is the one outside the range, which stats counts.
    assert_within(
        "using_ttl_max",
        num(&st, "using_ttl_max"),
        500.0 - (s1 - base),
        500.0 - (s0 - base),
    );
}

/// With most of the pool leased, `--using` walks the pool (no dearer, and
/// no memory for the leased ids): the same rows.
#[test]
fn list_using_with_most_of_the_pool_leased() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init", "--max", "20"]);
    let base = server_secs(&s) as f64;
    let leases: BTreeMap<u64, (f64, String)> = (1..=15u64)
        .map(|id| {
            let score = if id == 4 {
                base - 5.0
            } else {
                base + 400.0 - id as f64
            };
            (id, (score, format!("host-{}-1.000-1", id % 2)))
        })
        .collect();
    lease_many(&s, "t", &leases);
    let t0 = server_now(&s);
    let using = rows(&yaraus_ok(&["--redis", &url, "list", "--using"]).stdout);
    let listed: Vec<Row> = using.iter().map(|r| r.0.clone()).collect();
    assert_eq!(listed, running(&leases, t0));
}
