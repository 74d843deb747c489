//! `yaraus lock`: flock(1) over Redis. Parse the mode, then either
//!
//! * wrap a command: take the lock (waiting as told, interruptible by
//!   SIGINT/SIGTERM), hand it to a [`Keeper`] that extends it every
//!   ttl/3, and let [`hold`] run the command while it holds; or
//! * one of the script-friendly forms: `--acquire` (take it, print the token
//!   and the fencing token, exit), `--extend` and `--release` (given the
//!   token), `--info` (JSON).
//!
//! The modes are options rather than subcommands so that the first word after
//! `lock` is always the lock's name: a lock named `acquire` or `info` works
//! like any other.
//!
//! A busy lock exits with `-E/--conflict-exit-code` (75 by default); the
//! library reports it as [`Error::Exhausted`], turned into that code here.

use crate::cli::{AcquireFormat, LockArgs, command_env};
use crate::settings::Provenance;
use std::time::Duration;
use yaraus::base::setting::Setting;
use yaraus::claim::{Keeper, Patience, RenewError};
use yaraus::context::Context;
use yaraus::error::{Error, Result};
use yaraus::lock::{HeldLock, LockOptions, Locker, ReleaseVerdict, Token};
use yaraus::supervise::{ChildSpec, HoldOptions, Signals, Watchdog, hold, substitute};
use yaraus::timing::drift::validity;
use yaraus::timing::kill_after;
use yaraus::timing::lock::{extend_every, release as release_within};

/// What `yaraus lock` was asked to do.
enum Mode {
    /// Run a command (argv) while holding the lock.
    Wrap(Vec<String>),
    Acquire,
    Extend(Token),
    Release(Token),
    Info,
}

/// `yaraus lock`, asked as `asked` says (`-v`, a typed `--timeout`).
pub async fn lock(
    ctx: &Context,
    args: LockArgs,
    asked: Provenance,
    watchdog: Result<Watchdog>,
) -> Result<i32> {
    let mode = mode(&args)?;
    let env_remove = args.child_env.removed()?;
    // --info takes no lock, so its requests need not fit in the ttl.
    let request_timeout = match mode {
        Mode::Info => ctx.timeouts().timeout(),
        _ => ctx.timeouts().lock_request(args.ttl),
    };
    let options = LockOptions {
        prefix: args.prefix.clone(),
        limit: args.limit,
        shared: args.shared,
        request_timeout,
        wait: crate::settings::wait_options(&args.knobs),
        ..ctx.lock_options(args.ttl)
    };
    let mut locker = ctx.locker(&args.name, options)?;
    crate::logger::set_context("lock", locker.name());
    advise(&args, asked, &mode, &locker);
    let conflict_code = i32::from(args.conflict_exit_code);
    // -n and -w, or the default of the mode (settings/wait.rs).
    let wait = ctx.wait();
    let outcome = match mode {
        Mode::Info => info(&mut locker, &mut ctx.patience()).await,
        Mode::Extend(token) => {
            silent_from_now_unless(asked.verbose);
            extend(&mut locker, &token, &mut ctx.patience()).await
        }
        Mode::Release(token) => {
            silent_from_now_unless(asked.verbose);
            release(&mut locker, &token, &mut ctx.patience()).await
        }
        Mode::Acquire => acquire(&mut locker, wait, args.format, asked.verbose).await,
        Mode::Wrap(argv) => {
            // Checked before any server is asked anything: bad input
            // changes nothing.
            let kill_after = kill_after::within(
                args.kill_after,
                validity(args.ttl),
                Some(extend_every(args.ttl)),
                Setting::Ttl,
            )?;
            let watchdog = watchdog?;
            let how = Wrapping {
                wait,
                kill_after,
                watchdog,
                env_remove,
                verbose: asked.verbose,
            };
            wrap(&mut locker, how, &args, argv).await
        }
    };
    match outcome {
        Err(Error::Exhausted(message)) => {
            // One line, as the binary prints every error, with our own code.
            crate::logger::final_error(
                format_args!("{message}"),
                conflict_code,
                crate::logger::EXIT_FLUSH,
            );
            Ok(conflict_code)
        }
        other => other,
    }
}

