//! The arguments of `yaraus seq`: next, get, set-floor, serve.

use super::{WaitArgs, duration};
use clap::{Args, Subcommand};
use std::time::Duration;

pub(super) const SEQ_ABOUT: &str = "A named sequence of 64-bit ids kept by N independent Redis masters \
(--redis, given N times; 3 or 5 for tolerating 1 or 2 lost nodes): every id is greater than \
every id whose generation completed before it began, and no id is handed out twice, across \
crashes, restarts, a node that lost its data (it heals by itself after a 10-second quarantine), \
and partitions of a minority. Without a majority the sequence is unavailable, never wrong. The counter of NAME is the key NAMESPACE:seq:NAME on \
every node. Every node must run with appendonly yes, appendfsync always and a maxmemory-policy \
of noeviction or volatile-* (checked; --allow-volatile accepts the risk).";

/// Exit statuses of `yaraus seq`.
pub(super) const SEQ_EXIT_STATUS: &str = "\
Exit status:
  0    success
  1    get: no node holds the sequence (it was never used)
  2    usage error: bad flag, malformed URL, nonsense number or duration
  69   no majority of the nodes holding the sequence answered within --wait (default 5 x
       --timeout; set-floor: a node did not answer); never a guessed id; a node refused
       authentication or a command (ACL: see acl-rules), at once
  125  another failure: a node not durable (see --allow-volatile), a key of another type, the
       sequence at 2^64-1

Examples:
  yaraus seq next orders --redis redis://a --redis redis://b --redis redis://c
  yaraus seq next orders --count 100 --redis ...   # 100 consecutive ids, one per line
  yaraus seq get orders --redis ...
  yaraus seq set-floor orders 5000000 --redis ...  # after a disaster: never lowers a node
  yaraus seq serve --listen 127.0.0.1:7480 --redis ...; redis-cli -p 7480 INCR orders";

#[derive(Args, Debug)]
pub struct SeqArgs {
    /// Accept nodes that may lose a write: without appendfsync always, or with an allkeys-*
    /// maxmemory-policy (ids could then repeat after a node crashes or evicts). Skips the check
    /// (CONFIG GET); as --assume-durable, for a user the ACL denies CONFIG, once the settings
    /// have been checked by hand.
    #[arg(long, global = true, visible_aliases = ["no-fsync-check", "assume-durable"])]
    pub allow_volatile: bool,

    #[command(subcommand)]
    pub command: SeqCommand,
}

#[derive(Subcommand, Debug)]
pub enum SeqCommand {
    /// Print the next id of NAME (or --count consecutive ids, one per line).
    #[command(after_long_help = SEQ_EXIT_STATUS)]
    Next(SeqNextArgs),
    /// Print the current value of NAME: at least every id handed out so far. Read-only.
    #[command(after_long_help = SEQ_EXIT_STATUS)]
    Get(SeqNameArgs),
    /// Raise NAME to at least VALUE on every node (recovery after a disaster). Never lowers.
    #[command(long_about = SET_FLOOR_ABOUT, after_long_help = SEQ_EXIT_STATUS)]
    SetFloor(SeqSetFloorArgs),
    /// Serve every sequence over the Redis protocol: INCR name, INCRBY name k, GET name.
    #[command(long_about = SERVE_ABOUT, after_long_help = SEQ_EXIT_STATUS)]
    Serve(SeqServeArgs),
}

const SET_FLOOR_ABOUT: &str = "Raise the counter of NAME to at least VALUE on every node: the way \
out when a majority of the nodes lost their data at once. A node that lost its data beside a \
majority that kept it needs nothing: the next call quarantines it and, 10 seconds later on its \
own clock, sets it again from that majority. VALUE must be above every id ever handed out (take it \
from your logs or your database, with a margin); nothing can check that, which is why this \
is a command for people. It never lowers a node, so running it again is harmless. Every node \
must answer: one that does not is named, and the exit status is 69 until a rerun reaches it.";

const SERVE_ABOUT: &str = "Serve every sequence of the nodes over the Redis protocol, RESP2 \
and RESP3 (after HELLO 3), so that redis-cli, redis-benchmark and every Redis client library \
are clients with their defaults: INCR name gives the next id, INCRBY name k the last id of a \
fresh block of k, GET name the current value; MULTI/EXEC/DISCARD around them (a transaction \
refused while queuing, or discarded, consumes no id); PING, ECHO, QUIT, SELECT 0, AUTH, HELLO, \
CLIENT SETNAME/GETNAME/SETINFO/ID, RESET, COMMAND and INFO work as clients expect, anything \
else is an error. PING always answers PONG (liveness); INFO health says whether a majority of \
the nodes answers (readiness: ready:1). Concurrent requests for the same name are batched \
into one majority round (group commit), so throughput grows with clients while each node \
still persists every round. Several serve processes may run against the same nodes. SIGTERM \
or SIGINT stops accepting, finishes the rounds in flight, answers, and exits 0.";

#[derive(Args, Debug)]
pub struct SeqNameArgs {
    /// The sequence's name; its counter is the key NAMESPACE:seq:NAME on every node.
    #[arg(value_name = "NAME")]
    pub name: String,

    #[command(flatten)]
    pub wait: WaitArgs,
}

#[derive(Args, Debug)]
pub struct SeqNextArgs {
    /// The sequence's name; its counter is the key NAMESPACE:seq:NAME on every node.
    #[arg(value_name = "NAME")]
    pub name: String,

    /// Take K consecutive ids in one round, printed one per line.
    #[arg(long, default_value_t = 1, value_name = "K",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub count: u64,

    #[command(flatten)]
    pub wait: WaitArgs,
}

#[derive(Args, Debug)]
pub struct SeqSetFloorArgs {
    /// The sequence's name; its counter is the key NAMESPACE:seq:NAME on every node.
    #[arg(value_name = "NAME")]
    pub name: String,

    /// The value every node's counter is raised to, at least (a 64-bit unsigned number).
    #[arg(value_name = "VALUE", allow_negative_numbers = true)]
    pub value: u64,

    #[command(flatten)]
    pub wait: WaitArgs,
}

#[derive(Args, Debug)]
pub struct SeqServeArgs {
    /// Address to listen on (host:port; port 0 picks a free one, printed on stderr).
    #[arg(long, default_value = "127.0.0.1:7480", value_name = "ADDR")]
    pub listen: String,

    #[command(flatten)]
    pub metrics: super::MetricsArgs,

    /// Require clients to AUTH with this password first (also YARAUS_SEQ_PASSWORD).
    #[arg(
        long,
        env = "YARAUS_SEQ_PASSWORD",
        hide_env_values = true,
        value_name = "PASSWORD"
    )]
    pub requirepass: Option<String>,

    /// Refuse connections beyond this many, with an error reply.
    #[arg(long, default_value_t = 1000, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_clients: u32,

    /// Close a connection that has sent nothing for this long (0: never). A half-sent
    /// request counts as nothing.
    #[arg(long, default_value = "5m", value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub idle_timeout: Duration,

    /// Most ids one round hands out: a bigger batch waits for the next round.
    #[arg(long, default_value_t = 10_000, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_batch: u64,

    /// How long a sequence may go without a request before the server forgets it (its
    /// counters, its metrics' series). Hidden: for tests, which cannot wait the default.
    #[arg(long, hide = true, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub retire_after: Option<Duration>,
}
