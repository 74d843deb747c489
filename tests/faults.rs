//! Real faults under load: the chaos suite (servers, Sentinel and the network
//! failing under many clients; `scripts/chaos.sh` soaks it) and the
//! deployments (Sentinel failover, a promoted replica, Cluster, TLS).

mod chaos;
mod common;
mod deploy;
