//! The real redis-cli and redis-benchmark as clients of the server.

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
