//! `yaraus stats --format prometheus`: a strict reader of the text
//! exposition format and promtool, and every figure checked against the
//! JSON.

use super::*;

/// One sample of the Prometheus text format: name, labels, value.
type Sample = (String, BTreeMap<String, String>, f64);

/// A strict reader of the Prometheus text exposition format (0.0.4): every
/// line is a `# HELP`, a `# TYPE`, another comment, blank, or a sample
/// `name{label="value",...} value [timestamp]`; a metric's TYPE comes before
/// its samples and at most once; samples of one metric are contiguous.
fn parse_prometheus(text: &str) -> (Vec<Sample>, BTreeMap<String, String>) {
    fn is_name(s: &str, colon: bool) -> bool {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || (colon && c == ':'))
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':'))
    }
    fn value(s: &str) -> Option<f64> {
        match s {
            "+Inf" => Some(f64::INFINITY),
            "-Inf" => Some(f64::NEG_INFINITY),
            "NaN" => Some(f64::NAN),
            _ => s.parse().ok(),
        }
    }
    assert!(
        text.ends_with('\n'),
        "the exposition must end with a newline"
    );
    let mut samples = Vec::new();
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut helps: BTreeSet<String> = BTreeSet::new();
    let mut finished: BTreeSet<String> = BTreeSet::new();
    let mut current: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        let bad = |why: &str| -> ! { panic!("line {}: {why}: {line:?}\n{text}", n + 1) };
        if line.trim().is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            let mut words = rest.trim_start().splitn(3, ' ');
            match words.next() {
                Some("HELP") => {
                    let name = words.next().unwrap_or_else(|| bad("HELP without a name"));
                    if !is_name(name, true) || !helps.insert(name.to_string()) {
                        bad("bad or repeated HELP");
                    }
                }
                Some("TYPE") => {
                    let name = words.next().unwrap_or_else(|| bad("TYPE without a name"));
                    let kind = words.next().unwrap_or_else(|| bad("TYPE without a type"));
                    if !is_name(name, true)
                        || !["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind)
                    {
                        bad("bad TYPE");
                    }
                    if types.insert(name.into(), kind.into()).is_some() || finished.contains(name) {
                        bad("TYPE repeated, or after the metric's samples");
                    }
                }
                _ => {} // a plain comment
            }
            continue;
        }
        let (name, rest) = match line.find(['{', ' ']) {
            Some(i) => line.split_at(i),
            None => bad("a sample without a value"),
        };
        if !is_name(name, true) {
            bad("bad metric name");
        }
        let mut labels = BTreeMap::new();
        let rest = if let Some(body) = rest.strip_prefix('{') {
            let mut chars = body.char_indices().peekable();
            let end;
            loop {
                // label name
                let start = chars
                    .peek()
                    .map(|&(i, _)| i)
                    .unwrap_or_else(|| bad("unclosed {"));
                if body[start..].starts_with('}') {
                    end = start + 1;
                    break;
                }
                let eq = body[start..]
                    .find('=')
                    .unwrap_or_else(|| bad("label without ="))
                    + start;
                let lname = &body[start..eq];
                if !is_name(lname, false) {
                    bad("bad label name");
                }
                while chars.peek().is_some_and(|&(i, _)| i <= eq) {
                    chars.next();
                }
                if chars.next().map(|(_, c)| c) != Some('"') {
                    bad("label value not quoted");
                }
                let mut lvalue = String::new();
                loop {
                    match chars.next() {
                        Some((_, '\\')) => match chars.next() {
                            Some((_, '\\')) => lvalue.push('\\'),
                            Some((_, '"')) => lvalue.push('"'),
                            Some((_, 'n')) => lvalue.push('\n'),
                            _ => bad("bad escape in a label value"),
                        },
                        Some((_, '"')) => break,
                        Some((_, c)) => lvalue.push(c),
                        None => bad("unterminated label value"),
                    }
                }
                if labels.insert(lname.to_string(), lvalue).is_some() {
                    bad("repeated label");
                }
                match chars.next() {
                    Some((_, ',')) => continue,
                    Some((i, '}')) => {
                        end = i + 1;
                        break;
                    }
                    _ => bad("expected , or } after a label"),
                }
            }
            &body[end..]
        } else {
            rest
        };
        let mut fields = rest.split_ascii_whitespace();
        let v = fields
            .next()
            .and_then(value)
            .unwrap_or_else(|| bad("bad sample value"));
        if let Some(ts) = fields.next() {
            if ts.parse::<i64>().is_err() {
                bad("bad timestamp");
            }
        }
        if fields.next().is_some() || !rest.starts_with(' ') {
            bad("garbage around the value");
        }
        if current.as_deref() != Some(name) {
            if let Some(prev) = current.take() {
                finished.insert(prev);
            }
            if finished.contains(name) {
                bad("samples of one metric are not contiguous");
            }
            current = Some(name.to_string());
        }
        samples.push((name.to_string(), labels, v));
    }
    (samples, types)
}

