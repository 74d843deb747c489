//! One man page from one command's clap definition.
//!
//! clap_mangen renders what it renders well (the title, NAME, DESCRIPTION,
//! the options under their headings, the subcommands, VERSION); the rest is
//! written here, because its forms are not what a man page needs:
//!
//! * SYNOPSIS shows each option with its value (`--ttl DURATION`, where
//!   clap_mangen writes `[--ttl]`), the connection options, which every
//!   subcommand shares, as one `[connection options]`;
//! * EXIT STATUS and EXAMPLES are real sections, read from the text that
//!   `--help` shows after the options (cli/exit_status.rs, cli/examples.rs
//!   and each subcommand's own), where clap_mangen puts it all, verbatim,
//!   under EXTRA: one text for both, so they cannot drift apart;
//! * ENVIRONMENT lists the variables of the command's options and the
//!   password variables of settings/credentials.rs;
//! * SEE ALSO names the pages next to this one.
//!
//! Every page is set ragged right without hyphenation (`.ad l`, `.nh`, as
//! asciidoctor's pages are): a URL form longer than half a line cannot be
//! justified (troff warned "cannot adjust line"), and an option name must
//! not be split at its hyphens.

use crate::settings::credentials::PASSWORD_VARS;
use clap::{Arg, ArgAction, Command};
use clap_mangen::Man;
use roff::{Inline, Roff, bold, italic, roman};

/// What roff puts before every rendering; a page has it once.
const PREAMBLE: &str = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";

/// The heading of the options every subcommand shares (cli/mod.rs).
const CONNECTION: &str = crate::cli::CONNECTION;

/// The page of `cmd` (built, as a subcommand of `parents`, root first).
pub fn page(cmd: &Command, parents: &[&Command]) -> String {
    let version = env!("CARGO_PKG_VERSION");
    let man = Man::new(cmd.clone()).source(format!("yaraus {version}"));
    let after = AfterHelp::parse(
        &cmd.get_after_long_help()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    );
    let mut out = String::from(PREAMBLE);
    let mut add = |text: String| out.push_str(text.strip_prefix(PREAMBLE).unwrap_or(&text));
    add(rendered(|w| man.render_title(w)));
    add(".ad l\n.nh\n".to_string());
    add(rendered(|w| man.render_name_section(w)));
    add(rendered(|w| synopsis(cmd).to_writer(w)));
    add(rendered(|w| man.render_description_section(w)));
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        add(rendered(|w| man.render_options_section(w)));
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        add(rendered(|w| man.render_subcommands_section(w)));
    }
    add(rendered(|w| after.exit_status().to_writer(w)));
    add(rendered(|w| environment(cmd).to_writer(w)));
    add(rendered(|w| after.examples().to_writer(w)));
    add(rendered(|w| see_also(cmd, parents).to_writer(w)));
    add(rendered(|w| man.render_version_section(w)));
    breakable(&out)
}

/// `text` with break points (`\:`, which prints nothing) after the slashes
/// and commas of its long words: the URL forms of --redis are longer than
/// a line of an indented option, and troff, hyphenation off, could break
/// them nowhere ("can't break line").
fn breakable(text: &str) -> String {
    const LONG: usize = 30;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if line.starts_with('.') {
            out.push_str(line);
            continue;
        }
        for (i, word) in line.split(' ').enumerate() {
            if i > 0 {
                out.push(' ');
            }
            if word.chars().count() > LONG {
                out.push_str(&word.replace('/', "/\\:").replace(',', ",\\:"));
            } else {
                out.push_str(word);
            }
        }
    }
    out
}

/// What `render` writes, as text.
fn rendered(render: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>) -> String {
    let mut buf = Vec::new();
    render(&mut buf).expect("rendered into memory");
    String::from_utf8(buf).expect("roff is UTF-8")
}

/// The page's name: `yaraus`, `yaraus-seq-next`.
pub fn name(cmd: &Command) -> &str {
    cmd.get_display_name().unwrap_or_else(|| cmd.get_name())
}

