//! The man pages under `man/`, one per command (`yaraus.1`,
//! `yaraus-seq-next.1`), generated from the clap definitions
//! ([`render`]) and checked in, so that a source tree without a Rust
//! toolchain still has them. The tests here regenerate them and fail when
//! the checked-in copies are stale, when a page lacks a section a man page
//! is read for (SYNOPSIS, EXIT STATUS, ENVIRONMENT, EXAMPLES, SEE ALSO), or
//! when man(1) warns of one; `YARAUS_UPDATE_MAN=1 cargo test --bin yaraus
//! man_pages` (or `scripts/gen-man.sh`) rewrites them.

mod render;

use clap::{Command, CommandFactory};
use std::collections::BTreeMap;
use std::path::Path;

/// Every page, by file name, from the definitions as the parser has them.
fn generate() -> BTreeMap<String, String> {
    // The crate's version alone: the commit in `--version` would make the
    // checked-in pages stale at every commit. What `-h` leaves out is
    // shown: a page has room for every option's text.
    let mut root = unhide_short_help(super::Cli::command())
        .version(env!("CARGO_PKG_VERSION"))
        .long_version(None::<&str>)
        .disable_help_subcommand(true);
    root.build();
    let mut pages = BTreeMap::new();
    walk(&root, &mut Vec::new(), &mut pages);
    pages
}

fn unhide_short_help(cmd: Command) -> Command {
    cmd.mut_args(|a| a.hide_short_help(false))
        .mut_subcommands(unhide_short_help)
}

fn walk<'a>(
    cmd: &'a Command,
    parents: &mut Vec<&'a Command>,
    pages: &mut BTreeMap<String, String>,
) {
    pages.insert(
        format!("{}.1", render::name(cmd)),
        render::page(cmd, parents),
    );
    parents.push(cmd);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        walk(sub, parents, pages);
    }
    parents.pop();
}

fn pages_in(dir: &Path) -> BTreeMap<String, String> {
    let mut pages = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "1") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            pages.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
    pages
}

fn man_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("man")
}

#[test]
fn man_pages_are_up_to_date() {
    let generated = generate();
    assert!(generated.contains_key("yaraus.1"));
    assert!(generated.contains_key("yaraus-run.1"));
    assert!(generated.contains_key("yaraus-seq-next.1"));

    let man_dir = man_dir();
    if std::env::var_os("YARAUS_UPDATE_MAN").is_some() {
        std::fs::create_dir_all(&man_dir).unwrap();
        for old in pages_in(&man_dir).keys() {
            std::fs::remove_file(man_dir.join(old)).unwrap();
        }
        for (name, text) in &generated {
            std::fs::write(man_dir.join(name), text).unwrap();
        }
        return;
    }
    let checked_in = pages_in(&man_dir);
    let stale: Vec<&String> = generated
        .keys()
        .chain(checked_in.keys())
        .filter(|name| generated.get(*name) != checked_in.get(*name))
        .collect();
    assert!(
        stale.is_empty(),
        "man pages are stale: {stale:?}; run scripts/gen-man.sh and commit man/"
    );
}

/// The lines of `page` under `.SH heading`, up to the next `.SH`; `None`
/// when it has no such section.
fn section<'a>(page: &'a str, heading: &str) -> Option<Vec<&'a str>> {
    let quoted = format!(".SH \"{heading}\"");
    let plain = format!(".SH {heading}");
    let mut lines = page.lines();
    lines.find(|l| *l == quoted || *l == plain)?;
    Some(lines.take_while(|l| !l.starts_with(".SH")).collect())
}

/// The root command and every visible subcommand, with its page's name
/// (`yaraus-seq-next`).
fn every_command() -> Vec<(clap::Command, String)> {
    let mut root = super::Cli::command().disable_help_subcommand(true);
    root.build();
    let mut commands = vec![(root.clone(), "yaraus".to_string())];
    let mut i = 0;
    while i < commands.len() {
        let (cmd, name) = commands[i].clone();
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            commands.push((sub.clone(), format!("{name}-{}", sub.get_name())));
        }
        i += 1;
    }
    commands
}

/// Every checked-in page has the sections a man page is read for, each
/// filled from its source: the synopsis shows option values, the exit table is the one
/// `--help` shows, every variable of the command's options is listed.
#[test]
fn man_pages_have_their_sections() {
    // The checked-in pages, which man_pages_are_up_to_date holds to the
    // definitions: they are what a reader gets.
    let commands = every_command();
    let pages = pages_in(&man_dir());
    assert_eq!(pages.len(), commands.len(), "{:?}", pages.keys());
    for (cmd, name) in &commands {
        let page = &pages[&format!("{name}.1")];
        has_every_section(name, page);
        synopsis_shows_values(cmd, name, page);
        exit_status_is_the_help_table(cmd, name, page);
        environment_lists_every_variable(cmd, name, page);
        let see_also = section(page, "SEE ALSO").unwrap().join("\n");
        assert!(see_also.contains("(1)"), "{name}.1:\n{see_also}");
    }
}

