//! The real redis-cli and redis-benchmark as clients of the server, in
//! RESP2 (their default) and RESP3 (`-3`: `HELLO 3` first).

use super::*;
use common::tools::require_test_tool;

/// The real tools (the redis-tools package, beside redis-server).
#[test]
fn redis_cli_and_redis_benchmark_are_clients() {
    for tool in ["redis-cli", "redis-benchmark"] {
        require_test_tool(
            tool,
            "redis-tools",
            "the real Redis clients are pointed at `yaraus seq serve`",
        );
    }
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let port = serve.port.to_string();
    let cli = |args: &[&str]| {
        let out = common::command("redis-cli")
            .args(["-p", &port])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(cli(&["INCR", "orders"]), "1");
    assert_eq!(cli(&["INCRBY", "orders", "5"]), "6");
    assert_eq!(cli(&["GET", "orders"]), "6");
    let bench = common::command("redis-benchmark")
        .args([
            "-p", &port, "-c", "10", "-n", "500", "--csv", "INCR", "orders",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&bench.stdout);
    let stderr = String::from_utf8_lossy(&bench.stderr);
    assert!(bench.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("\"INCR orders\""), "{stdout}");
    assert!(!stderr.contains("WARNING"), "{stderr}");
    assert_eq!(cli(&["GET", "orders"]), "506");
}

/// `redis-cli -3` and `redis-benchmark -3`: `HELLO 3` accepted (no "HELLO 3
/// failed" on stderr), ids as before, the RESP3 null and map printed.
#[test]
fn redis_cli_and_redis_benchmark_in_resp3() {
    for tool in ["redis-cli", "redis-benchmark"] {
        require_test_tool(
            tool,
            "redis-tools",
            "the real Redis clients are pointed at `yaraus seq serve`",
        );
    }
    let servers = masters(3, true);
    for s in &servers {
        s.cmd(&["SET", "yaraus:seq:big", "9223372036854775806"]);
    }
    let serve = Serve::start(&servers, &[]);
    let port = serve.port.to_string();
    let cli = |args: &[&str]| {
        let out = common::command("redis-cli")
            .args(["-3", "-p", &port])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.is_empty(),
            "{args:?}: {stderr}"
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(cli(&["INCR", "orders"]), "1");
    assert_eq!(cli(&["INCRBY", "orders", "5"]), "6");
    assert_eq!(cli(&["GET", "orders"]), "6");
    assert_eq!(cli(&["GET", "nothing"]), "");
    assert_eq!(cli(&["INCR", "big"]), "9223372036854775807");
    assert_eq!(cli(&["INCR", "big"]), "9223372036854775808");
    let hello = cli(&["HELLO"]);
    assert!(hello.lines().any(|l| l == "proto 3"), "{hello}");
    // A map, printed as key value lines.
    assert_eq!(cli(&["CONFIG", "GET", "appendonly"]), "appendonly yes");
    assert!(cli(&["INFO", "health"]).starts_with("# Health"));
    let bench = common::command("redis-benchmark")
        .args([
            "-3", "-p", &port, "-c", "10", "-n", "500", "--csv", "INCR", "orders",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&bench.stdout);
    let stderr = String::from_utf8_lossy(&bench.stderr);
    assert!(bench.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("\"INCR orders\""), "{stdout}");
    assert!(
        !stderr.contains("WARNING") && !stderr.contains("HELLO"),
        "{stderr}"
    );
    assert_eq!(cli(&["GET", "orders"]), "506");
}
