//! Unit tests of the rules `acl-rules` prints: the exact strings for each
//! part, the key and channel patterns, and the Cluster forms.

use super::*;

#[test]
fn reads_the_commands_out_of_a_script() {
    let lua = "local t = redis.call('TYPE', KEYS[1])['ok']\n\
               redis.pcall(\"get\", k) redis.call( 'ZADD', k, 1, m)\n\
               -- redis.status_reply('x')";
    let found: Vec<String> = script_commands(lua).into_iter().collect();
    assert_eq!(found, ["get", "type", "zadd"]);
}

#[test]
fn every_script_command_is_granted_to_its_subcommand() {
    let d = Deployment::default();
    for &part in Part::all() {
        let rules = Rules::new(&[part], "ns", Some("locks:"), &d).unwrap();
        let granted: BTreeSet<&str> = rules.commands().collect();
        for script in part.scripts() {
            for c in script_commands(script) {
                assert!(granted.contains(c.as_str()), "{part:?} lacks {c}");
            }
        }
    }
}

#[test]
fn the_pool_rules_are_exact() {
    let rules = Rules::new(&[Part::Run], "pool", None, &Deployment::default()).unwrap();
    assert_eq!(
        rules.to_rules(),
        "reset on ~pool:clients ~pool:clock ~pool:ids ~pool:layout ~pool:queue:pool:ids \
         ~pool:queue:pool:shard:* ~pool:shard:* ~pool:stats &pool:wake:pool:ids \
         &pool:wake:pool:ids:* &pool:wake:pool:shard:* -@all +evalsha +get +hdel +hget +hincrby \
         +hset +info|replication +pexpire +ping +pttl +publish +scan +script|load +spublish \
         +subscribe +time +type +wait +zadd +zrange +zrem +zscore"
    );
    // A sharded pool's shards, each under its own hash tag in a Cluster.
    let d = Deployment {
        cluster: true,
        ..Default::default()
    };
    let rules = Rules::new(&[Part::Run], "pool", None, &d)
        .unwrap()
        .to_rules();
    for wanted in [
        "~{pool}:layout ",
        "~{pool:shard:* ",
        "~pool:queue:{pool:shard:* ",
        "&pool:wake:{pool:shard:* ",
    ] {
        assert!(rules.contains(wanted), "{wanted} missing: {rules}");
    }
    let d = Deployment {
        min_replicas: 1,
        ..Default::default()
    };
    let rules = Rules::new(&[Part::Run], "pool", None, &d).unwrap();
    assert!(!rules.to_rules().contains("info"), "{}", rules.to_rules());
    let d = Deployment {
        replicas: Some(0),
        ..Default::default()
    };
    let rules = Rules::new(&[Part::Run], "pool", None, &d)
        .unwrap()
        .to_rules();
    assert!(
        !rules.contains("info") && !rules.contains("+wait"),
        "{rules}"
    );
}

#[test]
fn lock_needs_a_prefix_and_globs_are_escaped() {
    let d = Deployment::default();
    assert!(matches!(
        Rules::new(&[Part::Lock], "ns", None, &d),
        Err(Error::Usage(_))
    ));
    assert!(Rules::new(&[Part::Lock], "ns", Some(""), &d).is_err());
    assert!(Rules::new(&[Part::Lock], "n s", Some("l:"), &d).is_err());
    let r = Rules::new(&[Part::Lock], "a*b", Some("l?["), &d)
        .unwrap()
        .to_rules();
    assert!(
        r.contains(r"~l\?\[*")
            && r.contains(r"~a\*b:fencing:l\?\[*")
            && r.contains(r"~a\*b:queue:l\?\[*"),
        "{r}"
    );
    assert!(
        r.contains(r"&a\*b:wake:l\?\[*") && r.contains("+subscribe"),
        "the wake channel, and nothing wider: {r}"
    );
    assert!(
        !r.contains("config"),
        "one master needs no durability check: {r}"
    );
    let several = Deployment {
        several_masters: true,
        ..Default::default()
    };
    let r = Rules::new(&[Part::Lock], "ns", Some("l:"), &several)
        .unwrap()
        .to_rules();
    assert!(r.contains("+config|get"), "{r}");
    let trusted = Deployment {
        assume_durable: true,
        ..several
    };
    let r = Rules::new(&[Part::Lock], "ns", Some("l:"), &trusted)
        .unwrap()
        .to_rules();
    assert!(!r.contains("config"), "{r}");
}

#[test]
fn run_may_listen_on_its_pool_channel_and_its_waiters_channels_only() {
    let rules = |cluster| {
        let d = Deployment {
            cluster,
            ..Default::default()
        };
        Rules::new(&[Part::Run], "ns", None, &d).unwrap().to_rules()
    };
    let r = rules(false);
    assert!(
        r.contains("&ns:wake:ns:ids ")
            && r.contains("&ns:wake:ns:ids:* ")
            && r.contains("~ns:queue:ns:ids ")
            && r.contains("+subscribe"),
        "{r}"
    );
    let r = rules(true);
    assert!(
        r.contains("&ns:wake:{ns}:ids ")
            && r.contains("&ns:wake:{ns}:ids:* ")
            && r.contains("~ns:queue:{ns}:ids ")
            && r.contains("+ssubscribe"),
        "{r}"
    );
    assert!(!r.contains("+subscribe") && !r.contains(":ids*"), "{r}");
}

#[test]
fn the_deployment_adds_its_commands() {
    let d = Deployment {
        cluster: true,
        sentinel: true,
        select: true,
        ..Default::default()
    };
    let r = Rules::new(&[Part::Init], "ns", None, &d)
        .unwrap()
        .to_rules();
    for c in ["+cluster|slots", "+role", "+select", "~{ns}:ids"] {
        assert!(r.contains(c), "{c} missing: {r}");
    }
}
