//! The arguments of `yaraus health`.

use super::duration;
use clap::{Args, ValueEnum};
use std::time::Duration;

pub(super) const HEALTH_ABOUT: &str = "Where the deployment stands, read on every node given \
with --redis (the same list as the other subcommands: N masters, or one pool server, Sentinel \
or Cluster): each node (it answers, keeps every write, takes our password); every majority \
counter of the namespace (sequences, lock and hilo-agent fencing counters) on every node: holds \
it, quarantined and ripe when, missing; every hilo sequence's high-water mark on every shard; \
on a single server, the worker-id pool. A table for a person, --format json for scripts. \
Writes nothing.\n\n\
--wait DURATION makes it the gate of a rolling maintenance: it heals what is ripe (the \
quarantined repair that every call makes), marks what it finds empty so that the quarantine \
starts now, says what it waits for and when it expects it, and exits 0 as soon as every node \
holds everything, or with 75/69 at the bound: \
`for n in a b c; do restart $n; yaraus health --wait 2m --redis ... || exit; done`.";

pub(super) const HEALTH_EXIT_STATUS: &str = "\
Exit status:
  0       every node answers and holds every counter and mark
  2       usage error: bad flag, malformed URL, nonsense duration
  69      something is lost on a majority (a counter several nodes lost at once, a creation
          stopped half-way), or a majority is out of reach: the finding names it and the one
          repair a person must decide
  75      available but degraded: a node out of reach, not durable, quarantined, or lacking a
          counter or a shard's mark (each named, with what heals it); with --wait, still so at
          its bound

Examples:
  yaraus health --redis redis://a:6379 --redis redis://b:6379 --redis redis://c:6379
  yaraus health --wait 2m --format json --redis redis://a:6379,redis://b:6379,redis://c:6379";

#[derive(Args, Debug)]
pub struct HealthArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = HealthFormat::Table)]
    pub format: HealthFormat,

    /// Heal what is ripe and wait until every node holds everything, for at most DURATION.
    ///
    /// Marks the nodes found without a counter (their quarantine starts now), sets again those
    /// whose quarantine is over, and looks again every second, saying what it waits for; exits
    /// 0 as soon as all is held, else with the status of what is left at DURATION (75 or 69).
    /// Without it: one look, nothing written.
    #[arg(long, short = 'w', value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub wait: Option<Duration>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HealthFormat {
    /// Lines for a person: the nodes, what each counter is on each node, the findings.
    Table,
    /// One JSON object: nodes, counters, shards, pool, findings, status.
    Json,
    /// Gauges in the Prometheus text format, for node_exporter's textfile collector.
    Prometheus,
}
