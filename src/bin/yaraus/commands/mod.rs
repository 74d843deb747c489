//! One function per subcommand: turn parsed arguments into library calls and
//! output. Each returns the exit status on success; errors carry their own.

mod acl;
mod health;
mod hilo;
mod index;
mod lock;
mod pool;
mod run;
mod seq;

use crate::cli::{Cli, Command};
use crate::settings::{self, Provenance};
use clap::CommandFactory;
use yaraus::error::{Error, Result};
use yaraus::supervise::Watchdog;

/// Runs the parsed command line, asked as `provenance` says; returns the
/// exit status. `watchdog` is the process that will start and guard the
/// command, for the subcommands that run one ([`Cli::runs_a_command`]); it
/// must be started before the runtime ([`Watchdog::start`]). A subcommand
/// that may run one gets it, or the error to fail with where it needs one.
pub async fn execute(cli: Cli, provenance: Provenance, watchdog: Option<Watchdog>) -> Result<i32> {
    if let Command::Completions(args) = &cli.command {
        return completions(args.shell);
    }
    let ctx = settings::context(&cli)?;
    match cli.command {
        Command::Init(args) => pool::init(&ctx.pool()?, args).await,
        Command::Run(args) => {
            let pool = ctx.pool()?;
            run::run(&pool, args, watchdog.ok_or_else(no_watchdog)?).await
        }
        Command::Stats(args) => pool::stats(&ctx.pool()?, args).await,
        Command::List(args) => pool::list(&ctx.pool()?, args).await,
        Command::Lock(args) => {
            lock::lock(&ctx, args, provenance, watchdog.ok_or_else(no_watchdog)).await
        }
        Command::Seq(args) => seq::seq(&ctx, args).await,
        Command::Index(args) => index::index(&ctx, args, watchdog.ok_or_else(no_watchdog)).await,
        Command::Health(args) => health::health(&ctx, args).await,
        Command::Hilo(args) => hilo::hilo(&ctx, args).await,
        Command::AclRules(args) => acl::acl_rules(&ctx, &cli.global, args),
        Command::Completions(_) => unreachable!("answered before the servers were worked out"),
    }
}

/// `completions SHELL`: the script, from the same definitions as the parser.
fn completions(shell: clap_complete::Shell) -> Result<i32> {
    // Into a buffer: clap_complete panics when its writer fails.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "yaraus", &mut script);
    crate::stdout::write_stdout(&script)?;
    Ok(0)
}

/// A subcommand that runs a command was not given the watchdog (an
/// embedder that did not call [`Watchdog::start`]).
fn no_watchdog() -> Error {
    Error::State("running a command needs the watchdog process".into())
}
