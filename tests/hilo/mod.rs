//! `yaraus hilo` against real redis-servers: blocks from several shards
//! never overlap and are all accounted for, with two agents at once, a shard
//! SIGKILLed, the shard with the highest window restarted empty, an agent
//! with a shard down; bad input; the in-process allocator.
//!
//! Shards persist every write (`appendfsync always`), as `hilo` requires
//! without `--allow-volatile`; `restart_empty` deletes their files.

use crate::common;

mod allocator;
mod input;
mod loss;
mod metrics;
mod reservers;

use common::lock::masters;
use common::{Output, RedisServer, run_yaraus};
use std::time::Duration;

pub const NAME: &str = "orders";
/// The sequence's hash on every shard.
pub const META: &str = "yaraus:hilo:{orders}";
/// How long one `yaraus hilo` may run before the test fails.
pub const LIMIT: Duration = Duration::from_secs(60);

/// `n` fresh shards that persist every write.
pub fn shards(n: usize) -> Vec<RedisServer> {
    masters(n, true)
}

/// `yaraus hilo ARGS` with a `--redis` per shard in `on`.
pub fn hilo(on: &[&RedisServer], args: &[&str]) -> Output {
    let mut all: Vec<String> = vec!["hilo".into()];
    all.extend(args.iter().map(|a| a.to_string()));
    for s in on {
        all.push("--redis".into());
        all.push(s.url());
    }
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    run_yaraus(&all, &[], LIMIT)
}

/// One agent run over `on`: windows of `size`, `min_open` per shard.
pub fn agent_once(on: &[&RedisServer], size: u64, min_open: u32) -> Output {
    let (size, min_open) = (size.to_string(), min_open.to_string());
    let out = hilo(
        on,
        &[
            "agent",
            NAME,
            "--once",
            "--window-size",
            &size,
            "--min-open",
            &min_open,
        ],
    );
    assert_eq!(out.code, Some(0), "agent: {out:?}");
    out
}

/// A block `first..=last`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Block {
    pub first: u64,
    pub last: u64,
}

/// The block a successful `hilo next` printed.
pub fn block(out: &Output) -> Block {
    assert_eq!(out.code, Some(0), "next: {out:?}");
    let mut words = out
        .stdout
        .split_whitespace()
        .map(|w| w.parse().expect("an id"));
    let (first, last) = (words.next().expect("FIRST"), words.next().expect("LAST"));
    assert!(words.next().is_none() && first <= last, "{out:?}");
    Block { first, last }
}

/// Checks that no two blocks share an id; returns how many ids they hold.
pub fn assert_disjoint(blocks: &[Block]) -> u64 {
    let mut sorted = blocks.to_vec();
    sorted.sort();
    for pair in sorted.windows(2) {
        assert!(
            pair[0].last < pair[1].first,
            "blocks {:?} and {:?} overlap",
            pair[0],
            pair[1]
        );
    }
    sorted.iter().map(|b| b.last - b.first + 1).sum()
}

/// A field of the sequence's hash on `shard`, as a number (0 if absent).
pub fn meta_number(shard: &RedisServer, field: &str) -> u64 {
    let v: Option<String> = shard.query(&["HGET", META, field]);
    v.map_or(0, |v| v.parse().expect("a number"))
}

/// The open windows of `shard`: (start, end, next).
pub fn windows(shard: &RedisServer) -> Vec<(u64, u64, u64)> {
    let all: Vec<(String, String)> = shard.query(&["HGETALL", &format!("{META}:windows")]);
    let mut windows: Vec<_> = all
        .into_iter()
        .map(|(start, v)| {
            let (end, next) = v.split_once(' ').expect("END NEXT");
            (
                start.parse().unwrap(),
                end.parse().unwrap(),
                next.parse().unwrap(),
            )
        })
        .collect();
    windows.sort();
    windows
}

/// Checks that no id still free in an open window was handed out.
pub fn assert_free_ids_unused(shards: &[&RedisServer], blocks: &[Block]) {
    for shard in shards {
        for (_, end, next) in windows(shard) {
            for b in blocks {
                assert!(
                    b.last < next || b.first >= end,
                    "block {b:?} was handed out, yet [{next}, {end}) is still free on {}",
                    shard.url()
                );
            }
        }
    }
}
