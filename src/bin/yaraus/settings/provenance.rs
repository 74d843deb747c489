//! What a subcommand learns of the command line as a whole, beyond its own
//! parsed arguments: where a value came from (which clap's derive does not
//! keep), and the global log flags as `lock` reads them. Worked out once
//! from the matches, beside the other settings, so that no parsed argument
//! is patched after parsing.

use crate::cli::Cli;
use clap::ArgMatches;
use clap::parser::ValueSource;

/// How the command line asked, beyond the subcommand's arguments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Provenance {
    /// `--timeout` was typed (before the subcommand or after it), not its
    /// default: given to a waiting `lock` without `-w`, it was probably
    /// meant as the wait, and `lock` says what it bounds instead.
    pub timeout_typed: bool,
    /// `lock` says what went well (the lock taken, COMMAND started, the
    /// lock released): `-v`, or a level asked for by name. Without it a
    /// lock that was taken is silent, as flock is (cron mails whatever a
    /// job prints); waiting for a busy lock, giving up and losing the lock
    /// are always said.
    pub verbose: bool,
}

impl Provenance {
    /// Read from `matches`, the matches `cli` was parsed from.
    pub fn of(cli: &Cli, matches: &ArgMatches) -> Provenance {
        let typed = |m: &ArgMatches| m.value_source("timeout") == Some(ValueSource::CommandLine);
        let after_the_subcommand = matches.subcommand().is_some_and(|(_, sub)| typed(sub));
        Provenance {
            timeout_typed: typed(matches) || after_the_subcommand,
            verbose: cli.global.log.lock_verbose(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::FromArgMatches;

    fn of(args: &[&str]) -> Provenance {
        let matches = crate::cli::command().try_get_matches_from(args).unwrap();
        Provenance::of(&Cli::from_arg_matches(&matches).unwrap(), &matches)
    }

    #[test]
    fn a_timeout_typed_before_or_after_the_subcommand_is_seen_its_default_is_not() {
        assert!(of(&["yaraus", "--timeout", "1", "lock", "x", "--", "true"]).timeout_typed);
        assert!(of(&["yaraus", "lock", "x", "--timeout", "1", "--", "true"]).timeout_typed);
        assert!(!of(&["yaraus", "lock", "x", "--", "true"]).timeout_typed);
        assert!(of(&["yaraus", "-v", "lock", "x", "--", "true"]).verbose);
        assert!(of(&["yaraus", "lock", "x", "--log-level", "info", "--", "true"]).verbose);
    }
}
