//! Help a person can read: `-h` a summary that fits a screen, `--help` the
//! long form with the connection options under their own heading and the
//! subcommand's own exit table, one meaning per short flag, and no stray
//! `=` after an environment variable's name.

use super::*;

/// Every subcommand, as the words after `yaraus`.
const SUBCOMMANDS: &[&[&str]] = &[
    &[],
    &["init"],
    &["run"],
    &["stats"],
    &["list"],
    &["lock"],
    &["seq"],
    &["seq", "next"],
    &["seq", "get"],
    &["seq", "set-floor"],
    &["seq", "serve"],
    &["index"],
    &["hilo"],
    &["hilo", "agent"],
    &["hilo", "next"],
    &["hilo", "status"],
    &["acl-rules"],
    &["completions"],
];

/// Lines of a screen, with room for the prompt.
const SCREEN: usize = 55;

fn help(words: &[&str], flag: &str) -> String {
    let args: Vec<&str> = words.iter().copied().chain([flag]).collect();
    let out = yaraus(&args);
    assert_eq!(out.code, Some(0), "yaraus {args:?}: {out:#?}");
    out.stdout
}

#[test]
fn short_help_fits_a_screen_and_long_help_has_the_connection_options_apart() {
    for words in SUBCOMMANDS {
        let short = help(words, "-h");
        let long = help(words, "--help");
        let lines = short.lines().count();
        assert!(
            lines <= SCREEN,
            "yaraus {words:?} -h: {lines} lines:\n{short}"
        );
        assert!(!short.contains("--tls-ca"), "yaraus {words:?} -h:\n{short}");
        assert!(
            short.contains("--help shows"),
            "yaraus {words:?} -h:\n{short}"
        );
        let heading = long.find("Connection options:");
        let tls = long.find("--tls-ca");
        assert!(
            heading.is_some() && tls > heading,
            "yaraus {words:?} --help: no connection heading above --tls-ca:\n{long}"
        );
        for text in [&short, &long] {
            assert!(
                !text.contains("=]"),
                "yaraus {words:?}: a stray '=':\n{text}"
            );
        }
    }
}

#[test]
fn each_subcommand_shows_its_own_exit_table() {
    for words in [
        &["init"][..],
        &["stats"],
        &["list"],
        &["acl-rules"],
        &["completions"],
    ] {
        let long = help(words, "--help");
        assert!(long.contains("Exit status:"), "yaraus {words:?}:\n{long}");
        for runs_only in ["COMMAND's own exit status", "the command's own", "124"] {
            assert!(
                !long.contains(runs_only),
                "yaraus {words:?} --help shows run's table ({runs_only}):\n{long}"
            );
        }
    }
    let top = help(&[], "--help");
    assert!(
        top.lines().any(|l| l.trim_start().starts_with("1 ")),
        "yaraus --help does not list exit status 1:\n{top}"
    );
    let agent = help(&["hilo", "agent"], "-h");
    assert!(agent.contains("-w, --wait"), "{agent}");
}

#[test]
fn count_is_not_c_which_is_lock_s_command() {
    for words in [&["seq", "next"][..], &["hilo", "next"]] {
        let long = help(words, "--help");
        assert!(long.contains("--count"), "{long}");
        assert!(!long.contains("-c, --count"), "yaraus {words:?}:\n{long}");
    }
}