fn has_every_section(name: &str, page: &str) {
    for heading in [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "OPTIONS",
        "EXIT STATUS",
        "ENVIRONMENT",
        "EXAMPLES",
        "SEE ALSO",
    ] {
        let lines = section(page, heading)
            .unwrap_or_else(|| panic!("{name}.1 has no {heading} section:\n{page}"));
        assert!(
            lines.iter().any(|l| !l.starts_with('.')),
            "{name}.1: {heading} is empty"
        );
    }
    assert!(section(page, "EXTRA").is_none(), "{name}.1 has an EXTRA");
}

/// Each option that takes a value shows it: `--ttl DURATION`; a hidden
/// one (for tests) is not shown at all.
fn synopsis_shows_values(cmd: &clap::Command, name: &str, page: &str) {
    let synopsis = section(page, "SYNOPSIS").unwrap().join("\n");
    for arg in cmd.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        let shown = format!("\\-\\-{}", long.replace('-', "\\-"));
        if arg.is_hide_set() {
            assert!(!page.contains(&shown), "{name}.1 shows the hidden --{long}");
            continue;
        }
        if arg.get_help_heading().is_some() || !arg.get_action().takes_values() {
            continue;
        }
        let with_value = format!("\\fB\\-\\-{}\\fR \\fI", long.replace('-', "\\-"));
        assert!(
            synopsis.contains(&with_value),
            "{name}.1: the synopsis shows --{long} without its value:\n{synopsis}"
        );
    }
}

/// The exit table is the one --help shows, code by code.
fn exit_status_is_the_help_table(cmd: &clap::Command, name: &str, page: &str) {
    let exit = section(page, "EXIT STATUS").unwrap().join("\n");
    let table = cmd.get_after_long_help().unwrap().to_string();
    let codes: Vec<&str> = table
        .lines()
        .take_while(|l| !l.is_empty())
        .skip(1)
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert!(codes.contains(&"2"), "{name}: no exit table in:\n{table}");
    for code in codes {
        assert!(
            exit.contains(&format!(".TP\n\\fB{code}\\fR\n")),
            "{name}.1: exit status {code} is missing:\n{exit}"
        );
    }
}

/// Every variable of its options, and the password's.
fn environment_lists_every_variable(cmd: &clap::Command, name: &str, page: &str) {
    let environment = section(page, "ENVIRONMENT").unwrap().join("\n");
    let vars = cmd
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|v| v.to_string_lossy().into_owned())
        .chain(["YARAUS_REDIS_PASSWORD".into(), "REDISCLI_AUTH".into()])
        .chain(
            super::command_env::of(cmd.get_name())
                .iter()
                .map(|(v, _)| v.to_string()),
        );
    for var in vars {
        assert!(
            environment.contains(&format!("\\fB{}\\fR", var.replace('-', "\\-"))),
            "{name}.1: {var} is not in ENVIRONMENT:\n{environment}"
        );
    }
}

/// man(1) formats every checked-in page without a warning, at the usual
/// width in the C locale and at a narrow one in UTF-8. man is a test tool
/// (scripts/install-test-tools.sh, Debian package man-db): without it this
/// fails, never skips.
#[test]
fn man_pages_format_without_warnings() {
    let pages = pages_in(&man_dir());
    assert!(pages.len() > 10, "{:?}", pages.keys());
    for name in pages.keys() {
        // The C locale has no glyph beyond ASCII (troff warns of one);
        // a narrow terminal leaves little room for a long word.
        for (locale, width) in [("C", "80"), ("C.UTF-8", "60")] {
            let out = std::process::Command::new("man")
                .args(["--warnings", "-l"])
                .arg(man_dir().join(name))
                .env("MANWIDTH", width)
                .env_remove("COLUMNS")
                .env("LC_ALL", locale)
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap_or_else(|e| {
                    panic!(
                        "cannot run man ({e}): the man pages are checked with `man --warnings`. \
                         Install it with scripts/install-test-tools.sh (Debian/Ubuntu package \
                         man-db)."
                    )
                });
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() && stderr.is_empty() && !out.stdout.is_empty(),
                "LC_ALL={locale} MANWIDTH={width} man --warnings -l man/{name}: {}\n{stderr}",
                out.status
            );
        }
    }
}