/// What is said before the wait: how many masters may fail (with several:
/// always when their count is even, which buys nothing; else with
/// `--verbose`), and that `--timeout` is not the wait for the lock when it
/// was typed without `-w`.
fn advise(args: &LockArgs, asked: Provenance, mode: &Mode, locker: &Locker) {
    let (n, m) = (locker.masters(), locker.majority());
    if n > 1 && (asked.verbose || n % 2 == 0) {
        let even = if n % 2 == 0 {
            format!(
                "; an even count tolerates no more failures than {} masters would",
                n - 1
            )
        } else {
            String::new()
        };
        log::info!(
            "{n} masters: a majority is {m}, so {} may fail{even}",
            n - m
        );
    }
    if asked.timeout_typed && args.wait.is_none() && !args.no_wait && !crate::logger::is_quiet() {
        if let Mode::Wrap(_) | Mode::Acquire = mode {
            log::warn!(
                "--timeout bounds each request to Redis, not the wait for the lock: that is \
                 -w/--wait (without it, as long as it takes)"
            );
        }
    }
}

/// Sorts out the mode, with one clear line for each wrong combination.
fn mode(args: &LockArgs) -> Result<Mode> {
    let token = || match &args.token {
        Some(t) if t.is_empty() => Err(Error::Usage(
            "--token is empty; pass the YARAUS_LOCK_TOKEN that `yaraus lock --acquire` printed"
                .into(),
        )),
        Some(t) => Token::from_user(t),
        None => Err(Error::Usage(format!(
            "--{} needs --token TOKEN: the YARAUS_LOCK_TOKEN that `yaraus lock --acquire {}` printed",
            if args.extend { "extend" } else { "release" },
            args.name
        ))),
    };
    if args.token.is_some() && !(args.extend || args.release) {
        return Err(Error::Usage(
            "--token is only for --extend and --release".into(),
        ));
    }
    if args.name.is_empty() {
        return Err(Error::Usage("the lock name must not be empty".into()));
    }
    if args.acquire {
        return Ok(Mode::Acquire);
    }
    if args.extend {
        return Ok(Mode::Extend(token()?));
    }
    if args.release {
        return Ok(Mode::Release(token()?));
    }
    if args.info {
        return Ok(Mode::Info);
    }
    if let Some(script) = &args.shell_command {
        return Ok(Mode::Wrap(vec!["sh".into(), "-c".into(), script.clone()]));
    }
    if args.argv.is_empty() {
        return Err(Error::Usage(format!(
            "no command to run while holding the lock: yaraus lock {name} -- COMMAND [ARGS...], \
             or yaraus lock {name} -c 'shell command' (or --acquire, --extend, --release, --info; \
             -- sleep infinity holds it until signalled)",
            name = args.name
        )));
    }
    Ok(Mode::Wrap(args.argv.clone()))
}

/// Takes the lock, waiting as told; SIGINT/SIGTERM/… during the wait end it
/// (what was partly taken is released) with 128+N.
async fn take(
    locker: &mut Locker,
    wait: Option<Duration>,
    signals: &mut Signals,
) -> Result<HeldLock> {
    let cancel = async { Error::Interrupted(signals.recv().await as i32) };
    locker.acquire(wait, cancel).await
}

/// From here on only what goes wrong is said, unless `--verbose`: a lock
/// that was taken, extended or released is silent, as flock is (cron mails
/// whatever a job prints). Waiting for a busy lock is said before this;
/// losing the lock, giving up and failing to release are warnings, which
/// are said anyway.
fn silent_from_now_unless(verbose: bool) {
    if !verbose {
        crate::logger::set_level(crate::logger::level().min(crate::logger::Level::Warn));
    }
}

