//! A `run` and a `lock` started while the only server is down: they say
//! what they wait for, and get their id and lock once it is back, within
//! their `--wait`.

use super::*;

#[test]
fn a_run_started_while_redis_is_down_gets_its_id_once_it_is_back() {
    let mut server = durable_server();
    common::pool::init_pool(&server, 1, 1);
    server.sigkill();
    let scratch = Scratch::new();
    let opts = [&QUICK_RUN[..], &["--wait", "1m"]].concat();
    let ran = scratch.arg("ran");
    let mut run = Run::spawn(
        run_cmd(&server.url_ns(NS), &scratch, &opts, &["touch", &ran]),
        &scratch,
    );
    run.wait_log("waiting for a free id");
    assert!(!run.exited(), "{}", run.log());
    server.restart();
    assert_eq!(run.wait(), 0, "{}", run.log());
    assert!(scratch.exists("ran"));
    assert!(run.log().contains("cannot reach Redis"), "{}", run.log());
}

#[test]
fn a_lock_started_while_redis_is_down_is_taken_once_it_is_back() {
    let mut server = durable_server();
    server.sigkill();
    let scratch = Scratch::new();
    let ran = scratch.arg("ran");
    let cmd = lock_cmd(
        &server.url(),
        &scratch,
        "nightly",
        &["--wait", "1m"],
        &["touch", &ran],
    );
    let mut lock = Run::spawn(cmd, &scratch);
    lock.wait_log("waiting for the lock nightly");
    assert!(!lock.exited(), "{}", lock.log());
    server.restart();
    assert_eq!(lock.wait(), 0, "{}", lock.log());
    assert!(scratch.exists("ran"));
}
