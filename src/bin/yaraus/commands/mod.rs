//! One function per subcommand: turn parsed arguments into library calls and
//! output. Each returns the exit status on success; errors carry their own.

mod acl;
mod hilo;
mod index;
mod lock;
mod pool;
mod run;
mod seq;
mod seq_serve;

use crate::cli::{Cli, Command, GlobalArgs};
use clap::CommandFactory;
use yaraus::error::{Error, Result};
use yaraus::lease::PoolKeys;
use yaraus::store::credentials::{self, Password};
use yaraus::store::{ConnectOptions, Store, Target, Timeouts, Tls, split_urls};
use yaraus::supervise::Watchdog;

/// Runs the parsed command line; returns the exit status. `watchdog` is
/// the process that will start and guard the command, for the subcommands
/// that run one ([`Cli::runs_a_command`]); it must be started before the
/// runtime ([`Watchdog::start`]).
pub async fn execute(cli: Cli, watchdog: Option<Watchdog>) -> Result<i32> {
    yaraus::log::set_quiet(cli.global.quiet);
    match cli.command {
        Command::Init(args) => pool::init(&PoolContext::new(&cli.global)?, args).await,
        Command::Run(args) => {
            let ctx = PoolContext::new(&cli.global)?;
            run::run(&ctx, args, watchdog.ok_or_else(no_watchdog)?).await
        }
        Command::Stats(args) => pool::stats(&PoolContext::new(&cli.global)?, args).await,
        Command::List(args) => pool::list(&PoolContext::new(&cli.global)?, args).await,
        Command::Lock(args) => lock::lock(&cli.global, args, watchdog).await,
        Command::Seq(args) => seq::seq(&cli.global, args).await,
        Command::Index(args) => index::index(&cli.global, args, watchdog).await,
        Command::Hilo(args) => hilo::hilo(&cli.global, args).await,
        Command::AclRules(args) => acl::acl_rules(&cli.global, args),
        Command::Completions(args) => {
            // Into a buffer: clap_complete panics when its writer fails.
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut Cli::command(), "yaraus", &mut script);
            write_stdout(&script)?;
            Ok(0)
        }
    }
}

/// A subcommand that runs a command was not given the watchdog (an
/// embedder that did not call [`Watchdog::start`]).
pub(crate) fn no_watchdog() -> Error {
    Error::State("running a command needs the watchdog process".into())
}

/// Writes `bytes` to stdout and flushes it.
pub(crate) fn write_stdout(bytes: &[u8]) -> Result<()> {
    write_raw(bytes).map_err(stdout_error)
}

/// The same, for output a reader may stop reading early (`yaraus list |
/// head`): a closed pipe is not an error there.
pub(crate) fn write_stdout_unless_closed(bytes: &[u8]) -> Result<()> {
    write_raw(bytes).or_else(unless_closed)
}

/// For output that streams until stopped (`index --print`): whether the
/// reader is still there (`false`: it closed the pipe, so stop printing).
pub(crate) fn write_stdout_while_read(bytes: &[u8]) -> Result<bool> {
    match write_raw(bytes) {
        Ok(()) => Ok(true),
        Err(e) => unless_closed(e).map(|()| false),
    }
}

fn write_raw(bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes).and_then(|()| out.flush())
}

/// A failed write to stdout, unless the reader just went away.
pub(crate) fn unless_closed(e: std::io::Error) -> Result<()> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(stdout_error(e))
    }
}

fn stdout_error(e: std::io::Error) -> Error {
    Error::Output(format!("cannot write to stdout: {e}"))
}

/// The parsed `--redis` URLs, in order, with the connection options
/// (`--sentinel`, `--tls-*`, `--min-replicas`).
/// The password and user of `--redis-password-file`, `YARAUS_REDIS_PASSWORD`,
/// `REDISCLI_AUTH` and `--redis-user` are filled in where a URL has none.
pub fn targets(global: &GlobalArgs) -> Result<Vec<Target>> {
    let options = connect_options(global)?;
    let urls = split_urls(&global.redis);
    let mut targets = if options.sentinel.is_some() {
        vec![Target::sentinels(&urls, &options)?]
    } else {
        urls.iter()
            .map(|u| Target::parse_with(u, &options))
            .collect::<Result<Vec<_>>>()?
    };
    warn_of_password_in_argv(&targets, &urls);
    let password = Password::find(global.redis_password_file.as_deref(), |name| {
        std::env::var(name).ok()
    })?;
    for target in &mut targets {
        target.set_credentials(global.redis_user.as_deref(), password.as_ref())?;
    }
    Ok(targets)
}

