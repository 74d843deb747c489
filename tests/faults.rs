//! Real faults under load: the chaos suite (servers, Sentinel and the network
//! failing under many clients; `scripts/chaos.sh` soaks it) and the
//! deployments (Sentinel failover, a promoted replica, Cluster, TLS); and
//! the long-running subcommands healing a wiped node with no request.

mod chaos;
mod common;
mod deploy;
mod healing;
