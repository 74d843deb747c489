//! The arguments of `yaraus run`: lease a worker id and run COMMAND with it.

use super::{ChildEnvArgs, duration, positive_duration};
use clap::Args;
use std::time::Duration;

pub(super) const RUN_ABOUT: &str = "Lease a worker id, wait --delay so that a previous holder of the id has \
stopped, then run COMMAND with every occurrence of the placeholder in its arguments replaced \
by the id (also exported as YARAUS_WORKER_ID, with YARAUS_CLIENT_ID). The lease is renewed \
every --interval. If it is lost, COMMAND and everything it started get SIGTERM, then SIGKILL \
after --kill-after (or when the lease would have run out, if sooner); if it cannot be renewed, they get SIGTERM --kill-after before it would run \
out and SIGKILL when it does, so nothing of COMMAND runs past the lease, even if yaraus itself \
is killed, frozen or blocked (a watchdog process enforces it). yaraus then exits 124. The id \
is released when COMMAND and everything it started have ended.\n\n\
Redis out of reach (a restart, a failover) is waited out like a busy pool, up to --wait \
(default: as long as it takes). With --min and --max, a pool that is gone (a Redis restarted \
without persistence) is re-created with that range instead of failing; --delay still holds \
the command back, which protects a previous holder whose record was lost with it.\n\n\
Safeguards: --expire at least 1s, --interval at most expire/2, --delay at least \
2 x interval + kill-after. A value that breaks one is raised, with a warning, unless \
--no-safeguards is given. --kill-after must fit in the lease with room for a renewal \
(without safeguards: in the lease); a value that does not is refused (exit 2).";

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Text replaced by the worker id in COMMAND's arguments.
    ///
    /// Text replaced by the worker id in COMMAND's arguments. A COMMAND without it gets the id
    /// only in its environment (YARAUS_WORKER_ID), and run warns so once, unless COMMAND names
    /// that variable (sh -c '... $YARAUS_WORKER_ID'); an empty TEXT ('') replaces nothing and
    /// never warns.
    #[arg(long, default_value = "<>", value_name = "TEXT")]
    pub replacement: String,

    /// How often the lease is renewed.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = positive_duration, allow_hyphen_values = true)]
    pub interval: Duration,

    /// Wait this long after leasing before starting COMMAND. [default: 2 x interval + kill-after]
    #[arg(long, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub delay: Option<Duration>,

    /// Lease length written to Redis at each renewal.
    #[arg(long, default_value = "30m", value_name = "DURATION", value_parser = positive_duration, allow_hyphen_values = true)]
    pub expire: Duration,

    /// Time COMMAND gets to stop: SIGTERM, then SIGKILL this long after.
    ///
    /// Time COMMAND gets to stop: SIGTERM this long before the lease runs out (or when it is
    /// lost), SIGKILL when it runs out. Must leave room for a renewal. [default: 5s, or a quarter
    /// of the lease when that is less]
    #[arg(long, value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub kill_after: Option<Duration>,

    /// Give up if no id is free (exit 75) or Redis out of reach (69) this long.
    ///
    /// Give up if no id is free within this time (exit 75), or Redis stays out of reach (a
    /// restart, a failover, a refused connection: exit 69). Each request is still bounded by
    /// --timeout, and one in flight at this bound is cut off there; 0: one attempt. A wrong
    /// password, URL or master name fails at once. [default: wait forever]
    #[arg(long, short = 'w', value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub wait: Option<Duration>,

    /// With --max: re-create the pool with this range if it is gone.
    ///
    /// With --max: the pool's smallest id, for re-creating the pool if it is gone (a Redis
    /// restarted without persistence) instead of failing. A pool that exists is left alone.
    #[arg(
        long,
        requires = "max",
        value_name = "ID",
        allow_negative_numbers = true
    )]
    pub min: Option<u64>,

    /// With --min: the pool's largest id (see --min).
    #[arg(
        long,
        requires = "min",
        value_name = "ID",
        allow_negative_numbers = true
    )]
    pub max: Option<u64>,

    /// Accept --expire, --interval and --delay as given, even when unsafe.
    #[arg(long, visible_alias = "i-am-a-database-removable-specialist")]
    pub no_safeguards: bool,

    /// Clock guard: longest wait for this host's clock to pass the previous holder's.
    ///
    /// Clock guard: the longest to wait, beyond --delay, for this host's wall clock to pass the
    /// last instant at which the id's previous holder could make ids (on that holder's clock),
    /// or, for an id without a clock record under --max-clock-offset, the server's time at the
    /// end of --delay plus that offset. A longer lag is refused (exit 75, the id given back): a
    /// clock that far behind is broken.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = duration, allow_hyphen_values = true)]
    pub max_clock_wait: Duration,

    /// Clock guard: stop or refuse beyond this offset from the server's clock.
    ///
    /// Clock guard: stop COMMAND (as on a lost lease, exit 124) when this host's clock is
    /// surely further than this from the Redis server's, and refuse to lease (exit 75). Set on
    /// every host, it also guards an id whose record was lost (a pool restarted empty): the new
    /// holder waits until no holder within this offset can have made a later id. [default:
    /// only warn, beyond half of --delay]
    #[arg(long, value_name = "DURATION", value_parser = positive_duration, allow_hyphen_values = true)]
    pub max_clock_offset: Option<Duration>,

    /// Clock guard: stop COMMAND when this host's clock steps back.
    ///
    /// Clock guard: stop COMMAND (as on a lost lease, exit 124) when this host's wall clock
    /// steps back while it runs (an NTP step, a restored VM snapshot). Without it the step is
    /// logged and counted (stats: clock_step_back), and the id's record keeps the highest time
    /// the clock showed.
    #[arg(long)]
    pub stop_on_clock_step: bool,

    #[command(flatten)]
    pub metrics: super::MetricsArgs,

    #[command(flatten)]
    pub child_env: ChildEnvArgs,

    #[command(flatten)]
    pub knobs: super::WaitKnobs,

    /// The command to run, and its arguments.
    #[arg(required = true, trailing_var_arg = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}