/// A password written in a `--redis` URL on the command line can be read by
/// every local user: say so once (not with `--quiet`), and name the ways
/// that keep it private. A URL from `YARAUS_REDIS` is not in the process
/// list, so it is not warned of. The URLs are looked for as written, so a
/// percent-encoded password is found too.
fn warn_of_password_in_argv(targets: &[Target], urls: &[String]) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    let on_command_line = urls.iter().any(|u| credentials::in_argv(u));
    if let Some(t) = targets
        .iter()
        .find(|t| on_command_line && t.url_password().is_some())
    {
        WARNED.call_once(|| {
            credentials::warn_on_command_line(
                &format!("the password of --redis {}", t.display()),
                "use --redis-password-file, YARAUS_REDIS_PASSWORD or REDISCLI_AUTH instead",
            );
        });
    }
}

fn connect_options(global: &GlobalArgs) -> Result<ConnectOptions> {
    let read = |flag: &str, path: &std::path::Path| {
        std::fs::read(path)
            .map_err(|e| Error::Usage(format!("{flag} {}: cannot read it: {e}", path.display())))
    };
    let any_tls = global.tls_ca.is_some() || global.tls_cert.is_some() || global.tls_insecure;
    let tls = if any_tls {
        Some(Tls {
            ca: global
                .tls_ca
                .as_deref()
                .map(|p| read("--tls-ca", p))
                .transpose()?,
            client: match (&global.tls_cert, &global.tls_key) {
                (Some(cert), Some(key)) => {
                    Some((read("--tls-cert", cert)?, read("--tls-key", key)?))
                }
                _ => None,
            },
            insecure: global.tls_insecure,
        })
    } else {
        None
    };
    Ok(ConnectOptions {
        sentinel: global.sentinel.clone(),
        tls,
        min_replicas: global.min_replicas,
        replicas: global.redis_replicas,
    })
}

/// The namespace: `--namespace`, else `?ns=` of the URL, else `yaraus`.
pub fn namespace(global: &GlobalArgs, target: &Target) -> Result<String> {
    let ns = global
        .namespace
        .clone()
        .or_else(|| target.namespace().map(str::to_string))
        .unwrap_or_else(|| "yaraus".into());
    if ns.is_empty() {
        return Err(Error::Usage("the namespace must not be empty".into()));
    }
    if target.is_cluster() && ns.contains(['{', '}']) {
        return Err(Error::Usage(format!(
            "the namespace {ns:?} contains braces, which would change the Redis Cluster hash \
             tags of yaraus's keys; use one without"
        )));
    }
    Ok(ns)
}

/// The namespace of several servers (lock, seq): `--namespace`, else the
/// `?ns=` they agree on; URLs that disagree are a usage error.
pub fn quorum_namespace(global: &GlobalArgs, targets: &[Target]) -> Result<String> {
    let first = targets
        .first()
        .ok_or_else(|| Error::Usage("no Redis server given (--redis URL)".into()))?;
    if global.namespace.is_none()
        && let Some(other) = targets.iter().find(|t| t.namespace() != first.namespace())
    {
        return Err(Error::Usage(format!(
            "the --redis URLs disagree on ?ns= ({} has {:?}, {} has {:?}); give --namespace",
            first.display(),
            first.namespace().unwrap_or("none"),
            other.display(),
            other.namespace().unwrap_or("none")
        )));
    }
    namespace(global, first)
}

/// What every worker-id pool subcommand needs: one server and a namespace.
pub struct PoolContext {
    pub target: Target,
    pub keys: PoolKeys,
    pub timeouts: Timeouts,
}

impl PoolContext {
    fn new(global: &GlobalArgs) -> Result<PoolContext> {
        let mut targets = targets(global)?;
        if targets.len() != 1 {
            return Err(Error::Usage(format!(
                "the worker-id pool lives on one Redis server (with its replicas); got {} --redis URLs",
                targets.len()
            )));
        }
        let target = targets.remove(0);
        let ns = namespace(global, &target)?;
        Ok(PoolContext {
            keys: if target.is_cluster() {
                PoolKeys::in_cluster(&ns)
            } else {
                PoolKeys::new(&ns)
            },
            target,
            timeouts: Timeouts::from_timeout(global.timeout),
        })
    }

    pub async fn connect(&self) -> Result<Store> {
        Store::connect(&self.target, self.timeouts).await
    }
}