/// `yaraus lock [-n|--no-wait] [--ttl DURATION] ... [connection options]
/// NAME [[--] COMMAND...]`.
fn synopsis(cmd: &Command) -> Roff {
    let mut line = vec![bold(cmd.get_bin_name().unwrap_or_else(|| cmd.get_name()))];
    let mut connection = false;
    for arg in cmd
        .get_arguments()
        .filter(|a| shown(a) && !a.is_positional())
    {
        if arg.get_help_heading() == Some(CONNECTION) {
            connection = true;
            continue;
        }
        line.push(roman(" "));
        line.extend(option(arg));
    }
    if connection {
        line.extend([roman(" ["), italic("connection options"), roman("]")]);
    }
    for arg in cmd.get_positionals().filter(|a| shown(a)) {
        let mut value = vec![italic(value_name(arg))];
        if arg.get_num_args().is_some_and(|n| n.max_values() > 1) {
            value.push(roman("..."));
        }
        if arg.is_trailing_var_arg_set() {
            value.splice(0..0, [roman("["), bold("--"), roman("] ")]);
        }
        line.push(roman(" "));
        line.extend(bracketed(!arg.is_required_set(), value));
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        line.push(roman(" "));
        let sub = vec![italic("SUBCOMMAND"), roman(" ...")];
        line.extend(bracketed(!cmd.is_subcommand_required_set(), sub));
    }
    let mut roff = Roff::new();
    roff.control("SH", ["SYNOPSIS"]).text(line);
    roff
}

/// Whether the synopsis shows `arg`: not help and version, which every
/// command has.
fn shown(arg: &Arg) -> bool {
    !arg.is_hide_set()
        && !matches!(
            arg.get_action(),
            ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
        )
}

/// `[-w|--wait DURATION]`, `--token TOKEN`, `[--format json|table]`.
fn option(arg: &Arg) -> Vec<Inline> {
    let mut names = Vec::new();
    if let Some(short) = arg.get_short() {
        names.push(bold(format!("-{short}")));
    }
    if let Some(long) = arg.get_long() {
        if !names.is_empty() {
            names.push(roman("|"));
        }
        names.push(bold(format!("--{long}")));
    }
    if arg.get_action().takes_values() {
        names.extend([roman(" "), italic(value_name(arg))]);
    }
    let repeated = matches!(arg.get_action(), ArgAction::Append | ArgAction::Count);
    let mut inline = bracketed(!arg.is_required_set(), names);
    if repeated {
        inline.push(roman("..."));
    }
    inline
}

/// What an option takes: its possible values (`json|table`), a few at
/// most (a longer list is the OPTIONS section's to give), else its value
/// name (`DURATION`, `SHELL`).
fn value_name(arg: &Arg) -> String {
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|p| !p.is_hide_set())
        .map(|p| p.get_name().to_string())
        .collect();
    if !possible.is_empty() && !arg.is_hide_possible_values_set() && possible.len() <= 4 {
        return possible.join("|");
    }
    match arg.get_value_names() {
        Some(names) => names
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        None => arg.get_id().as_str().to_uppercase(),
    }
}

fn bracketed(optional: bool, mut inline: Vec<Inline>) -> Vec<Inline> {
    if optional {
        inline.insert(0, roman("["));
        inline.push(roman("]"));
    }
    inline
}

/// What `--help` shows after the options, in its parts: the exit table's
/// rows (`0..123`, its meaning), the paragraphs that follow it
/// ("Waiting: ..."), and the examples.
#[derive(Default)]
struct AfterHelp {
    exit_rows: Vec<(String, String)>,
    notes: Vec<String>,
    examples: Vec<String>,
}

impl AfterHelp {
    /// Blocks apart by a blank line: `Exit status...:` then rows indented
    /// two spaces (a meaning's further lines indented more), `Examples:`
    /// then one command a line, anything else a paragraph.
    fn parse(text: &str) -> AfterHelp {
        let mut parts = AfterHelp::default();
        for block in text.split("\n\n") {
            let mut lines = block.lines();
            let head = lines.next().unwrap_or_default();
            if head.starts_with("Exit status") {
                // `Exit status (each subcommand's --help has its own):`
                if let Some(aside) = head
                    .strip_prefix("Exit status (")
                    .and_then(|a| a.strip_suffix("):"))
                {
                    let mut chars = aside.chars();
                    let first = chars.next().map(|c| c.to_uppercase().to_string());
                    parts
                        .notes
                        .push(format!("{}{}.", first.unwrap_or_default(), chars.as_str()));
                }
                for line in lines {
                    let continued = line.starts_with("   ");
                    match (continued, parts.exit_rows.last_mut()) {
                        (true, Some((_, meaning))) => {
                            meaning.push(' ');
                            meaning.push_str(line.trim());
                        }
                        _ => {
                            let (code, meaning) = line.trim().split_once(' ').unwrap_or((line, ""));
                            parts.exit_rows.push((code.into(), meaning.trim().into()));
                        }
                    }
                }
            } else if head == "Examples:" {
                parts.examples.extend(lines.map(|l| l.trim().to_string()));
            } else {
                let words: Vec<&str> = block.split_whitespace().collect();
                parts.notes.push(words.join(" "));
            }
        }
        parts
    }

