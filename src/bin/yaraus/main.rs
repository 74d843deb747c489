//! The `yaraus` binary: parse, work the settings out once, dispatch, turn an
//! error into an exit status.
//!
//! Everything that knows about the command line lives here: the clap
//! definitions ([`cli`]), their turning into the library's settings
//! ([`settings`]), and one function per subcommand ([`commands`]), whose
//! output goes through [`stdout`]. The
//! library below speaks of settings, never of flags; [`cli::flag`] is how
//! its messages learn to name them.

mod cli;
mod commands;
mod logger;
mod settings;
mod stdout;

use cli::Cli;
use logger::EXIT_FLUSH;
use settings::Provenance;
use yaraus::error::{EXIT_SOFTWARE, EXIT_USAGE};
use yaraus::supervise::Watchdog;

fn main() {
    // Before anything catches a signal: one that was ignored when yaraus
    // started (nohup, a background job) stays ignored.
    yaraus::supervise::signals::ignored_at_start();
    // Messages of the library name settings by the flags that set them.
    yaraus::base::setting::name_settings(cli::flag);
    let (cli, provenance) = parse();
    // Forked now, while the process has a single thread: the watchdog is a
    // copy of this process that starts and guards the command.
    let watchdog = cli.runs_a_command().then(start_watchdog);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => fail(format_args!("cannot start: {e}"), EXIT_SOFTWARE),
    };
    let code = match runtime.block_on(commands::execute(cli, provenance, watchdog)) {
        Ok(code) => code,
        Err(e) => {
            // Queued after the lines still waiting, so that it comes last;
            // through the queue, so that a blocked stderr cannot hang the exit.
            logger::final_error(format_args!("{e}"), e.exit_code(), EXIT_FLUSH);
            e.exit_code()
        }
    };
    // Leave pending tasks (a stopped keeper's socket) behind without waiting.
    runtime.shutdown_background();
    // exit does not wait for the log's writer thread.
    logger::flush(EXIT_FLUSH);
    std::process::exit(code);
}

/// The command line, and how it asked ([`Provenance`]), or the exit for
/// help, version and usage errors; the log is set up as it asks before
/// anything is logged.
fn parse() -> (Cli, Provenance) {
    use clap::FromArgMatches;
    let matches = cli::command()
        .try_get_matches()
        .unwrap_or_else(|e| exit_on_parse_error(e));
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| exit_on_parse_error(e));
    let provenance = Provenance::of(&cli, &matches);
    configure_log(&cli, &matches);
    (cli, provenance)
}

/// The log's format and level, and the subcommand every JSON line names
/// (`seq serve`: the words as typed, up to the first that is not one).
fn configure_log(cli: &Cli, matches: &clap::ArgMatches) {
    let log = &cli.global.log;
    logger::set_format(log.log_format.into());
    let lock = matches!(cli.command, cli::Command::Lock(_));
    logger::install(log.level(lock));
    let mut words = Vec::new();
    let mut at = matches;
    while let Some((name, sub)) = at.subcommand() {
        words.push(name);
        at = sub;
    }
    logger::set_context("subcommand", words.join(" "));
}

/// The error that ends yaraus before it has done anything, in the log's
/// format, and the exit with `code`.
fn fail(msg: std::fmt::Arguments<'_>, code: i32) -> ! {
    logger::final_error(msg, code, EXIT_FLUSH);
    std::process::exit(code);
}

/// The watchdog process, or the exit if it cannot be started.
fn start_watchdog() -> Watchdog {
    Watchdog::start().unwrap_or_else(|e| fail(format_args!("{e}"), e.exit_code()))
}

/// Help and version go to stdout; any other parse error is one line on
/// stderr, as every other error is, and exit 2.
fn exit_on_parse_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        // clap's own exit() would report success whatever the write did.
        let code = match e.print() {
            Ok(()) => e.exit_code(),
            Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => e.exit_code(),
            Err(err) => fail(format_args!("cannot write to stdout: {err}"), EXIT_SOFTWARE),
        };
        std::process::exit(code);
    }
    logger::set_format(format_despite_the_error());
    fail(
        format_args!("{} (see yaraus --help)", one_line(&e)),
        EXIT_USAGE,
    );
}

/// The log format the command line asks for, read again leniently: a
/// usage error is said in JSON when `--log-format json` (or
/// `YARAUS_LOG_FORMAT=json`) was given, valid, beside the mistake. Text
/// when the format is itself the mistake.
fn format_despite_the_error() -> logger::Format {
    cli::command()
        .ignore_errors(true)
        .try_get_matches()
        .ok()
        .and_then(|m| m.get_one::<cli::LogFormat>("log_format").copied())
        .map_or(logger::Format::Text, Into::into)
}

/// clap's first line, without its "error: " prefix and the usage block that
/// follows; where it ends in a colon ("the following required arguments
/// were not provided:"), the names on the indented lines after it; for a
/// value not among those allowed, the allowed ones.
fn one_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty());
    let first = lines.next().unwrap_or("");
    let mut first = first.strip_prefix("error: ").unwrap_or(first).to_string();
    if first.ends_with(':') {
        let named: Vec<&str> = lines
            .take_while(|l| l.starts_with(' ') && !l.trim().is_empty())
            .map(str::trim)
            .collect();
        if !named.is_empty() {
            first = format!("{first} {}", named.join(", "));
        }
    } else if let Some(values) = lines.find_map(|l| l.trim().strip_prefix("[possible values: ")) {
        // A wrong word for a value: the right ones, on the same line.
        first = format!("{first} (one of: {}", values.replace(']', ")"));
    }
    first
}
