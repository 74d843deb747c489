//! Unit tests of URL parsing and redaction: every form of `--redis`, and
//! that no password survives [`Target::display`](super::Target::display).

use super::*;

#[test]
fn takes_the_namespace_out() {
    let t = Target::parse("redis://localhost:6379/0?ns=pool1").unwrap();
    assert_eq!(t.namespace(), Some("pool1"));
    assert_eq!(t.display(), "redis://localhost:6379/0");
}

#[test]
fn hides_passwords() {
    let t = Target::parse("redis://user:s3cret@host:1/2?ns=x").unwrap();
    assert!(!t.display().contains("s3cret"), "{}", t.display());
    let t = Target::parse("redis+unix:///tmp/r.sock?pass=s3cret&db=1").unwrap();
    assert!(!t.display().contains("s3cret"), "{}", t.display());
    let e = Target::parse("redis://user:s3cret@ho st:1/").unwrap_err();
    assert!(!e.to_string().contains("s3cret"), "{e}");
    let e = Target::parse("redis://user:s3cret@host:1/notadb").unwrap_err();
    assert!(!e.to_string().contains("s3cret"), "{e}");
}

#[test]
fn debug_shows_no_secret() {
    let options = ConnectOptions {
        tls: Some(Tls {
            ca: Some(b"CA-PEM".to_vec()),
            client: Some((b"CERT-PEM".to_vec(), b"KEY-PEM".to_vec())),
            insecure: false,
        }),
        ..Default::default()
    };
    let t = Target::parse_with("rediss://u:s3cret@host:1/0", &options).unwrap();
    let shown = format!("{t:?} {options:?}");
    for secret in ["s3cret", "KEY-PEM", "CERT-PEM", "CA-PEM"] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
}

#[test]
fn rejects_nonsense() {
    for bad in [
        "localhost:6379",
        "http://localhost",
        "redis://host:99999",
        "redis://host/abc",
        "",
    ] {
        assert!(
            matches!(Target::parse(bad), Err(Error::Usage(_))),
            "{bad} accepted"
        );
    }
}

#[test]
fn sentinel_and_cluster_urls_keep_their_host_lists() {
    let raw = "redis+sentinel://u:s3cret@h1:26379,h2/mymaster/2?ns=pool";
    let t = Target::parse(raw).unwrap();
    assert_eq!(t.namespace(), Some("pool"));
    assert_eq!(
        t.display(),
        "redis+sentinel://u:***@h1:26379,h2:26379/mymaster/2"
    );
    let Endpoint::Sentinel {
        sentinels,
        master,
        node,
    } = t.endpoint()
    else {
        panic!("{t:?}")
    };
    assert_eq!(master, "mymaster");
    assert_eq!(sentinels.len(), 2);
    assert_eq!(node.db(), 2);
    assert_eq!(node.password(), Some("s3cret"));
    // The sentinels are asked without the master's credentials.
    assert_eq!(sentinels[0].redis_settings().password(), None);

    let t = Target::parse("redis+cluster://:pw@127.0.0.1:7000,127.0.0.1:7001?ns=x").unwrap();
    assert!(t.is_cluster());
    assert_eq!(
        t.display(),
        "redis+cluster://:***@127.0.0.1:7000,127.0.0.1:7001"
    );
    assert_eq!(t.namespace(), Some("x"));

    let options = ConnectOptions {
        sentinel: Some("main".into()),
        ..Default::default()
    };
    let t = Target::sentinels(
        &["redis://:pw@a:1/3?ns=q".into(), "redis://b:2".into()],
        &options,
    )
    .unwrap();
    assert_eq!(t.display(), "redis+sentinel://:***@a:1,b:2/main/3");
    assert_eq!(t.namespace(), Some("q"));
}

#[test]
fn lists_split_on_commas_between_urls_only() {
    let split = |s: &str| split_urls(&[s.to_string()]);
    assert_eq!(
        split("redis://a:1,redis://b:2"),
        ["redis://a:1", "redis://b:2"]
    );
    assert_eq!(
        split("redis+sentinel://a:1,b:2/m,redis://c:3"),
        ["redis+sentinel://a:1,b:2/m", "redis://c:3"]
    );
    assert_eq!(
        split_urls(&["redis+cluster://a:1,b:2".into(), "unix:///s".into()]),
        ["redis+cluster://a:1,b:2", "unix:///s"]
    );
}

#[test]
fn group_urls_refuse_nonsense() {
    for bad in [
        "redis+sentinel://h1:26379",
        "redis+sentinel://h1:26379,/m",
        "redis+sentinel://h1:26379/m/notadb",
        "redis+cluster://h:7000/3",
        "redis+cluster://h:notaport",
    ] {
        assert!(
            matches!(Target::parse(bad), Err(Error::Usage(_))),
            "{bad} accepted"
        );
    }
    let tls = ConnectOptions {
        tls: Some(Tls::default()),
        ..Default::default()
    };
    assert!(matches!(
        Target::parse_with("redis://h:1", &tls),
        Err(Error::Usage(_))
    ));
    assert!(Target::parse_with("rediss://h:1", &tls).is_ok());
}

#[test]
fn accepts_every_documented_form() {
    for good in [
        "redis://localhost",
        "redis://:pw@127.0.0.1:6380/3",
        "rediss://example.com:6390",
        "unix:///run/redis.sock",
        "redis+unix:///run/redis.sock?db=2",
    ] {
        Target::parse(good).unwrap_or_else(|e| panic!("{good}: {e}"));
    }
}
