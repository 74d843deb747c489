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

/// `redis-cli -3` at a terminal, as a person uses it: it sends `HELLO 3`
/// on connecting (and redis-cli 7 asks `COMMAND DOCS` for its hints:
/// refused, it uses the help built into it), then prints the RESP3 replies
/// of what is typed, a transaction's included.
#[test]
fn interactive_redis_cli_3_at_a_terminal() {
    require_test_tool(
        "redis-cli",
        "redis-tools",
        "the real Redis clients are pointed at `yaraus seq serve`",
    );
    let servers = masters(3, true);
    let serve = Serve::start(&servers, &[]);
    let scratch = common::scratch::Scratch::new();
    // A terminal of a known width: without one, redis-cli's line editor
    // asks the terminal where its cursor is, and eats what is typed as
    // the answer.
    let line = format!("stty cols 80 rows 24; redis-cli -3 -p {}", serve.port);
    let (mut run, mut keyboard) = common::pty::on_a_pty(&scratch, &line);
    // The terminal is script(1)'s stdout.
    let screen = |run: &common::process::Run, text: &str| {
        common::wait_until(&format!("{text:?} on the screen"), common::EVENT, || {
            run.output().contains(text)
        });
    };
    screen(&run, &format!("127.0.0.1:{}>", serve.port));
    keyboard.type_in("INCR orders\r");
    screen(&run, "(integer) 1");
    keyboard.type_in("GET nothing\r");
    screen(&run, "(nil)");
    keyboard.type_in("HELLO\r");
    screen(&run, "\"proto\" => (integer) 3");
    keyboard.type_in("MULTI\r");
    screen(&run, "OK");
    keyboard.type_in("INCR orders\r");
    screen(&run, "QUEUED");
    keyboard.type_in("EXEC\r");
    screen(&run, "1) (integer) 2");
    keyboard.type_in("QUIT\r");
    assert_eq!(run.wait(), 0, "{}", run.output());
    assert!(!run.output().contains("HELLO 3 failed"), "{}", run.output());
}
