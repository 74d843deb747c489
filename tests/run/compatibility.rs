//! Compatibility and bad input.

use super::*;

#[test]
fn a_pool_written_by_hand_in_the_go_layout_is_used_correctly() {
    let server = RedisServer::start();
    // What the Go tool writes: every id at score 0, no ns:stats; one id held
    // by a Go client (float score in Unix seconds), and its client counter.
    let mut zadd = vec!["ZADD", IDS];
    let members: Vec<String> = (1..=11).map(enc).collect();
    for m in &members {
        zadd.extend(["0", m.as_str()]);
    }
    server.cmd(&zadd);
    let go_until = format!("{:.3}", server_now(&server) + 3600.0);
    server.cmd(&["ZADD", IDS, &go_until, "A1"]);
    server.cmd(&["HSET", CLIENTS, "A1", "gohost-1700000000.123-7"]);
    server.cmd(&["SET", "t:next_id", "7"]);
    let go_holder = server.snapshot();

    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    let child = scratch.script(
        "child.sh",
        r#"echo "$YARAUS_WORKER_ID" > "$D/id.$1"
while [ ! -e "$D/go" ]; do sleep 0.05; done
"#,
    );
    let mut a = Run::start(&url, &scratch, FAST, &["sh", &child, "a"]);
    assert_eq!(scratch.wait_line("id.a"), "2");
    let mut b = Run::start(&url, &scratch, FAST, &["sh", &child, "b"]);
    assert_eq!(scratch.wait_line("id.b"), "3");
    let (client_a, _) = a.lease().unwrap();
    assert_leased_to(&server, 2, &client_a);

    // Renewals work on a pool without ns:stats too.
    let first = score(&server, 2).unwrap();
    wait_until("a renewal of id 2", EVENT, || {
        score(&server, 2).unwrap() > first
    });

    scratch.touch("go");
    assert_eq!(a.wait(), 0, "{}", a.log());
    assert_eq!(b.wait(), 0, "{}", b.log());
    assert_released(&server, 2, &client_a);
    let (client_b, _) = b.lease().unwrap();
    assert_released(&server, 3, &client_b);
    // The Go client's lease and its keys are as it left them.
    let now = server.snapshot();
    assert_eq!(now.get("t:next_id"), go_holder.get("t:next_id"));
    assert_eq!(score(&server, 1), Some(go_until.parse().unwrap()));
    assert_eq!(
        owner(&server, 1).as_deref(),
        Some("gohost-1700000000.123-7")
    );
    assert_eq!(leased_ids(&server), [1]);
}

#[test]
fn bad_input_gives_one_line_a_documented_code_and_leaves_redis_unchanged() {
    let server = RedisServer::start();
    let url = server.url_ns(NS);
    let scratch = Scratch::new();
    let ran = scratch.arg("ran");
    let secured = RedisServer::start_with(ServerOptions {
        tcp: true,
        requirepass: Some("s3cret".into()),
        ..Default::default()
    });
    let no_password = format!("redis://127.0.0.1:{}/0", secured.port().unwrap());
    let closed_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        format!("redis://127.0.0.1:{port}/0")
    };
    let missing_socket = format!("unix://{}", scratch.arg("no.sock"));

    let check = |what: &str, url: &str, args: &[&str], want: i32, expect: &str| {
        let before = server.snapshot();
        let mut cmd = common::yaraus();
        cmd.args(["run", "--quiet", "--redis", url])
            .args(args)
            .current_dir(scratch.dir())
            .stdin(Stdio::null());
        let mut run = Run::spawn(cmd, &scratch);
        let code = run.wait();
        let stderr = run.log();
        assert_eq!(code, want, "{what}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{what}: not one line: {stderr}");
        assert!(stderr.starts_with("yaraus: "), "{what}: {stderr}");
        assert!(stderr.contains(expect), "{what}: {stderr}");
        assert!(!Path::new(&ran).exists(), "{what}: the command ran");
        assert_eq!(server.snapshot(), before, "{what}: Redis changed");
    };

    check("no command", &url, &[], 2, "");
    check(
        "bad duration",
        &url,
        &["--interval", "soon", "--", "touch", &ran],
        2,
        "soon",
    );
    check(
        "bad wait",
        &url,
        &["--wait", "-1s", "--", "touch", &ran],
        2,
        "",
    );
    check(
        "pool not initialised",
        &url,
        &["--", "touch", &ran],
        125,
        "yaraus init",
    );
    server.cmd(&["SET", IDS, "not a pool"]);
    check(
        "ids of the wrong type",
        &url,
        &["--", "touch", &ran],
        125,
        "t:ids",
    );
    server.cmd(&["DEL", IDS]);
    // One attempt: a server out of reach is otherwise waited for (forever,
    // by default), which tests/riding_out checks.
    let once = ["--wait", "0", "--", "touch", &ran];
    check("unreachable socket", &missing_socket, &once, 69, "");
    check("closed port", &closed_port, &once, 69, "");
    check(
        "no password",
        &no_password,
        &["--", "touch", &ran],
        69,
        "authentication",
    );
}
