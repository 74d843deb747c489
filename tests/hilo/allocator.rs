//! The in-process allocator (library API) against real shards: ids from
//! two allocators never repeat, blocks are reserved ahead, the batch grows
//! when blocks go fast, and a SIGKILLed shard is left for another.

use crate::hilo::common::{RedisServer, runtime};
use crate::hilo::*;
use std::collections::HashSet;
use std::time::Duration;
use yaraus::hilo::{Allocator, AllocatorOptions, HiloKeys, Reserver};
use yaraus::store::{Quorum, Target};

fn allocator(on: &[&RedisServer], batch: u64, start_at: usize) -> Allocator {
    let targets: Vec<Target> = on
        .iter()
        .map(|s| Target::parse(&s.url()).unwrap())
        .collect();
    let quorum = Quorum::new(&targets, Duration::from_secs(2), true).unwrap();
    let mut reserver = Reserver::new(quorum, HiloKeys::new("yaraus", NAME).unwrap()).unwrap();
    reserver.start_at(start_at);
    let mut options = AllocatorOptions::new(batch);
    // Generous, so that the growth below does not depend on this machine's
    // speed: a block of a few hundred ids lasts microseconds.
    options.block_life = Duration::from_secs(10);
    Allocator::new(reserver, options).unwrap()
}

#[test]
fn two_allocators_never_repeat_an_id_and_the_batch_grows() {
    let servers = shards(2);
    let all: Vec<&RedisServer> = servers.iter().collect();
    agent_once(&all, 100_000, 2);
    runtime().block_on(async {
        let mut a = allocator(&all, 10, 0);
        let mut b = allocator(&all, 10, 0);
        let mut seen = HashSet::new();
        let (mut last_a, mut last_b) = (0, 0);
        for _ in 0..5000 {
            let x = a.next().await.unwrap();
            let y = b.next().await.unwrap();
            assert!(
                x > last_a && y > last_b,
                "ids of one allocator increase here"
            );
            (last_a, last_b) = (x, y);
            assert!(seen.insert(x), "{x} twice");
            assert!(seen.insert(y), "{y} twice");
        }
        assert!(a.batch() > 10, "the batch grew: {}", a.batch());
        assert!(
            a.batch() <= 640,
            "at most 64 times the first: {}",
            a.batch()
        );
    });
    let reserved: u64 = all.iter().map(|s| meta_number(s, "reserved")).sum();
    assert!(reserved >= 10_000, "{reserved}");
}

#[test]
fn an_allocator_moves_to_another_shard_when_its_shard_is_sigkilled() {
    let mut servers = shards(2);
    {
        let all: Vec<&RedisServer> = servers.iter().collect();
        agent_once(&all, 1000, 1);
    }
    let first_windows = windows(&servers[0]);
    let second = windows(&servers[1]);
    let all: Vec<&RedisServer> = servers.iter().collect();
    let rt = runtime();
    let mut alloc = allocator(&all, 5, 0);
    let early: Vec<u64> = rt.block_on(async {
        let mut ids = Vec::new();
        for _ in 0..3 {
            ids.push(alloc.next().await.unwrap());
        }
        ids
    });
    assert!(early.iter().all(|&id| id < first_windows[0].1), "{early:?}");
    servers[0].sigkill();
    let later: Vec<u64> = rt.block_on(async {
        let mut ids = Vec::new();
        for _ in 0..50 {
            ids.push(alloc.next().await.unwrap());
        }
        ids
    });
    // Ids of blocks reserved before the kill may still come; then the
    // second shard's.
    assert!(
        later
            .iter()
            .any(|&id| id >= second[0].0 && id < second[0].1),
        "{later:?}"
    );
    let all_ids: HashSet<u64> = early.iter().chain(&later).copied().collect();
    assert_eq!(all_ids.len(), 53);
}