/// What the wrapping form needs besides the lock.
struct Wrapping {
    wait: Option<Duration>,
    kill_after: Duration,
    watchdog: Watchdog,
    env_remove: Vec<String>,
    /// Whether to say what went well ([`Provenance::verbose`]).
    verbose: bool,
}

/// The wrapping form: run the command while the lock holds.
async fn wrap(
    locker: &mut Locker,
    how: Wrapping,
    args: &LockArgs,
    argv: Vec<String>,
) -> Result<i32> {
    // Caught from now on, so that a signal during the wait ends it cleanly.
    let mut signals =
        Signals::install().map_err(|e| Error::State(format!("cannot catch signals: {e}")))?;
    let held = take(locker, how.wait, &mut signals).await?;
    silent_from_now_unless(how.verbose);
    let fence = held.fencing_token().to_string();
    log::info!(
        "{}: acquired on {} of {} masters; fencing token {fence}",
        locker.name(),
        held.taken_on(),
        locker.masters()
    );
    let argv = if args.shell_command.is_some() {
        argv // a shell script reads $YARAUS_FENCING_TOKEN; `<>` is a shell redirection there
    } else {
        substitute(&argv, &args.replacement, &fence)
    };
    let spec = ChildSpec {
        argv,
        env: vec![
            (command_env::LOCK_NAME.into(), args.name.clone()),
            (command_env::FENCING_TOKEN.into(), fence),
        ],
        env_remove: how.env_remove,
    };
    let deadline = held.deadline();
    let keeper = Keeper::start(held, extend_every(locker.ttl()), deadline, how.kill_after);
    let options = HoldOptions {
        delay: Duration::ZERO,
        kill_after: how.kill_after,
        release_timeout: release_within(locker.round_timeout()),
        start_after: None,
    };
    // `hold` also releases what is left of a lost lock (our token on a
    // minority of the masters), so that the next holder need not wait.
    hold(keeper, how.watchdog, &spec, options, &mut signals).await
}

/// `--acquire`: take the lock, print what the script needs, leave it held.
async fn acquire(
    locker: &mut Locker,
    wait: Option<Duration>,
    format: AcquireFormat,
    verbose: bool,
) -> Result<i32> {
    let mut signals =
        Signals::install().map_err(|e| Error::State(format!("cannot catch signals: {e}")))?;
    let held = take(locker, wait, &mut signals).await?;
    silent_from_now_unless(verbose);
    let validity_ms = held.remaining().as_millis() as u64;
    let text = match format {
        AcquireFormat::Shell => format!(
            "YARAUS_LOCK_NAME={}\nYARAUS_LOCK_TOKEN={}\nYARAUS_FENCING_TOKEN={}\nYARAUS_LOCK_VALIDITY_MS={validity_ms}\n",
            shell_quote(locker.name()),
            shell_quote(held.token().as_str()),
            held.fencing_token(),
        ),
        AcquireFormat::Json => {
            serde_json::json!({
                "name": locker.name(),
                "key": locker.key(),
                "token": held.token().as_str(),
                "fencing_token": held.fencing_token(),
                "validity_ms": validity_ms,
            })
            .to_string()
                + "\n"
        }
    };
    if let Err(e) = crate::stdout::write_stdout(text.as_bytes()) {
        // Nobody could release a lock whose token was never read: give it
        // back now rather than leave it held for a whole ttl.
        let released = locker.release(held.token()).await;
        if released.verdict(locker.majority()) != ReleaseVerdict::Freed {
            log::warn!(
                "{}: could not give back the lock whose token was not printed; it expires \
                 by itself in {}",
                locker.name(),
                yaraus::base::duration::shown(locker.ttl())
            );
        }
        return Err(e);
    }
    log::info!(
        "{}: acquired on {} of {} masters; fencing token {}; held for {} unless extended \
         (yaraus lock --extend) or released (yaraus lock --release)",
        locker.name(),
        held.taken_on(),
        locker.masters(),
        held.fencing_token(),
        yaraus::base::duration::shown(locker.ttl())
    );
    locker.heal_if_pending().await;
    Ok(0)
}

