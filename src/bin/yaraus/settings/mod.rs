//! The command line, worked out once into the library's [`Context`].
//!
//! This is the only place that turns flags and variables into settings: the
//! `--redis` URLs are parsed (with `--sentinel` and the `--tls-*` files, read
//! here), the password is found (`--redis-password-file`, else the systemd
//! credential, else the variables, [`credentials`]) and given to every URL without one, the
//! namespace is agreed on, `--timeout` becomes the library's
//! [`Timeouts`], the subcommand's `--allow-volatile` becomes the
//! durability policy, and its `--wait` (or the default of [`wait`]) the
//! bound of its retries. Every subcommand then takes what it needs from the
//! context; none parses a URL or reads a file again, so a long-running
//! `seq serve` pays for none of it per request. Beside the context: the
//! hidden `--poll` and `--wakeups` become the library's wait options
//! ([`wait_options`]), and what the parsed arguments do not keep (a typed
//! `--timeout`) is read from clap's matches ([`Provenance`]).
//!
//! The subcommands that take no server (`completions`) never get here: a
//! missing password file must not stop `yaraus completions bash`.

pub mod credentials;
mod provenance;
mod wait;

pub use provenance::Provenance;
pub use wait::wait_options;

use crate::cli::{Cli, Command, GlobalArgs, HiloArgs, LockArgs, SeqArgs};
use std::path::Path;
use yaraus::context::Context;
use yaraus::error::{Error, Result};
use yaraus::store::{ConnectOptions, Target, Tls, split_urls};
use yaraus::timing::Timeouts;

/// The context of `cli`: its servers, namespace, timeouts and durability.
pub fn context(cli: &Cli) -> Result<Context> {
    let global = &cli.global;
    let targets = targets(global)?;
    let timeouts = Timeouts::from_timeout(global.timeout);
    let context = Context::new(targets, global.namespace.as_deref(), timeouts)?;
    Ok(context
        .requiring_durable(!allows_volatile(&cli.command))
        .waiting(wait::wait(&cli.command, global.timeout)))
}

/// Whether the subcommand was told to accept nodes that may lose a write
/// (`--allow-volatile`, alias `--assume-durable`).
fn allows_volatile(command: &Command) -> bool {
    match command {
        Command::Lock(LockArgs { allow_volatile, .. })
        | Command::Seq(SeqArgs { allow_volatile, .. })
        | Command::Hilo(HiloArgs { allow_volatile, .. }) => *allow_volatile,
        _ => false,
    }
}

/// The parsed `--redis` URLs, in order, with the connection options
/// (`--sentinel`, `--tls-*`, `--min-replicas`). The password and user of
/// `--redis-password-file`, `YARAUS_REDIS_PASSWORD`, `REDISCLI_AUTH` and
/// `--redis-user` are filled in where a URL has none.
fn targets(global: &GlobalArgs) -> Result<Vec<Target>> {
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
    let password = credentials::find_password(global.redis_password_file.as_deref(), |name| {
        std::env::var(name).ok()
    })?;
    for target in &mut targets {
        target.set_credentials(global.redis_user.as_deref(), password.as_ref())?;
    }
    Ok(targets)
}

/// A password written in a `--redis` URL on the command line can be read by
/// every local user: say so (not with `--quiet`), and name the ways that
/// keep it private. A URL from `YARAUS_REDIS` is not in the process list,
/// so it is not warned of. The URLs are looked for as written, so a
/// percent-encoded password is found too.
fn warn_of_password_in_argv(targets: &[Target], urls: &[String]) {
    let on_command_line = urls.iter().any(|u| credentials::in_argv(u));
    if let Some(t) = targets
        .iter()
        .find(|t| on_command_line && t.url_password().is_some())
    {
        credentials::warn_on_command_line(
            &format!("the password of --redis {}", t.display()),
            "use --redis-password-file, YARAUS_REDIS_PASSWORD or REDISCLI_AUTH instead",
        );
    }
}

/// `--sentinel`, the `--tls-*` files (read now) and the replica options.
fn connect_options(global: &GlobalArgs) -> Result<ConnectOptions> {
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

/// The bytes of the file `flag` names.
fn read(flag: &str, path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path)
        .map_err(|e| Error::Usage(format!("{flag} {}: cannot read it: {e}", path.display())))
}
