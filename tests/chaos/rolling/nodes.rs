//! The three deployments of the majority algorithms (`seq`, hilo shards,
//! lock masters), three servers each, every one `appendfsync always`, and
//! the wipe of one node of each, awaited until it holds its counter again.

use crate::chaos::common::RedisServer;
use crate::chaos::common::lock::masters;
use std::time::{Duration, Instant};

pub const SEQ_KEY: &str = "yaraus:seq:orders";
pub const LOCK_FENCE: &str = "yaraus:fencing:deploy";
pub const HILO: &str = "ids";
/// Time for a wiped node to vote again: its 10 s quarantine, the next heal
/// pass, and a loaded machine.
const HEAL_BOUND: Duration = Duration::from_secs(60);

/// The three kinds of deployment, each on its own three servers.
pub struct Deployments {
    pub seq: Vec<RedisServer>,
    pub hilo: Vec<RedisServer>,
    pub lock: Vec<RedisServer>,
}

impl Deployments {
    pub fn start() -> Deployments {
        Deployments {
            seq: masters(3, true),
            hilo: masters(3, true),
            lock: masters(3, true),
        }
    }

    /// The server of each deployment at `i`, with the key that holds its
    /// counter (the agent's lock fencing counter, for the hilo shards).
    fn at(&mut self, i: usize) -> [(&mut RedisServer, String); 3] {
        [
            (&mut self.seq[i], SEQ_KEY.to_string()),
            (
                &mut self.hilo[i],
                format!("yaraus:fencing:yaraus:hilo:{{{HILO}}}:agent"),
            ),
            (&mut self.lock[i], LOCK_FENCE.to_string()),
        ]
    }
}

/// `--redis URL` for each of `servers`.
pub fn urls(servers: &[RedisServer]) -> Vec<String> {
    servers
        .iter()
        .flat_map(|s| ["--redis".to_string(), s.url()])
        .collect()
}

/// Wipes node `i` of every deployment (restarted empty, as after a disk
/// replacement); nothing awaited.
pub fn wipe(d: &mut Deployments, i: usize) {
    for (server, _) in d.at(i) {
        server.restart_empty();
    }
}

/// Wipes node `i` of every deployment, then waits until each holds its
/// counter again; returns the times from the wipe to each heal.
pub fn wipe_and_heal(d: &mut Deployments, i: usize) -> Vec<Duration> {
    let wiped = Instant::now();
    wipe(d, i);
    let mut healed = Vec::new();
    for (server, key) in d.at(i) {
        let what = format!(
            "{key} on the wiped node {} to hold a counter again",
            server.url()
        );
        crate::chaos::common::wait_until(&what, HEAL_BOUND, || {
            let holds = server
                .try_query::<String>(&["GET", &key])
                .is_ok_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
            if !holds {
                std::thread::sleep(Duration::from_millis(50));
            }
            holds
        });
        healed.push(wiped.elapsed());
    }
    healed
}
