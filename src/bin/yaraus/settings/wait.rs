//! How long each subcommand rides out what passes (servers out of reach, a
//! busy claim): its `--wait`, or the default decided here, once, for every
//! subcommand (README, "Riding out a fault", has the same table).
//!
//! | subcommand | default | as |
//! | --- | --- | --- |
//! | `run`, `lock` (a command, `--acquire`), `index` | as long as it takes | `flock` without `-w`, `consul lock` without `-timeout`, a systemd service with `Restart=always`: a supervisor outlives the outages of what it needs |
//! | `init`, `stats`, `list`, `seq next`/`get`/`set-floor`, `hilo next`/`status`, `lock --extend`/`--release`/`--info`, `index --status` | 5 × `--timeout` (10 s) | a systemd start timeout: a one-shot command from cron or a script rides out a restart or a quick failover, and still ends |
//! | `hilo agent` | its `--wait` (10 s) | the agent lock's wait, which now also covers shards out of reach |
//! | `lock -n` | one attempt | `flock -n` |
//!
//! `--timeout` keeps its meaning inside the wait: the bound on one request.

use crate::cli::{Command, HiloCommand, SeqCommand, WaitKnobs, WakePolicyArg};
use std::time::Duration;
use yaraus::claim::{WaitOptions, WakePolicy};
use yaraus::timing::retry::one_shot_wait;

/// The bound of `command`'s wait; `timeout`: the global `--timeout`.
pub fn wait(command: &Command, timeout: Duration) -> Option<Duration> {
    let one_shot = |given: Option<Duration>| Some(given.unwrap_or(one_shot_wait(timeout)));
    match command {
        Command::Run(args) => args.wait,
        Command::Lock(args) if args.no_wait => Some(Duration::ZERO),
        Command::Lock(args) if args.extend || args.release || args.info => one_shot(args.wait),
        Command::Lock(args) => args.wait,
        Command::Index(args) if args.status => one_shot(args.wait),
        Command::Index(args) => args.wait,
        Command::Init(args) => one_shot(args.wait.wait),
        Command::Stats(args) => one_shot(args.wait.wait),
        Command::List(args) => one_shot(args.wait.wait),
        Command::Seq(seq) => match &seq.command {
            SeqCommand::Next(args) => one_shot(args.wait.wait),
            SeqCommand::Get(args) => one_shot(args.wait.wait),
            SeqCommand::SetFloor(args) => one_shot(args.wait.wait),
            // A server: each request answers at once, with an error if need be.
            SeqCommand::Serve(_) => Some(Duration::ZERO),
        },
        Command::Hilo(hilo) => match &hilo.command {
            HiloCommand::Agent(args) => Some(args.wait),
            HiloCommand::Next(args) => one_shot(args.wait.wait),
            HiloCommand::Status(args) => one_shot(args.wait.wait),
        },
        // health's own --wait bounds its gate; each look is one attempt.
        Command::Health(_) | Command::AclRules(_) | Command::Completions(_) => Some(Duration::ZERO),
    }
}

/// How a waiter polls and is woken: the defaults, unless the hidden flags
/// of the tests and benchmarks (`--poll`, `--wakeups`) say otherwise.
pub fn wait_options(knobs: &WaitKnobs) -> WaitOptions {
    WaitOptions {
        poll: knobs.poll,
        wakeups: match knobs.wakeups {
            WakePolicyArg::Queue => WakePolicy::Queue,
            WakePolicyArg::All => WakePolicy::All,
            WakePolicyArg::Off => WakePolicy::Off,
        },
    }
}