#[test]
fn stats_prometheus_parses_and_matches_json() {
    let s = RedisServer::start();
    let url = s.url_ns("t");
    yaraus_ok(&["--redis", &url, "init", "--max", "10"]);
    yaraus_ok(&quick_run(&url, &["--", "true"]));
    let base = server_secs(&s) as f64;
    for (id, ttl) in [(2, 100.0), (5, 250.0), (7, 3600.0)] {
        lease(&s, "t", id, base + ttl, &format!("c{id}"));
    }
    let _: i64 = s.query(&[
        "HSET",
        "t:stats",
        "extend_ttl_count",
        "12",
        "extend_ttl_success",
        "9",
    ]);
    let _: i64 = s.query(&["HSET", "t:stats", "extend_ttl_ownership_error", "2"]);
    let _: i64 = s.query(&["HSET", "t:stats", "extend_ttl_expire_warning", "1"]);
    // Id 2's holder measured its clock 1.5 s ahead of the server's, ± 3 ms
    // (the record `run` keeps: horizon, offset, error, when; milliseconds).
    let at = (base * 1000.0) as i64;
    let record = format!("{} 1500 3 {at}", at + 100_000);
    let _: i64 = s.query(&["HSET", "t:clock", &enc(2), &record]);

    let json = stats_json(&url);
    let out = yaraus_ok(&["--redis", &url, "stats", "--format", "prometheus"]);
    let (samples, types) = parse_prometheus(&out.stdout);
    println!("{}", out.stdout);
    crate::pool::common::metrics::assert_promtool_passes(&out.stdout, false);

    let mut found = BTreeSet::new();
    let mut holders = BTreeMap::new();
    for (name, labels, value) in &samples {
        if let Some(id) = labels.get("id") {
            assert_eq!(labels.len(), 2, "{name} {labels:?}");
            assert_eq!(labels["pool"], "t:ids", "{name}");
            assert_eq!(types.get(name).map(String::as_str), Some("gauge"));
            holders.insert((name.as_str(), id.as_str()), *value);
            continue;
        }
        assert_eq!(
            labels,
            &BTreeMap::from([("pool".to_string(), "t:ids".to_string())]),
            "{name}"
        );
        let field = name
            .strip_prefix("yaraus_")
            .unwrap_or_else(|| panic!("{name} lacks the yaraus_ prefix"));
        let (field, kind) = match field.strip_suffix("_total") {
            Some(f) => (f, "counter"),
            None => (field, "gauge"),
        };
        assert_eq!(
            types.get(name).map(String::as_str),
            Some(kind),
            "TYPE of {name}"
        );
        assert!(found.insert(field.to_string()), "{field} appears twice");
        let want = num(&json, field);
        if field.starts_with("using_ttl") {
            // Two reads of the clock, a moment apart.
            assert!((value - want).abs() < 5.0, "{name} {value} vs JSON {want}");
        } else {
            assert_eq!(*value, want, "{name} vs JSON {field}");
        }
    }
    // Every number of the JSON, once: the Go figures, wait_shortfall,
    // clock_step_back and the range.
    let want: BTreeSet<String> = json
        .iter()
        .filter(|(_, v)| v.is_number())
        .map(|(k, _)| k.clone())
        .collect();
    assert!(GO_STATS_FIELDS.iter().all(|f| want.contains(*f)));
    assert!(
        ["wait_shortfall", "clock_step_back", "min", "max"]
            .iter()
            .all(|f| want.contains(*f))
    );
    assert_eq!(found, want, "the JSON's figures and the Prometheus ones");
    assert_eq!((num(&json, "min"), num(&json, "max")), (1.0, 10.0));
    // clock_offsets, in seconds.
    assert_eq!(
        json["clock_offsets"],
        serde_json::json!([{"id": 2, "offset_ms": 1500, "error_ms": 3}])
    );
    assert_eq!(
        holders,
        BTreeMap::from([
            (("yaraus_clock_offset_seconds", "2"), 1.5),
            (("yaraus_clock_error_seconds", "2"), 0.003),
        ])
    );
    // Every metric says what it is.
    for name in types.keys() {
        assert!(
            out.stdout.contains(&format!("# HELP {name} ")),
            "{name} has no HELP"
        );
    }
    assert_eq!(num(&json, "extend_ttl_count"), 12.0);
    assert_eq!(num(&json, "client_get_id_success"), 1.0);
    assert_eq!(num(&json, "using_ids"), 3.0);
}
