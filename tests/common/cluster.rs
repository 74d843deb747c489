//! A Redis Cluster of real `redis-server` processes for the tests: N masters
//! with `cluster-enabled yes`, the 16384 slots split evenly between them,
//! joined with `CLUSTER MEET`, and awaited until every node says
//! `cluster_state:ok`. No replicas: what is tested here is that yaraus's keys
//! and scripts fit the Cluster's slots, not Cluster failover.

use super::server::percent_encode;
use super::{EVENT, RedisServer, ServerOptions, wait_until};

const SLOTS: u32 = 16384;

/// The masters of one cluster. Dropping it kills them all.
pub struct Cluster {
    pub nodes: Vec<RedisServer>,
}

impl Cluster {
    pub fn start(masters: usize) -> Cluster {
        let nodes: Vec<RedisServer> = (0..masters)
            .map(|_| {
                RedisServer::start_with(ServerOptions {
                    tcp: true,
                    extra_args: ["--cluster-enabled", "yes", "--cluster-node-timeout", "2000"]
                        .map(String::from)
                        .to_vec(),
                    ..Default::default()
                })
            })
            .collect();
        let per = SLOTS / masters as u32;
        for (i, node) in nodes.iter().enumerate() {
            let lo = per * i as u32;
            let hi = if i + 1 == masters {
                SLOTS - 1
            } else {
                lo + per - 1
            };
            let _: redis::Value =
                node.query(&["CLUSTER", "ADDSLOTSRANGE", &lo.to_string(), &hi.to_string()]);
        }
        for node in &nodes[1..] {
            let port = node.port().expect("tcp").to_string();
            let _: redis::Value = nodes[0].query(&["CLUSTER", "MEET", "127.0.0.1", &port]);
        }
        wait_until("the cluster to be ok on every node", EVENT, || {
            nodes.iter().all(|n| {
                let info: String = n.query(&["CLUSTER", "INFO"]);
                info.contains("cluster_state:ok")
                    && info.contains(&format!("cluster_known_nodes:{masters}"))
            })
        });
        Cluster { nodes }
    }

    /// `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,…?ns=NS`.
    pub fn url(&self, ns: &str) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port().expect("tcp")))
            .collect();
        format!(
            "redis+cluster://{}?ns={}",
            hosts.join(","),
            percent_encode(ns)
        )
    }

    /// The node that serves `key`'s slot.
    pub fn node_of(&self, key: &str) -> &RedisServer {
        let slot: i64 = self.nodes[0].query(&["CLUSTER", "KEYSLOT", key]);
        let per = (SLOTS / self.nodes.len() as u32) as i64;
        let i = ((slot / per) as usize).min(self.nodes.len() - 1);
        &self.nodes[i]
    }

    /// Every key of every node.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .nodes
            .iter()
            .flat_map(|n| n.query::<Vec<String>>(&["KEYS", "*"]))
            .collect();
        keys.sort();
        keys
    }
}
