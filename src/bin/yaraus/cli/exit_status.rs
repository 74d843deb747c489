//! The exit-status tables of the pool commands (`init`, `stats`, `list`,
//! `run`) and of `yaraus` itself, shown after each one's `--help` and in
//! its man page, and of the two that only print (`acl-rules`,
//! `completions`). The other subcommands keep theirs beside their options.

/// `yaraus --help`: every status any subcommand exits with.
pub(super) const EXIT_STATUS: &str = "\
Exit status (each subcommand's --help has its own):
  0..123  COMMAND's own exit status (run, lock, index)
  1       seq get, hilo status, index --status: nothing known of NAME (never used)
  2       usage error: bad flag, malformed URL, nonsense duration or range
  69      Redis unreachable or timed out for as long as --wait allowed; refused authentication or
          a command (ACL), no such db, not a Redis server, TLS refused, unknown Sentinel master
  75      nothing available within --wait: no free id, the lock busy (lock -E changes it)
  124     the claim was lost while COMMAND ran; COMMAND was killed
  125     another failure of yaraus (pool not initialised, key of the wrong type, ...)
  126     COMMAND could not be executed
  127     COMMAND was not found
  128+N   COMMAND died of signal N (or yaraus was stopped by signal N before it ran)";

/// `yaraus run --help`.
pub(super) const RUN_EXIT_STATUS: &str = "\
Exit status:
  0..123  COMMAND's own exit status
  2       usage error: bad flag, malformed URL, nonsense duration or range
  69      Redis unreachable or timed out for as long as --wait allowed; refused authentication or
          a command (ACL), no such db, not a Redis server, TLS refused, unknown Sentinel master
  75      nothing available within --wait (no free id)
  124     the claim was lost while the command ran; the command was killed
  125     another failure of yaraus (pool not initialised and no --min/--max, key of the wrong
          type, ...)
  126     the command could not be executed
  127     the command was not found
  128+N   the command died of signal N (or yaraus was stopped by signal N before it ran)

Waiting: what passes (a refused connection, a restart, a failover, LOADING, MASTERDOWN, too few
nodes) is retried, with growing pauses, until --wait: run, lock and index wait as long as it
takes by default, one-shot commands 5 x --timeout (10s); --timeout bounds each request. What is
misconfigured (password, ACL, master name, key type, URL) fails at once.";

/// `init`, `stats` and `list`: one-shot commands that run nothing.
pub(super) const POOL_EXIT_STATUS: &str = "\
Exit status:
  0       done (init: the pool created, grown, shrunk, or already so)
  2       usage error: bad flag, malformed URL, nonsense duration, empty range, a --shards
          of 0, over 1024 or over the number of ids
  69      Redis unreachable or timed out for as long as --wait allowed (default 5 x --timeout);
          refused authentication or a command (ACL), no such db, not a Redis server, TLS
          refused, unknown Sentinel master
  125     another failure: the pool not initialised (stats, list), a key of the wrong type,
          init: a shrink that would remove a leased id, another number of shards than the
          pool's

Waiting: what passes (a refused connection, a restart, a failover, LOADING, MASTERDOWN) is
retried, with growing pauses, until --wait; --timeout bounds each request. What is
misconfigured (password, ACL, master name, key type, URL) fails at once.";

/// `acl-rules` and `completions`: they print, and ask no server anything.
pub(super) const PRINT_EXIT_STATUS: &str = "\
Exit status:
  0       printed
  2       usage error: bad flag, an unknown shell or subcommand, a missing --lock-prefix
  125     stdout could not be written";
