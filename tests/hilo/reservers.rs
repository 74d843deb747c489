//! Many reservers at once: eight `hilo next` loops on three shards while
//! two agents run at once, and reservers moving on from a SIGKILLed shard.

use crate::hilo::common::RedisServer;
use crate::hilo::common::lock::finish;
use crate::hilo::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

/// `hilo agent --every` over `on`, running in the background.
fn agent_every(on: &[&RedisServer], size: u64, min_open: u32) -> Child {
    let mut cmd = crate::hilo::common::yaraus();
    cmd.args(["hilo", "agent", NAME, "--every", "50ms", "--wait", "5s"])
        .args(["--window-size", &size.to_string()])
        .args(["--min-open", &min_open.to_string()]);
    for s in on {
        cmd.arg("--redis").arg(s.url());
    }
    cmd.stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the agent")
}

/// `hilo next` until it gives a block; a call that found every shard
/// without an open window (exit 75: the agents have not caught up) is
/// tried again.
fn next_block(on: &[&RedisServer], batch: u64) -> Block {
    loop {
        let out = hilo(on, &["next", NAME, "--batch", &batch.to_string()]);
        if out.code == Some(75) {
            assert!(out.stderr.contains("no open window"), "{out:?}");
            continue;
        }
        return block(&out);
    }
}

#[test]
fn eight_reservers_and_two_agents_on_three_shards_never_share_an_id() {
    let servers = shards(3);
    let on: Vec<&RedisServer> = servers.iter().collect();
    let (size, min_open) = (200, 2);
    let agents = [
        agent_every(&on, size, min_open),
        agent_every(&on, size, min_open),
    ];
    crate::hilo::common::wait_until("the agents' first run", LIMIT, || {
        on.iter().all(|s| meta_number(s, "created") > 0)
    });
    let blocks = Arc::new(Mutex::new(Vec::new()));
    thread::scope(|scope| {
        for r in 0..8u64 {
            let (on, blocks) = (&on, Arc::clone(&blocks));
            scope.spawn(move || {
                for _ in 0..30 {
                    let b = next_block(on, 5 + r * 5);
                    blocks.lock().unwrap().push(b);
                }
            });
        }
    });
    for agent in &agents {
        kill(Pid::from_raw(agent.id() as i32), Signal::SIGTERM).unwrap();
    }
    for agent in agents {
        let out = finish(agent);
        assert_eq!(out.status.code(), Some(0), "agent: {out:?}");
    }
    let blocks = blocks.lock().unwrap().clone();
    assert_eq!(blocks.len(), 240);
    let handed_out = assert_disjoint(&blocks);
    let reserved: u64 = on.iter().map(|s| meta_number(s, "reserved")).sum();
    assert_eq!(
        handed_out, reserved,
        "the shards count {reserved} ids handed out, the reservers got {handed_out}"
    );
    assert_free_ids_unused(&on, &blocks);
    let created: u64 = on.iter().map(|s| meta_number(s, "created")).sum();
    let hwm = on.iter().map(|s| meta_number(s, "hwm")).max().unwrap();
    assert!(
        created > 3 * u64::from(min_open),
        "the agents refilled the shards: {created} windows"
    );
    assert!(created * size >= reserved);
    assert!(
        blocks.iter().all(|b| b.last < hwm),
        "every block below {hwm}"
    );
}

#[test]
fn reservers_move_on_when_a_shard_is_sigkilled() {
    let mut servers = shards(3);
    {
        let on: Vec<&RedisServer> = servers.iter().collect();
        agent_once(&on, 100_000, 3);
    }
    let killed_windows = windows(&servers[1]);
    let urls: Vec<String> = servers.iter().map(RedisServer::url).collect();
    let calls = AtomicUsize::new(0);
    let blocks = Mutex::new(Vec::new());
    let after_kill = Mutex::new(Vec::new());
    let killed = std::sync::atomic::AtomicBool::new(false);
    thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                loop {
                    let was_killed = killed.load(Ordering::SeqCst);
                    let mut args = vec!["hilo", "next", NAME, "--batch", "10"];
                    for u in &urls {
                        args.extend(["--redis", u]);
                    }
                    let b = block(&run_yaraus(&args, &[], LIMIT));
                    calls.fetch_add(1, Ordering::SeqCst);
                    if was_killed {
                        let mut after = after_kill.lock().unwrap();
                        after.push(b);
                        if after.len() >= 40 {
                            break;
                        }
                    } else {
                        blocks.lock().unwrap().push(b);
                    }
                }
            });
        }
        crate::hilo::common::wait_until("20 blocks before the kill", LIMIT, || {
            calls.load(Ordering::SeqCst) >= 20
        });
        servers[1].sigkill();
        killed.store(true, Ordering::SeqCst);
    });
    let after = after_kill.into_inner().unwrap();
    for b in &after {
        assert!(
            killed_windows
                .iter()
                .all(|&(start, end, _)| b.last < start || b.first >= end),
            "block {b:?}, reserved after the kill, is from the killed shard's windows"
        );
    }
    let mut all = blocks.into_inner().unwrap();
    all.extend(after);
    assert_disjoint(&all);
}
