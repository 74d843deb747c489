//! `run --min N --max M` re-creates the pool of a Redis restarted without
//! persistence, instead of failing with 125 until someone runs `init`:
//! `run` clients loop while the server is restarted empty, and every one
//! started after the restart gets an id. Without `--min/--max` a missing
//! pool is still an error (125), which says how to have it re-created.

use super::*;

/// A `run` of `true` with `extra` options: its exit status and stderr.
fn one_run(server: &RedisServer, extra: &[&str]) -> (Option<i32>, String) {
    let url = server.url_ns(NS);
    let mut args = vec!["run", "--redis", &url, "--wait", "30s"];
    args.extend(QUICK_RUN);
    args.extend(extra);
    args.extend(["--", "true"]);
    let out = run_yaraus(&args, &[], ENDS_WITHIN);
    (out.code, out.stderr)
}

#[test]
fn run_given_the_range_re_creates_a_pool_lost_in_a_restart() {
    let mut server = RedisServer::start();
    common::pool::init_pool(&server, 1, 3);
    let range = ["--min", "1", "--max", "3"];
    // Clients loop on their own while the server restarts empty.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let url = server.url_ns(NS);
    let loops: Vec<_> = (0..3)
        .map(|_| {
            let (stop, url) = (stop.clone(), url.clone());
            std::thread::spawn(move || {
                let mut codes = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let mut args = vec!["run", "--redis", &url, "--wait", "30s"];
                    args.extend(QUICK_RUN);
                    args.extend(["--min", "1", "--max", "3", "--", "true"]);
                    codes.push(run_yaraus(&args, &[], ENDS_WITHIN).code);
                }
                codes
            })
        })
        .collect();
    for _ in 0..3 {
        wait_until("a run on the pool", EVENT, || {
            server
                .try_query::<Option<String>>(&["HGET", "t:stats", "get_id_success"])
                .is_ok_and(|n| n.is_some())
        });
        server.restart_empty();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for handle in loops {
        let codes = handle.join().expect("a client loop");
        assert!(codes.iter().all(|&c| c == Some(0)), "{codes:?}");
    }
    assert_eq!(ids(&server), ["A1", "A2", "A3"]);
    // Once more, with nobody to re-create it: a run without the range fails
    // and says how to have the pool re-created, until one with it does.
    server.restart_empty();
    let (code, stderr) = one_run(&server, &[]);
    assert_eq!(code, Some(125), "{stderr}");
    assert!(stderr.contains("--min and --max"), "{stderr}");
    let (code, stderr) = one_run(&server, &range);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(ids(&server), ["A1", "A2", "A3"]);
}

/// The pool's members, sorted.
fn ids(server: &RedisServer) -> Vec<String> {
    let mut ids: Vec<String> = server.query(&["ZRANGE", "t:ids", "0", "-1"]);
    ids.sort();
    ids
}

#[test]
fn a_pool_with_another_range_is_left_alone_with_a_warning() {
    let server = RedisServer::start();
    common::pool::init_pool(&server, 1, 3);
    let (code, stderr) = one_run(&server, &["--min", "1", "--max", "5"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("holds ids 1..3"), "{stderr}");
    assert_eq!(ids(&server), ["A1", "A2", "A3"]);
}