/// `--extend`: a full ttl again, if the token still holds the lock; masters
/// out of reach are waited out (an extension is a compare-and-pexpire:
/// asking twice is harmless).
async fn extend(locker: &mut Locker, token: &Token, patience: &mut Patience) -> Result<i32> {
    let wanted = format!("a majority of the masters of {}", locker.name());
    let extended = patience
        .retry(&wanted, async |_| match locker.extend(token).await {
            Err(RenewError::Failed(e)) => Err(e),
            other => Ok(other),
        })
        .await?;
    match extended {
        Ok(validity) => {
            log::info!(
                "{}: extended; valid for {}",
                locker.name(),
                yaraus::base::duration::shown(validity)
            );
            Ok(0)
        }
        Err(RenewError::Lost(why)) => Err(Error::Lost(format!(
            "{} is not held with this token any more: {why}",
            locker.name()
        ))),
        Err(RenewError::Failed(e)) => Err(e),
    }
}

/// `--release`: delete the lock where it holds the token; masters out of
/// reach are asked again (a compare-and-delete: a node frees a token once,
/// so the frees of every attempt add up).
async fn release(locker: &mut Locker, token: &Token, patience: &mut Patience) -> Result<i32> {
    let wanted = format!("a majority of the masters of {}", locker.name());
    let (n, m) = (locker.masters(), locker.majority());
    let mut freed = 0;
    let released = patience
        .retry(&wanted, async |_| {
            let mut released = locker.release(token).await;
            freed += released.freed;
            released.freed = freed;
            match released.verdict(m) {
                // The masters that did not answer may hold it: we cannot tell.
                ReleaseVerdict::Unknown { silent } => Err(Error::Unavailable(format!(
                    "{}: released on {} of {n} masters; {silent} did not answer: {}",
                    locker.name(),
                    released.freed,
                    released.problems.join("; ")
                ))),
                _ => Ok(released),
            }
        })
        .await?;
    match released.verdict(m) {
        ReleaseVerdict::Freed => {
            log::info!(
                "{}: released on {} of {n} masters",
                locker.name(),
                released.freed
            );
            Ok(0)
        }
        ReleaseVerdict::Unknown { .. } => unreachable!("waited out above"),
        ReleaseVerdict::NotHeld => Err(Error::Lost(format!(
            "{} was not held with this token (it expired, or was taken); freed on {} of {n} \
             masters, nothing of another holder was touched",
            locker.name(),
            released.freed
        ))),
    }
}

/// `--info`: JSON on stdout; 69 when fewer than a majority answered by
/// the bound (what the last look saw is printed all the same).
async fn info(locker: &mut Locker, patience: &mut Patience) -> Result<i32> {
    let wanted = format!("a majority of the masters of {}", locker.name());
    let mut last = None;
    let answered = patience
        .retry(&wanted, async |_| {
            let info = locker.inspect().await;
            let short = (info.answered < info.majority).then(|| {
                let problems: Vec<String> =
                    info.nodes.iter().filter_map(|n| n.error.clone()).collect();
                Error::Unavailable(format!(
                    "only {} of {} masters answered: {}",
                    info.answered,
                    info.masters,
                    problems.join("; ")
                ))
            });
            last = Some(info);
            short.map_or(Ok(()), Err)
        })
        .await;
    if let Some(info) = last {
        let text = serde_json::to_string_pretty(&info).map_err(|e| Error::Output(e.to_string()))?;
        crate::stdout::write_stdout((text + "\n").as_bytes())?;
    }
    answered.map(|()| 0)
}

/// A word the shell reads back as `s`: as is when it is plainly safe,
/// otherwise in single quotes.
fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:/@%+=,".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("deploy"), "deploy");
        assert_eq!(
            shell_quote("yaraus:ab12:1:2:host.x"),
            "yaraus:ab12:1:2:host.x"
        );
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