    fn exit_status(&self) -> Roff {
        let mut roff = Roff::new();
        roff.control("SH", ["EXIT STATUS"]);
        for (code, meaning) in &self.exit_rows {
            roff.control("TP", [])
                .text([bold(code)])
                .text([roman(meaning)]);
        }
        for note in &self.notes {
            roff.control("PP", []).text([roman(note)]);
        }
        roff
    }

    /// One example a paragraph, its comment on the line below.
    fn examples(&self) -> Roff {
        let mut roff = Roff::new();
        roff.control("SH", ["EXAMPLES"]);
        for example in &self.examples {
            let (command, comment) = match example.split_once("  #") {
                Some((command, comment)) => (command.trim_end(), Some(comment.trim())),
                None => (example.as_str(), None),
            };
            roff.control("PP", [])
                .control("RS", ["4"])
                .text([bold(command)]);
            if let Some(comment) = comment {
                roff.control("br", []).text([roman(format!("# {comment}"))]);
            }
            roff.control("RE", []);
        }
        roff
    }
}

/// The variables that set the command's options, the password's, and
/// those COMMAND gets (cli/command_env.rs).
fn environment(cmd: &Command) -> Roff {
    let mut vars: Vec<(String, Vec<Inline>)> = Vec::new();
    for arg in cmd.get_arguments() {
        let (Some(var), Some(long)) = (arg.get_env(), arg.get_long()) else {
            continue;
        };
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        vars.push((
            var.to_string_lossy().into_owned(),
            vec![
                roman("Sets "),
                bold(format!("--{long}")),
                roman(format!(": {help}")),
            ],
        ));
    }
    if cmd.get_arguments().any(|a| a.get_id() == "redis") {
        for (var, what) in PASSWORD_VARS {
            vars.push((var.to_string(), vec![roman(*what)]));
        }
    }
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    let mut roff = Roff::new();
    roff.control("SH", ["ENVIRONMENT"]);
    let mut intro = String::from("An option given on the command line wins over its variable.");
    if cmd.get_arguments().any(|a| a.get_id() == "pass_env") {
        intro.push_str(
            " The variables that carry a credential are removed from the environment of \
             COMMAND, unless --pass-env names them.",
        );
    }
    roff.text([roman(intro)]);
    for (var, what) in vars {
        roff.control("TP", []).text([bold(var)]).text(what);
    }
    let set = crate::cli::command_env::of(cmd.get_name());
    if !set.is_empty() {
        roff.control("PP", [])
            .text([roman("COMMAND gets, besides the environment it inherits:")]);
        for (var, what) in set {
            roff.control("TP", [])
                .text([bold(*var)])
                .text([roman(*what)]);
        }
    }
    roff
}

/// The parent's page, the sub-pages, the siblings of a second-level page,
/// and the tools a page stands in for or works with.
fn see_also(cmd: &Command, parents: &[&Command]) -> Roff {
    let mut names: Vec<String> = parents.iter().map(|p| name(p).to_string()).collect();
    let subs = |c: &Command| -> Vec<String> {
        c.get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| name(s).to_string())
            .collect()
    };
    names.extend(subs(cmd));
    if parents.len() > 1 {
        let siblings = subs(parents[parents.len() - 1]);
        names.extend(siblings.into_iter().filter(|s| s != name(cmd)));
    }
    let mut pages: Vec<String> = names.iter().map(|n| format!("{n}(1)")).collect();
    pages.extend(
        match name(cmd) {
            "yaraus" | "yaraus-acl-rules" => &["redis-cli(1)"][..],
            "yaraus-lock" => &["flock(1)", "redis-cli(1)"],
            "yaraus-seq-serve" => &["redis-cli(1)", "redis-benchmark(1)"],
            _ => &[],
        }
        .iter()
        .map(|p| p.to_string()),
    );
    let mut line = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        let (title, section) = page.split_once('(').expect("NAME(1)");
        if i > 0 {
            line.push(roman(", "));
        }
        line.extend([bold(title), roman(format!("({section}"))]);
    }
    let mut roff = Roff::new();
    roff.control("SH", ["SEE ALSO"]).text(line);
    roff.control("PP", []).text([roman(
        "README.md and docs/ in the source tree: the design, what each guarantee rests on, \
         and the tests that check it.",
    )]);
    roff
}
